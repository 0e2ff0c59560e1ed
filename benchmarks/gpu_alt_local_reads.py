"""ALT_PATCH for gpu_device_boot.sh: four pages read locally at once instead of two (LOCAL_READS_AT_ONCE), for an
A/B on a host of many cores, where the local readings paced vLLM (docs/gpu.md, the H100 boots). Run inside the
copy of src/ it edits."""

from gpu_alt_edit import replace_in

replace_in("comic_narrator/flow/executor.py", "LOCAL_READS_AT_ONCE = 2\n", "LOCAL_READS_AT_ONCE = 4\n")
