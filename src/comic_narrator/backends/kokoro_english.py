"""Kokoro's English speakers: the style files shipped from kokoro-js, their grades, espeak phonemes as it fixes them.

The 28 styles and the grades come from the npm package kokoro-js 1.2.1 (Apache-2.0); ``assets/kokoro_en/NOTICE.md``
says where from and how to refresh them. Nothing here downloads: a missing file is an error naming the file.
"""

from __future__ import annotations

import json
import re
from functools import cache
from pathlib import Path
from typing import Any

import numpy as np

from comic_narrator.backends.espeak_g2p import phonemize_sentences
from comic_narrator.errors import EngineError

STYLES_DIR = Path(__file__).resolve().parent.parent / "assets" / "kokoro_en"
STYLE_ROWS = 510
"""One 256-wide style vector per phoneme count (1..510), the same layout as the Japanese styles."""
STYLE_WIDTH = 256

Style = np.ndarray[Any, np.dtype[np.float32]]


def espeak_voice_for(style_name: str) -> str:
    """The espeak voice kokoro-js uses for a speaker: ``en`` (British) for b* speakers, else ``en-us``."""
    return "en" if style_name.startswith("b") else "en-us"


def english_style_names() -> list[str]:
    """The shipped English speakers (``af_heart``, ``bm_george``, ...), sorted."""
    return sorted(path.stem for path in STYLES_DIR.glob("[ab][fm]_*.bin"))


def load_english_style(name: str) -> Style:
    """One shipped style file as a (510, 1, 256) float32 array."""
    path = STYLES_DIR / f"{name}.bin"
    try:
        flat = np.fromfile(path, dtype="<f4")
    except OSError as exc:
        raise EngineError(f"the Kokoro English voice style {name!r} is missing from the package: {path}") from exc
    if flat.size != STYLE_ROWS * STYLE_WIDTH:
        raise EngineError(f"the Kokoro English voice style {path} has {flat.size} values, not {STYLE_ROWS}x256")
    return flat.astype(np.float32).reshape(STYLE_ROWS, 1, STYLE_WIDTH)


@cache
def english_grades() -> dict[str, str]:
    """kokoro-js's overall grade per English speaker (``{"af_heart": "A", ...}``); empty if the table is missing."""
    path = STYLES_DIR / "grades.json"
    try:
        table = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return {name: str(row["overall_grade"]) for name, row in table.get("voices", {}).items()}


# kokoro-js's fixes to espeak's IPA (dist/kokoro.js, phonemize()): symbols the model was not trained on become
# ones it was, and two of espeak's word-level habits are undone.
_FIXES: tuple[tuple[re.Pattern[str], str], ...] = (
    (re.compile("kəkˈoːɹoʊ"), "kˈoʊkəɹoʊ"),
    (re.compile("kəkˈɔːɹəʊ"), "kˈəʊkəɹəʊ"),
    (re.compile("ʲ"), "j"),
    (re.compile("r"), "ɹ"),
    (re.compile("x"), "k"),
    (re.compile("ɬ"), "l"),
    (re.compile(r"(?<=[a-zɹː])(?=hˈʌndɹɪd)"), " "),
    (re.compile(r' z(?=[;:,.!?¡¿—…"«»“” ]|$)'), "z"),
)
_US_NINETY = re.compile(r"(?<=nˈaɪn)ti(?!ː)")


def fix_espeak_ipa(ipa: str, espeak_voice: str) -> str:
    """espeak's IPA for one sentence, rewritten the way kokoro-js feeds it to the model."""
    for pattern, replacement in _FIXES:
        ipa = pattern.sub(replacement, ipa)
    if espeak_voice == "en-us":
        ipa = _US_NINETY.sub("di", ipa)  # American flapping, as Kokoro's US speakers were trained on
    return ipa.strip()


def english_phonemes(text: str, espeak_voice: str) -> list[str]:
    """Text -> one IPA string per sentence, for Kokoro's English speakers."""
    return [fix_espeak_ipa("".join(sentence), espeak_voice) for sentence in phonemize_sentences(text, espeak_voice)]
