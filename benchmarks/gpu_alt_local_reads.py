"""ALT_PATCH for gpu_device_boot.sh: four pages read locally at once instead of two (LOCAL_READS_AT_ONCE), for an
A/B on a host of many cores, where the local readings paced vLLM (docs/gpu.md, the H100 boots). Run inside the
copy of src/ it edits."""

from pathlib import Path

executor = Path("comic_narrator/flow/executor.py")
before = "LOCAL_READS_AT_ONCE = 2\n"
text = executor.read_text()
assert before in text, "flow/executor.py no longer sets LOCAL_READS_AT_ONCE as this patch expects"
executor.write_text(text.replace(before, "LOCAL_READS_AT_ONCE = 4\n"))
print("patched", executor)
