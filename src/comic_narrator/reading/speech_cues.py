"""What a Japanese line says about who says it: first-person pronoun, register, names it calls, a question."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

Register = Literal["polite", "blunt", "feminine"]
Pronoun = Literal["boku", "ore", "watashi", "atashi", "washi", "watakushi", "oira"]

# Sentence ends and words that mark how a Japanese line is said (its register), not what it says. Plain copula
# endings (だ, だよ, だな) count as blunt: they are a man's casual speech to an equal or below.
_FEMININE = re.compile(r"わ[!?！？…。ー〜]*$|わよ|わね|かしら|のよ[!?！？…。]*$|のね[!?！？…。]*$|あたし")
_REGISTER_MARKS: tuple[tuple[Register, re.Pattern[str]], ...] = (
    ("feminine", _FEMININE),
    ("polite", re.compile(r"です|ます|まし[たょ]|ません|でし[たょ]|下さい|ください|ございま")),
    (
        "blunt",
        re.compile(
            r"俺|オレ|おれ|お前|おまえ|てめ|貴様|ぞ[!?！？…。]*$|ぜ[!?！？…。]*$|じゃねえ|じゃねー|ねーよ|しろ[!！…。]*$"
            r"|かよ|だろ|んだよ|だ[!?！？…。]*$|だな|だよ|なー|なあ"
        ),
    ),
)

# A speaker keeps one way of saying "I" (a near-fixed trait of a character in Japanese fiction). Each spelling a
# letterer uses, hiragana, katakana and kanji. わし needs a word boundary of sorts: it is also inside other words
# (わしい as in 詳しい is kanji-led, so a hiragana-only match before it is excluded).
_PRONOUNS: tuple[tuple[Pronoun, re.Pattern[str]], ...] = (
    ("boku", re.compile(r"僕|ぼく|ボク")),
    ("ore", re.compile(r"俺|オレ|おれ(?![るろらりたてま])")),
    ("atashi", re.compile(r"あたし|アタシ")),
    ("watakushi", re.compile(r"わたくし|ワタクシ")),
    ("watashi", re.compile(r"私|わたし|ワタシ")),
    ("washi", re.compile(r"(?<![ぁ-ん])わし(?![ぁ-ん])|ワシ")),
    ("oira", re.compile(r"おいら|オイラ")),
)

# A name or title followed by an honorific, or a bare title said to someone: the line is said TO that person.
_HONORIFIC = r"(?:さん|さま|様|くん|君|ちゃん|先生|先輩|殿|氏)"
_TITLES = r"(?:先生|院長|部長|課長|社長|教授|博士|婦長|師長|隊長|船長|先輩|ドクター)"
_CALL = re.compile(rf"([一-龥ァ-ヴー]{{1,6}}){_HONORIFIC}|{_TITLES}")


# How spoken Japanese ends and narration does not: sentence-final particles (よ, な, ね, か, ぞ, ぜ, わ, さ), polite
# verb endings, a question or an exclamation. Narration ends on plain forms (だ, た, ない, のだ) or a dash.
_SPOKEN_END = re.compile(r"(?:[よなねかぞぜわさ]|です|ます|ください|下さい)[ー〜…‥.。・]*$|[!?！？][!?！？…‥.。]*$")


_SAID = re.compile(r"[ぁ-んァ-ヴ一-龥][よねなかぞぜわさ][ー〜…‥.。・!?！？]*$")
"""A word closed by a sentence-final particle: a sentence someone says, which a sound word never is."""


_KANJI_WITH_KANA = re.compile(r"[一-龥々][ぁ-ん]|[ぁ-ん][一-龥々]")
"""A kanji written beside hiragana (国の, この国, 夜だ): words with their inflections and particles, which sound
words, written in kana (ポタッ, ざわざわ) or as a lone kanji (轟), are not."""


def says_a_sentence(text: str) -> bool:
    """Whether Japanese lettering is a sentence somebody says rather than a sound word: it speaks politely (です,
    ます, 下さい), calls someone by name or title (牛田さん, 先生), writes words as a sentence does (a kanji
    beside hiragana: それがこの国の夜だ), or closes on a sentence-final particle after a word (スゴイな, 行くぞ).
    A sound word (ドドド, ガーン!!) does none of these."""
    stripped = text.strip()
    if speech_register(stripped) == "polite" or called_names(stripped) or _KANJI_WITH_KANA.search(stripped):
        return True
    return any(_closes_on_a_particle(part) for part in re.split(r"[!?！？…‥.。\s]+(?=\S)", stripped))


def _closes_on_a_particle(sentence: str) -> bool:
    """A sentence closed by a particle after a word, and no sound word that happens to end on one (ざわざわ, ぴか
    ぴか and ぐさ end on わ, か and さ): those repeat themselves or are two kana long, where a said sentence has a
    kanji or three letters or more (行くぞ, スゴイな)."""
    if not _SAID.search(sentence):
        return False
    letters = re.sub(r"[^ぁ-んァ-ヴ一-龥]", "", sentence)
    repeated = re.fullmatch(r"(.+?)\1+[っッー]?", letters) is not None
    return not repeated and (re.search(r"[一-龥]", letters) is not None or len(letters) >= 3)


_IN_PERSON = re.compile(
    r"僕|ぼく|ボク|俺|オレ|あたし|アタシ|おいら|オイラ|お前|おまえ|あなた|貴様|(?<![一-龥ァ-ヴ])君(?=[はがにをのも達た])"
)
"""A first- or second-person word (僕, 俺, あたし; お前, あなた, 君 said to someone; not 私, which is also 私立's)."""


def speaks_in_person(text: str) -> bool:
    """Whether Japanese lettering says "I" or "you" as a person does: a character speaking or thinking, which a
    narrator's caption does not."""
    return _IN_PERSON.search(text) is not None


def sounds_spoken(text: str) -> bool:
    """Whether a Japanese line ends the way speech does and narration does not (a balloon read as a caption)."""
    return bool(_SPOKEN_END.search(text.strip()))


@dataclass(frozen=True)
class LineCues:
    """The cues one line gives (all empty for a line that is not Japanese)."""

    register: Register | None = None
    pronoun: Pronoun | None = None
    calls: tuple[str, ...] = ()
    """Names or titles the line addresses or mentions with an honorific (``牛田``, ``先生``): not its speaker."""
    question: bool = False
    ending: str | None = None
    """How the line ends: its sentence-final particle (よ, な, ね, ...), else its last punctuation (…, !, ?)."""


_ENDING = re.compile(r"([よなねかぞぜわさのや])[ー〜…‥.。・!?！？]*$")


def line_ending(text: str) -> str | None:
    """The line's sentence-final particle, else the kind of punctuation it ends on; None for a bare word."""
    stripped = text.strip()
    found = _ENDING.search(stripped)
    if found:
        return found.group(1)
    for mark, kind in (("…‥.", "…"), ("!！", "!"), ("?？", "?"), ("―─-", "―")):
        if stripped and stripped[-1] in mark:
            return kind
    return None


def speech_register(text: str) -> Register | None:
    """How a Japanese line is said: polite (です/ます), blunt (俺/お前/ぞ/plain だ) or feminine (わ/かしら/のよ), by
    which marks it holds most of (feminine first: it rides on polite or plain speech); None for a line without
    marks or not in Japanese."""
    counts = {name: len(pattern.findall(text.strip())) for name, pattern in _REGISTER_MARKS}
    if counts["feminine"]:
        return "feminine"
    if counts["polite"] and counts["polite"] >= counts["blunt"]:
        return "polite"
    return "blunt" if counts["blunt"] else None


def first_person(text: str) -> Pronoun | None:
    """The first-person pronoun a line uses (the first one in it), or None."""
    found = [(m.start(), name) for name, pattern in _PRONOUNS for m in [pattern.search(text)] if m is not None]
    return min(found)[1] if found else None


def called_names(text: str) -> tuple[str, ...]:
    """Names and titles the line calls (牛田さん -> 牛田; 先生 and 院長 as themselves), in order, once each."""
    out: list[str] = []
    for m in _CALL.finditer(text):
        name = m.group(1) or m.group(0)
        if name not in out:
            out.append(name)
    return tuple(out)


_QUESTION = re.compile(r"[?？]$|(?<!と)か$")
"""A question mark, or a final か that is no list's とか (物体とか: "things like objects")."""
_PLAIN_LETTERS = 8
"""Letters (kana and kanji) a line without marks needs for its plain form (no です/ます) to count as blunt speech
rather than a fragment: said to an equal or below, as the blunt marks are."""


Gender = Literal["male", "female"]

_MALE_PRONOUNS: frozenset[Pronoun] = frozenset({"boku", "ore", "washi", "oira"})
_ROUGH = re.compile(r"お前|おまえ|てめ|貴様|[ぞぜ](?=[!?！？…‥。\s]|$)|じゃねえ|じゃねー|ねーよ")
"""Marks of a man's rough speech (not the plain forms a woman uses as well); ぞ and ぜ end a sentence anywhere in
the line."""


def speaker_gender(text: str) -> Gender | None:
    """What a Japanese line's words say of its speaker's gender: a man's "I" (僕, 俺, わし, おいら) or rough
    speech (お前, 貴様, ぞ or ぜ ending a sentence), or a woman's sentence ends (わ, かしら, のよ, あたし); None when
    it says neither or both. Fiction's speech is gendered far more than life's, and these are the marks a reader
    hears as such."""
    female = _FEMININE.search(text.strip()) is not None
    male = first_person(text) in _MALE_PRONOUNS or _ROUGH.search(text.strip()) is not None
    if female == male:
        return None
    return "female" if female else "male"


def line_cues(text: str) -> LineCues:
    stripped = text.strip().rstrip("…‥.。・ー〜―─- ")
    register = speech_register(text)
    if register is None and len(re.findall(r"[ぁ-んァ-ヴ一-龥]", text)) >= _PLAIN_LETTERS:
        register = "blunt"
    return LineCues(
        register=register,
        pronoun=first_person(text),
        calls=called_names(text),
        question=bool(_QUESTION.search(stripped)),
        ending=line_ending(text),
    )
