"""ALT_PATCH for gpu_device_boot.sh: 8 pages in flight to vLLM instead of 4 (LlmConfig.concurrency; the book's
characters then lag 8 pages behind the page read instead of 4), for an A/B of the LLM's pace on a GPU host. Run
inside the copy of src/ it edits."""

from gpu_alt_edit import replace_in

replace_in("comic_narrator/config.py", "    concurrency: int = 4\n", "    concurrency: int = 8\n")
