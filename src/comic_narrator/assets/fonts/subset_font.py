"""Makes ``NarratorSansJP-Bold.ttf``: Noto Sans JP Bold cut down to Latin, kana, JIS X 0208 symbols and JIS
level-1 and level-2 kanji, renamed as the SIL Open Font License asks of a modified font (section 3).

Run from the repository root after ``pip install fonttools`` (it is not needed to run comic-narrator)::

    cd /tmp && npm pack @expo-google-fonts/noto-sans-jp@0.4.3 && tar xzf expo-google-fonts-noto-sans-jp-0.4.3.tgz
    python src/comic_narrator/assets/fonts/subset_font.py /tmp/package/700Bold/NotoSansJP_700Bold.ttf

NOTICE.md beside this file says where the font came from and what was kept.
"""

from __future__ import annotations

import argparse
import contextlib
from pathlib import Path

from fontTools import subset
from fontTools.ttLib import TTFont

HERE = Path(__file__).resolve().parent
OUTPUT = HERE / "NarratorSansJP-Bold.ttf"
FAMILY = "Narrator Sans JP"

LATIN_RANGES = (
    (0x0020, 0x007E),  # ASCII
    (0x00A0, 0x017F),  # Latin-1 supplement and Latin Extended-A: the accented letters of European names
    (0x2010, 0x2027),  # dashes, quotes, ellipsis
    (0x2030, 0x203B),
    (0x20AC, 0x20AC),  # euro sign
    (0x2122, 0x2122),
)
JAPANESE_RANGES = (
    (0x3000, 0x303F),  # CJK symbols and punctuation
    (0x3040, 0x309F),  # hiragana
    (0x30A0, 0x30FF),  # katakana
    (0xFF01, 0xFF9F),  # full-width forms and half-width katakana
)
JIS_ROWS = (*range(1, 9), *range(16, 85))
"""JIS X 0208 rows (ku): 1-8 symbols, digits, Latin, kana, Greek, Cyrillic, box drawing; 16-47 level-1 kanji
(2,965 characters, the ones in everyday print) and 48-84 level-2 kanji (3,390: names, rarer words, the 鬱 of
manga lettering)."""


def jis_characters() -> set[str]:
    """Every character of the JIS X 0208 rows above, through EUC-JP (row r, cell c is bytes 0xA0+r, 0xA0+c)."""
    found = set()
    for row in JIS_ROWS:
        for cell in range(1, 95):
            with contextlib.suppress(UnicodeDecodeError):  # an unassigned cell
                found.add(bytes([0xA0 + row, 0xA0 + cell]).decode("euc_jp"))
    return found


def wanted_codepoints() -> set[int]:
    points = {ord(char) for char in jis_characters()}
    for low, high in (*LATIN_RANGES, *JAPANESE_RANGES):
        points.update(range(low, high + 1))
    return points


def rename(font: TTFont) -> None:
    """The family renamed in every name record that carries it (OFL section 3: a modified font does not keep the
    original's names); the copyright and licence records are kept."""
    names = font["name"]
    for record in names.names:
        if record.nameID in (1, 16):
            record.string = FAMILY
        elif record.nameID in (3, 4):
            record.string = f"{FAMILY} Bold"
        elif record.nameID == 6:
            record.string = FAMILY.replace(" ", "") + "-Bold"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("source", type=Path, help="NotoSansJP_700Bold.ttf from the npm package")
    args = parser.parse_args()
    options = subset.Options()
    options.layout_features = ["kern", "liga", "vert", "vrt2", "palt", "locl"]
    options.name_IDs = ["*"]
    options.hinting = False  # drawn at subtitle sizes by FreeType's autohinter; hints are a third of the file
    font = TTFont(str(args.source))
    subsetter = subset.Subsetter(options)
    subsetter.populate(unicodes=sorted(wanted_codepoints()))
    subsetter.subset(font)
    rename(font)
    font.save(str(OUTPUT))
    print(f"{OUTPUT}: {OUTPUT.stat().st_size / 1e6:.2f} MB, {len(font.getBestCmap())} characters")


if __name__ == "__main__":
    main()
