"""ALT_PATCH for gpu_device_boot.sh: the book's last page cut into one piece fewer than the render workers (from four
workers up), so that the AAC encoder has a core of its own at the end. Run inside the copy of src/ it edits."""

from gpu_alt_edit import replace_in

replace_in(
    "comic_narrator/flow/stream.py",
    "work.render_pieces = worker_count(run.render)",
    "workers = worker_count(run.render); work.render_pieces = workers - 1 if workers >= 4 else workers",
)
