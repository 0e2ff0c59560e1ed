"""ALT_PATCH for gpu_device_boot.sh: the book's last page cut into one piece fewer than the render workers (from four
workers up), so that the AAC encoder has a core of its own at the end. Run inside the copy of src/ it edits."""

from pathlib import Path

stream = Path("comic_narrator/flow/stream.py")
before = "work.render_pieces = worker_count(run.render)"
after = "workers = worker_count(run.render); work.render_pieces = workers - 1 if workers >= 4 else workers"
text = stream.read_text()
assert before in text, "flow/stream.py no longer sets render_pieces as this patch expects"
stream.write_text(text.replace(before, after))
print("patched", stream)
