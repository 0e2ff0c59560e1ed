"""Build ``simplified_to_japanese.tsv``: Chinese simplified characters that Japanese never writes, each with the
Japanese form of the same character.

    pip download --no-deps opencc-python-reimplemented==0.1.7   # Apache-2.0; its dictionaries are OpenCC's
    python src/comic_narrator/assets/kanji/build_table.py opencc_python_reimplemented-0.1.7-py2.py3-none-any.whl

The recogniser reads Japanese with a model that also knows Chinese, and now and then returns a simplified glyph
for a Japanese kanji (损害赔償 for 損害賠償, 单価 for 単価): a Japanese voice cannot say it and the subtitles show
a character a Japanese reader does not use. A character is taken when it cannot be written in Shift_JIS (cp932,
every kanji Japanese text uses in practice): OpenCC's ``STCharacters.txt`` gives its traditional form (the first
listed) and ``JPVariants.txt`` that form's Japanese shinjitai where they differ; the result must be writable in
cp932. ``EXTRA`` adds characters whose traditional form is the simplified one but whose Japanese form is not.
"""

from __future__ import annotations

import sys
import zipfile
from pathlib import Path

EXTRA = {"查": "査"}
"""Simplified glyphs that traditional Chinese writes the same way, so OpenCC's table leaves them out, with the Japanese
kanji they stand for (查 and 査 are one character to a Chinese reader: 検査, 調査)."""


def _pairs(text: str) -> dict[str, str]:
    out: dict[str, str] = {}
    for line in text.splitlines():
        if "\t" not in line:
            continue
        source, targets = line.split("\t", 1)
        if len(source) == 1 and targets.split():
            out[source] = targets.split()[0]
    return out


def japanese(ch: str) -> bool:
    try:
        ch.encode("cp932")
    except UnicodeEncodeError:
        return False
    return True


def build(wheel: Path) -> dict[str, str]:
    with zipfile.ZipFile(wheel) as archive:
        to_traditional = _pairs(archive.read("opencc/dictionary/STCharacters.txt").decode("utf-8"))
        to_shinjitai = _pairs(archive.read("opencc/dictionary/JPVariants.txt").decode("utf-8"))
    table: dict[str, str] = {}
    for simplified, traditional in [*to_traditional.items(), *EXTRA.items()]:
        form = to_shinjitai.get(traditional, traditional)
        if not japanese(simplified) and len(form) == 1 and japanese(form):
            table[simplified] = form
    return table


def main() -> int:
    table = build(Path(sys.argv[1]))
    out = Path(__file__).with_name("simplified_to_japanese.tsv")
    out.write_text("".join(f"{s}\t{j}\n" for s, j in sorted(table.items())), encoding="utf-8")
    print(f"{out}: {len(table)} characters")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
