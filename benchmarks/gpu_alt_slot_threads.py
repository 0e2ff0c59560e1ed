"""ALT_PATCH for gpu_device_boot.sh: the LLM reader's pool back to one thread per slot (no threads for the local
readings beside them), for an A/B of flow/executor.py's read_workers on a GPU host. Run inside the copy of src/
it edits."""

from gpu_alt_edit import replace_in

replace_in(
    "comic_narrator/flow/executor.py",
    'run.llm.slots + LOCAL_READS_AT_ONCE if run.vision.vision == "llm"',
    'run.llm.slots if run.vision.vision == "llm"',
)
