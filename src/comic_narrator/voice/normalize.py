"""Text normalisation before synthesis: comic lettering (caps, interjections, stutters, sounds) to speakable text."""

from __future__ import annotations

import re
import unicodedata
from typing import Literal

from comic_narrator.artifacts import TextKind
from comic_narrator.voice.japanese_readings import respell_japanese
from comic_narrator.voice.numbers_en import numbers_to_words

INTERJECTIONS_EN: dict[str, str] = {
    # key: the word in lower case with every letter run collapsed to one letter (HMMM -> hm, SHHH -> sh)
    "hmph": "humph",
    "hmf": "humph",
    "hm": "hmm",
    "m": "hmm",
    "mh": "hmm",
    "mhm": "uh huh",
    "tch": "tsk",
    "tsk": "tsk",
    "ts": "tsk",
    "gr": "gurr",
    "grah": "grah",
    "argh": "argh",
    "agh": "argh",
    "ugh": "ugh",
    "sh": "shush",
    "z": "",
    "pft": "puft",
    "pf": "puff",
    "br": "burr",
    "bzt": "buzzt",
    "bz": "buzz",
    "krsh": "kursh",
    "vrm": "vroom",
    "thwk": "thwack",
    "whmp": "whump",
    "ngh": "ungh",
    "ng": "ungh",
    "hng": "ungh",
    "hngh": "ungh",
    "hn": "hun",
    "ah": "ah",
    "aha": "aha",
    "eh": "eh",
    "uh": "uh",
    "ow": "ow",
    "ek": "eek",
    "oh": "oh",
    "wha": "wha",
}
"""Comic interjections -> spellings espeak says as sounds (it spells vowel-less words letter by letter);
"" = not said at all (ZZZ)."""


_PUNCT_RUN = re.compile(r"[!?]{2,}")
_CAPS_WORD = re.compile(r"\b[A-Z]{2,}\b")
ACRONYMS = frozenset({"OK", "TV", "FBI", "CIA", "USA", "UK", "NASA", "DNA", "ID", "AI", "UFO", "DJ", "CEO"})
_WORD = re.compile(r"[A-Za-z][A-Za-z']*")
_STUTTER = re.compile(r"\b([A-Za-z]{1,3})-(?=\1)", re.IGNORECASE)
_REDUPLICATION = re.compile(r"\b([A-Za-z]{2,3})(?:-\1)+(?![-\w])", re.IGNORECASE)
_LETTER_RUN = re.compile(r"([A-Za-z])\1{2,}")
_ANY_RUN = re.compile(r"([a-z])\1+")
_VOWEL = re.compile(r"[aeiouy]")
_INITIALISM = re.compile(r"^(?:[A-Z]\.){2,}")
_BAD_ONSET = re.compile(r"^(?:([bfpv])w|([b-df-hj-np-tv-xz])\2)")


def _one_mark(match: re.Match[str]) -> str:
    """A run like ?!? keeps the question's rising intonation; !!! is one exclamation."""
    return "?" if "?" in match.group(0) else "!"


def _fix_word(word: str, kind: TextKind) -> str:
    """Interjection spellings and stretched letters (AAAAH -> ah, NOOOO -> noo, GRRRK -> gurk)."""
    lower = word.lower()
    single = _ANY_RUN.sub(lambda m: m.group(1), lower)
    if len(lower) >= 2 and single in INTERJECTIONS_EN:
        return INTERJECTIONS_EN[single]
    collapsed = _LETTER_RUN.sub(lambda m: m.group(1) * 2, lower)
    if not _VOWEL.search(lower) and (collapsed != lower or single != lower or kind == "sound") and len(single) > 1:
        # A vowel-less sound word would be spelled out: give it a vowel after its first letter (grrk -> gurk).
        return single[0] + "u" + single[1:]
    # Onsets English never starts a word with are spelled as a letter first (FWOOSH -> "F woosh"): drop one.
    onset = _BAD_ONSET.sub(lambda m: m.group(1) or m.group(2), collapsed)
    if onset != lower:
        return onset
    return word


def _decase(text: str) -> str:
    """All-caps lettering -> sentence case, so espeak does not spell words out as acronyms."""
    letters = [c for c in text if c.isalpha()]
    if not letters or sum(c.isupper() for c in letters) < 0.6 * len(letters):
        # Mixed lettering: only shouted words go lower case (espeak spells out vowel-less caps like HMPH).
        return _CAPS_WORD.sub(lambda m: m.group(0) if m.group(0) in ACRONYMS else m.group(0).lower(), text)
    out: list[str] = []
    start = True
    for word in re.split(r"(\s+)", text):
        # Dotted initialisms (A.B.C.) keep their capitals; everything else goes lower case.
        word = word if _INITIALISM.match(word) else word.lower()
        if start and any(c.isalpha() for c in word):
            idx = next(i for i, c in enumerate(word) if c.isalpha())
            word = word[:idx] + word[idx].upper() + word[idx + 1 :]
            start = False
        if re.search(r"[.!?]$", word) and not _INITIALISM.match(word):
            start = True
        out.append(word)
    result = "".join(out)
    return re.sub(r"\bi\b", "I", result)


TITLES_EN = {
    "mr": "Mister", "mrs": "Missus", "ms": "Miz", "dr": "Doctor", "prof": "Professor", "capt": "Captain",
    "sgt": "Sergeant", "lt": "Lieutenant", "col": "Colonel", "gen": "General", "gov": "Governor", "rev": "Reverend",
    "st": "Saint", "mt": "Mount", "jr": "Junior", "sr": "Senior",
}  # fmt: skip
"""Abbreviations said as words: the phonemiser expands Mr. to mister but keeps its full stop, which the voice says
as a sentence's end ("Mister. Smith")."""
_TITLE = re.compile(r"\b((?i:" + "|".join(TITLES_EN) + r"))\.(?=\s+[A-Z])")
"""A title before a name (the name's capital: "Baker St. is", "the dr. tomorrow" stay as they are)."""
_JUNIOR = re.compile(r"(?<=[A-Za-z])(,?\s)(jr|sr)\.", re.IGNORECASE)
_ABBREVIATIONS = (
    (re.compile(r"\bvs\.?(?=\s)", re.IGNORECASE), "versus"),
    (re.compile(r"\bno\.(?=\s*\d)", re.IGNORECASE), "number"),
    (re.compile(r"\bvol\.(?=\s*\d)", re.IGNORECASE), "volume"),
    (re.compile(r"\bch\.(?=\s*\d)", re.IGNORECASE), "chapter"),
)


def _expand_abbreviations(text: str) -> str:
    text = _TITLE.sub(lambda m: TITLES_EN[m.group(1).lower()], text)
    text = _JUNIOR.sub(lambda m: m.group(1) + TITLES_EN[m.group(2).lower()], text)
    for pattern, words in _ABBREVIATIONS:
        text = pattern.sub(words, text)
    return text


def _normalize_en(text: str, kind: TextKind) -> str:
    text = unicodedata.normalize("NFKC", text)
    text = "".join(ch for ch in text if unicodedata.category(ch) != "So")  # emoji, hearts, music notes
    text = text.replace("\u2019", "'").replace("\u2018", "'").replace("\u201c", '"').replace("\u201d", '"')
    text = re.sub(r"(?<=\w)-\s*\n\s*(?=\w)", "", text)  # hyphenated line breaks in balloons
    # A footnote's mark (demons*, "* See episode 8") or asterisks around an action (*sigh*) are not said: the voice
    # read them "asterisk".
    text = text.replace("*", " ")
    # A tilde stretches or sings a word (Ta~daa~~a!, Hello~): the voice read it "tilde". The word is said joined.
    text = re.sub(r"[~〜]+", "", text)
    text = re.sub(r"#\s?(?=\d)", "number ", text)  # #1: number one
    text = re.sub(r"\s+", " ", text).strip()
    text = _decase(text)
    text = _expand_abbreviations(text)
    text = re.sub(r"[\u2026]|\.{2,}", "…", text)
    text = re.sub(r"\s*[\u2014\u2013]+\s*|\s+-{1,2}\s+|-{2,}", ", ", text)
    # A laugh or a word said twice (Ha-ha-ha, tee-hee-hee, bye-bye) is said in one breath; only a start that
    # breaks off into its word (W-w-what, Wh-what, I-I) is a stammer.
    text = _REDUPLICATION.sub(lambda m: m.group(0).replace("-", " "), text)
    # Stutters: "W-w-what" -> "W... what" reads as a stammer rather than a spelled letter.
    while _STUTTER.search(text):
        text = _STUTTER.sub(lambda m: m.group(1) + "… ", text)
    text = numbers_to_words(text)
    text = _WORD.sub(lambda m: _fix_word(m.group(0), kind), text)
    text = _PUNCT_RUN.sub(_one_mark, text)
    text = re.sub(r"…+", "…", text)
    # A pause set apart by spaces ("A FRIEND OF MINE ... BESIDES") stays after its word, and so does a comma
    # (a witch , start: it was dropped, and the voice ran the two clauses together); only a line's leading pause
    # or comma, or one after other marks, goes.
    text = re.sub(r"(?<=\w)\s+([…,])", r"\1", text)
    text = re.sub(r",(?:\s*,)+", ",", text)
    text = re.sub(r"(^|\s)[,…]\s*", r"\1", text).strip()
    text = re.sub(r"\s+([,.!?…])", r"\1", text)
    if kind == "sound":
        text = text.rstrip(".!?… ")
        text = text + "!" if text else text
    if not any(ch.isalnum() for ch in text):
        return ""
    return text


def _normalize_ja(text: str, kind: TextKind) -> str:
    text = unicodedata.normalize("NFKC", text)
    text = re.sub(r"\s+", "", text)
    text = re.sub(r"[・･]{2,}|\.{2,}|…+", "…", text)
    text = re.sub(r"[ー〜~]{2,}", "ー", text)  # long stretched vowels
    text = _PUNCT_RUN.sub(_one_mark, text)
    text = re.sub(r"[―─—\-]{2,}", "、", text)
    text = re.sub(r"^[、…]+", "", text)
    if not any(unicodedata.category(ch)[0] in "LN" for ch in text):
        return ""
    return respell_japanese(text)


def normalize_for_speech(text: str, lang: Literal["en", "ja"], kind: TextKind) -> str:
    """Speakable text for a lettered line; "" when nothing in it can be said (a line of only punctuation)."""
    return _normalize_ja(text, kind) if lang == "ja" else _normalize_en(text, kind)
