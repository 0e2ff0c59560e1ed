"""ALT_PATCH for gpu_device_boot.sh: pages voiced one after another, as before VOICED_PAGES_AT_ONCE (each page's
lines wait for the last line of the page before), for an A/B against the tree in one boot. Run inside the copy of
src/ it edits."""

from pathlib import Path

stream = Path("comic_narrator/flow/stream.py")
before = "VOICED_PAGES_AT_ONCE = 2\n"
text = stream.read_text()
assert before in text, "flow/stream.py no longer sets VOICED_PAGES_AT_ONCE as this patch expects"
stream.write_text(text.replace(before, "VOICED_PAGES_AT_ONCE = 1\n"))
print("patched", stream)
