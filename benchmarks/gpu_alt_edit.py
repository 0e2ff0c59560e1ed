"""The one edit every ALT_PATCH for gpu_device_boot.sh makes: a line of a module in the copy of src/ it runs in,
replaced, failing loudly when the module no longer holds it."""

from pathlib import Path


def replace_in(module: str, before: str, after: str) -> None:
    path = Path(module)
    text = path.read_text()
    assert before in text, f"{module} no longer holds {before.strip()!r}, which this patch replaces"
    path.write_text(text.replace(before, after))
    print("patched", path)
