"""ALT_PATCH for gpu_device_boot.sh: the TTS client holds up to 8 requests per server instead of 4
(tts_server_concurrency), for an A/B where the voices sat at the client's bound in 37-43 % of their busy samples
(docs/gpu.md, the H100 boots). Run inside the copy of src/ it edits."""

from gpu_alt_edit import replace_in

replace_in("comic_narrator/config.py", "    tts_server_concurrency: int = 4\n", "    tts_server_concurrency: int = 8\n")
