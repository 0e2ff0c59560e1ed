"""What a text block says and what kind it is: joined lines, sentence case, speech/shout/caption/sound."""

from __future__ import annotations

import functools
import re
import statistics
from pathlib import Path

from comic_narrator.artifacts import TextKind
from comic_narrator.reading.bubbles import TextBlock, is_cjk, printed_lines
from comic_narrator.reading.geometry import union_box
from comic_narrator.reading.speech_cues import says_a_sentence

_WORD_HYPHEN = re.compile(r"[A-Za-z]{2}-$")
_SENTENCE_START = re.compile(r"(^|[.!?…]\s+|[.!?…][\"')\]]\s+)([a-z])")
_LONE_I = re.compile(r"\bi\b(?=('m|'ll|'ve|'d|\s|[.,!?;:…]|$))")
DRAWN_OUT = re.compile(r"(.)\1\1")
"""A letter said three times over (Wooosh, Aaah, Grrr): a noise drawn out, not a word."""
_REDUPLICATED = re.compile(
    r"([A-Za-z]{3,6}?|[^\W\dA-Za-z_]{2,6}?)(?:[\s,.!?~ー・…-]*\1)+[\s,.!?~ー・…！？-]*", re.IGNORECASE
)
"""One word said over and over (Gulp Gulp, Clap Clap, ドキドキ): a noise. Latin words of three letters or more, so
that "No no no" is not one."""
_TIGHT_PUNCTUATION = re.compile(r"([!?;:,])(?=[A-Za-z])")
_END_MARK = re.compile(r"fin|the end|end|to be continued|continued|つづく|続く|おわり|終わり|完|終")
_SIGN_WORDS = 4
"""Words a sign or a banner holds at most (School of Hippiah Witchcraft; a door plate, 誠同病院)."""
_BOARD_SOLIDITY = 0.95
"""A board's four straight sides make a solid outline. Of the 908 light regions around lettering measured (see
:func:`_sign_board`), seven read as lines were four-cornered at this solidity or more: the two boards, and five
balloons whose lines end with a mark or are Japanese."""
_SENTENCE_MARK = re.compile(r"[!?.,…]")
"""What ends or parts a sentence in English lettering: a board with none of these holds a name, not a line."""
_PAPER_FILL = 8.0
"""Lightness (0-255) by which a light region's median may sit below the page's paper and still be a balloon:
balloons measure 0-3 (the lettered Pepper&Carrot pages, ep. 17's own lettering, Black Jack, Buster Bear), the pale
skies, walls and banners around lettering painted on Pepper&Carrot pages 14-47."""


def block_text(block: TextBlock) -> str:
    """The lines of a block as one utterance: joined with spaces (none for Japanese), hyphenation undone."""
    parts: list[str] = []
    ruby = _ruby_columns(block)
    for index, line in enumerate(block.lines):
        if index in ruby:
            continue
        text = re.sub(r"\s+", " ", line.text).strip()
        if not text:
            continue
        if parts and _WORD_HYPHEN.search(parts[-1]) and text[:1].isalpha():
            parts[-1] = parts[-1][:-1] + text
            continue
        if parts and (is_cjk(parts[-1][-1:]) or is_cjk(text[:1])):
            parts[-1] = parts[-1] + text
            continue
        parts.append(text)
    joined = " ".join(parts)
    # OCR drops the space after tight punctuation ("EAMES!WE'VE", "LOOK,VEZIN"); speech synthesis needs it back.
    return _TIGHT_PUNCTUATION.sub(r"\1 ", joined) if not is_cjk(joined) else joined


def _ruby_columns(block: TextBlock) -> set[int]:
    """Furigana: kana-only vertical columns at most 60% as wide as the block's typical column, set right beside a
    full column and no taller than it. They gloss the kanji next to them; reading them too says it twice."""
    columns = [ln for ln in block.lines if ln.vertical]
    if len(columns) < 2 or len(columns) != len(block.lines):
        return set()
    typical = statistics.median(ln.bbox[2] for ln in columns)
    ruby: set[int] = set()
    for i, line in enumerate(block.lines):
        x, y, w, h = line.bbox
        kana_only = all(0x3040 <= ord(c) <= 0x30FF for c in line.text if not c.isspace())
        if w > 0.6 * typical or not kana_only:
            continue
        for other in block.lines:
            ox, oy, ow, oh = other.bbox
            beside = abs(x - (ox + ow)) <= 0.5 * w or abs(ox - (x + w)) <= 0.5 * w
            if other is not line and ow >= 0.8 * typical and beside and h <= oh and oy - w <= y <= oy + oh:
                ruby.add(i)
                break
    return ruby


# Greek and Cyrillic letters drawn like Latin ones: the multilingual recogniser sometimes picks them in English.
_LOOKALIKE_FROM = "АВЕКМНОРСТХаеорсухіїјкΑΒΕΗΙΚΜΝΟΡΤΥΧΖοαικνρτυχ"
_LOOKALIKE_TO = "ABEKMHOPCTXaeopcyxiijkABEHIKMNOPTYXZoaikvptux"
_HOMOGLYPHS = str.maketrans(dict(zip(_LOOKALIKE_FROM, _LOOKALIKE_TO, strict=True)))


def latin_lookalikes(text: str) -> str:
    """English lettering with Greek/Cyrillic look-alike letters replaced by the Latin letters they resemble."""
    return text.translate(_HOMOGLYPHS)


# A counter's カ after a number (3カ月, 三カ国) is the kanji 力 ("strength") to the recogniser, the two being drawn
# alike; said as written, "3力月" is "san chikara tsuki" (pyopenjtalk) where "3ヵ月" is "san kagetsu".
_COUNTER_KA = re.compile(r"(?<=[0-9０-９一二三四五六七八九十百何数])力(?=[月所国条])")


def counter_ka(text: str) -> str:
    """Japanese lettering with a number's counter ヵ (3ヵ月, 三ヵ国, 5ヵ所) put back where the recogniser read the
    look-alike kanji 力; 力 anywhere else (努力, 力月 with no number) stays."""
    return _COUNTER_KA.sub("ヵ", text)


KANJI_TABLE = Path(__file__).resolve().parents[1] / "assets" / "kanji" / "simplified_to_japanese.tsv"


@functools.cache
def _japanese_forms() -> dict[int, str]:
    pairs = (line.split("\t") for line in KANJI_TABLE.read_text(encoding="utf-8").splitlines() if "\t" in line)
    return {ord(simplified): kanji for simplified, kanji in pairs}


def japanese_forms(text: str) -> str:
    """Japanese lettering with each simplified Chinese glyph the recogniser returned (损, 单, 时: characters Japanese
    never writes) put back as the Japanese kanji it stands for (損, 単, 時); see assets/kanji/NOTICE.md."""
    return text.translate(_japanese_forms())


def is_all_caps(text: str) -> bool:
    letters = [c for c in text if c.isalpha() and c.isascii()]
    if len(letters) < 2:
        return False
    return sum(c.isupper() for c in letters) >= 0.8 * len(letters)


def sentence_case(text: str) -> str:
    """ALL-CAPS lettering as ordinary prose: lower case, capitals after sentence ends, the pronoun I."""
    lowered = text.lower()
    lowered = _LONE_I.sub("I", lowered)
    lowered = _SENTENCE_START.sub(lambda m: m.group(1) + m.group(2).upper(), lowered)
    return lowered


def page_letter_px(blocks: list[TextBlock]) -> float:
    """Typical letter size of the page's balloon lettering (median over lines inside balloons, else all)."""
    sizes = [ln.letter_px for b in blocks if b.bubble is not None for ln in b.lines]
    if not sizes:
        sizes = [ln.letter_px for b in blocks for ln in b.lines]
    return float(statistics.median(sizes)) if sizes else 0.0


def _left_aligned(block: TextBlock) -> bool:
    """Three or more horizontal lines that start at one x but end raggedly: a caption's narration. Balloon
    lettering is centred line by line."""
    lines = [ln for ln in block.lines if not ln.vertical]
    if len(lines) != len(block.lines):
        return False
    # A printed line the OCR found in pieces (a lone "I" apart from the rest) is measured whole.
    rows = [union_box(ln.bbox for ln in row) for row in printed_lines(lines)]
    if len(rows) < 3:
        return False
    lefts = [box[0] for box in rows]
    centres = [box[0] + box[2] / 2 for box in rows]
    letter = statistics.median(ln.letter_px for ln in lines)
    return statistics.pstdev(lefts) <= 0.35 * letter and statistics.pstdev(centres) >= 1.0 * letter


_KANJI_ONLY = re.compile(r"[\u4e00-\u9fff\u3400-\u4dbf々]{2,}")


def lettered_vertically(blocks: list[TextBlock], texts: list[str]) -> bool:
    """Most of the page's Japanese lettering runs in columns, as a manga's balloons and captions do."""
    japanese = [b for b, t in zip(blocks, texts, strict=True) if sum(is_cjk(c) for c in t) >= 2]
    columns = sum(any(ln.vertical for ln in b.lines) for b in japanese)
    return len(japanese) >= 3 and columns >= 0.6 * len(japanese)


def is_sign(block: TextBlock, text: str, page_vertical: bool) -> bool:
    """A sign drawn in the picture (a door plate, a hospital's name, a lamp that says 手術中): on a page lettered
    in columns (``page_vertical``: read right to left, or most of its lettering in columns), one level line of
    kanji alone, no kana and no punctuation. Nobody says it; the narrator may read it as a caption. (No line of
    the three annotated Black Jack chapters that somebody says is kanji alone.)"""
    if not page_vertical or len(block.lines) != 1 or block.lines[0].vertical:
        return False
    return _KANJI_ONLY.fullmatch(re.sub(r"\s+", "", text)) is not None and abs(block.lines[0].angle_deg) <= 5


def _sign_board(block: TextBlock, text: str) -> bool:
    """A board with four straight sides (posts or a window's edge keep it from filling its box as a caption box
    does) holding a few English words and no sentence: Buster Bear #10's "CHOLLY CHIPMUNK'S USED CARS" on its
    posts and the "$15000" card on a windscreen, both said in a character's voice. Of 908 light regions around
    lettering on 264 pages (Black Jack vol. 1, 197 lettered Pepper&Carrot pages, the corpus's golden-age and
    newspaper pages), only those two are four-cornered and solid without a mark that ends a sentence in English."""
    bubble = block.bubble
    if bubble is None or bubble.corners != 4 or bubble.solidity < _BOARD_SOLIDITY or is_cjk(text):
        return False
    return len(text.split()) <= _SIGN_WORDS and not _SENTENCE_MARK.search(text)


def classify(
    block: TextBlock,
    text: str,
    typical_letter_px: float,
    page_mixed_case: bool,
    near_top: bool = False,
    panel_wide: bool = False,
) -> TextKind:
    """speech / shout / caption / sound from the balloon shape, the lettering's size, tilt and wording.

    ``near_top``: the block sits in the top quarter of the page, where display lettering is a title.
    ``panel_wide``: the block spans most of its panel's width, as a caption strip does and a balloon does not."""
    if not re.search(r"[!?！？]", text) and _END_MARK.fullmatch(re.sub(r"[\W_]+", " ", text).strip().lower()):
        return "caption"  # the story's end mark (FIN, - FIN -, The End, つづく): the narrator's, whatever it sits in
    letter_px = max(ln.letter_px for ln in block.lines)
    tilted = any(abs(ln.angle_deg) > 12 and not ln.vertical for ln in block.lines)
    large = typical_letter_px > 0 and letter_px >= 1.7 * typical_letter_px
    letters = [c for c in text if c.isalnum()]
    short = len(letters) <= 14 and len(block.lines) <= 2
    bubble = block.bubble
    if bubble is None:
        sound_like = bool(DRAWN_OUT.search(text.lower())) or text.endswith(("!", "！"))
        # (a noise said over and over may be stacked, a word a line: Gulp / Gulp)
        reduplicated = _REDUPLICATED.fullmatch(text.strip()) is not None
        level = all(abs(ln.angle_deg) <= 5 or ln.vertical for ln in block.lines)
        if large and near_top and level and not sound_like and len(letters) >= 4:
            return "caption"  # a title ("THE SCREAMING SKULL"), for the narrator, not a noise
        noise = (sound_like and len(block.lines) == 1) or reduplicated
        if short and (tilted or large or noise) and not says_a_sentence(text):
            return "sound"  # (a sentence said, 事故です!!, is a balloon whose outline the reader missed)
        # Lettering on a light patch is a balloon whose outline is open (or merges with the gutter), unless it
        # is set flush left like the narration of a caption box.
        balloon_like = block.light_around >= 0.6 and not _left_aligned(block) and not panel_wide
        return "speech" if balloon_like else "caption"
    if bubble.boxy or _left_aligned(block) or _sign_board(block, text):
        return "caption"  # a caption box, flush-left narration, or a sign drawn in the art the narrator may read
    if bubble.fill_gap > _PAPER_FILL and not says_a_sentence(text):
        # A balloon is lettered on paper; a light region of the painted art that hugs lettering (a pale sky or
        # wall, a banner, a plate) is no balloon. Slanted or outsize lettering there is a sound drawn over the art
        # (or a poster at a slant), a few level words a sign: nobody's line, which the narrator may read.
        if tilted or large:
            return "sound"
        if len(text.split()) <= _SIGN_WORDS or panel_wide:
            # A few words are a sign; a strip of lettering across the panel is narration in a caption box of its
            # own colour (golden-age comics box it in yellow; one the title's colour runs into is no rectangle).
            return "caption"
    exclaims = "!" in text or "！" in text
    if bubble.solidity < 0.8 and exclaims:
        return "shout"
    big_letters = typical_letter_px > 0 and letter_px >= 1.35 * typical_letter_px
    if exclaims and (big_letters or (page_mixed_case and is_all_caps(text))):
        return "shout"
    return "speech"
