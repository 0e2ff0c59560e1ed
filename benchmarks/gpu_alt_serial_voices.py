"""ALT_PATCH for gpu_device_boot.sh: pages voiced one after another, as before VOICED_PAGES_AT_ONCE (each page's
lines wait for the last line of the page before), for an A/B against the tree in one boot. Run inside the copy of
src/ it edits."""

from gpu_alt_edit import replace_in

replace_in("comic_narrator/flow/stream.py", "VOICED_PAGES_AT_ONCE = 2\n", "VOICED_PAGES_AT_ONCE = 1\n")
