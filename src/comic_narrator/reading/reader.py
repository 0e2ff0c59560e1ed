"""The local page reader: panels, texts, kinds, order, direction and speakers of one page, and the book's language."""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import replace
from typing import Literal

import cv2
import numpy as np
import numpy.typing as npt

from comic_narrator.artifacts import BBox, PageImage, PageKind, PageReading, Panel, ReadingDirection, TextRegion
from comic_narrator.backends.protocols import CropRecognizer, OcrEngine
from comic_narrator.config import VisionConfig
from comic_narrator.reading.bubbles import TextBlock, group_lines, is_cjk, to_text_lines
from comic_narrator.reading.direction import reading_direction, script_language
from comic_narrator.reading.furniture import furniture_regions, split_furniture
from comic_narrator.reading.geometry import area_px2, centre, overlap_of_smaller, union_box
from comic_narrator.reading.insets import add_insets
from comic_narrator.reading.lettering import (
    block_text,
    classify,
    counter_ka,
    is_all_caps,
    is_sign,
    japanese_forms,
    latin_lookalikes,
    lettered_vertically,
    page_letter_px,
    sentence_case,
)
from comic_narrator.reading.lost_panels import lost_between_panels
from comic_narrator.reading.mute_balloons import mute_balloons
from comic_narrator.reading.order import reading_order, spread_aware_order
from comic_narrator.reading.page_kind import classify_page, is_blank
from comic_narrator.reading.panel_model import (
    colour_page_panels,
    detect_panels_in_strip,
    detect_panels_learned,
    is_colour_page,
    suits_model,
)
from comic_narrator.reading.panels import (
    DarkPaper,
    PageBackground,
    PanelParams,
    art_paper_luma,
    detect_panels,
    is_full_bleed,
    page_paper,
    paper_as_white,
    paper_inside_art,
    paper_levelled,
)
from comic_narrator.reading.speakers import Utterance, appearance_signature, cluster_utterances, speaker_anchor
from comic_narrator.reading.swallowed_lines import swallowed_lines

_OPEN_ROW_ART = 0.02
"""A row of the page holds art (for :func:`open_last_row`) when this share of it is not paper."""
_OPEN_ROW_MIN_HEIGHT = 0.4
"""An open last row is at least this share of the tallest panel's height ..."""
_OPEN_ROW_BELOW = 0.25
"""... and at least this share of it is art below the lowest balloon (a picture, not only lettering)."""
_STRIP_LINE_ART_PAPER = 0.3
"""A strip whose art holds at least this share of paper is line art (the stress set's newspaper strips 0.44 and
0.69; its painted and flat-coloured strips 0.09-0.24)."""


def read_page(
    image_rgb: npt.NDArray[np.uint8],
    page: PageImage,
    *,
    config: VisionConfig,
    manga_hint: bool | None,
    ocr: OcrEngine,
) -> PageReading:
    """Read one page: panels and texts in reading order, each text with its kind, words, speaker and panel."""
    image_rgb = _as_rgb(image_rgb)
    height_px, width_px = image_rgb.shape[:2]
    gray = np.asarray(cv2.cvtColor(image_rgb, cv2.COLOR_RGB2GRAY), dtype=np.uint8)
    if is_blank(gray):
        direction = reading_direction(config, page, manga_hint, None if config.lang == "auto" else config.lang)
        return PageReading(
            page=page.index,
            width=width_px,
            height=height_px,
            reading_direction=direction,
            page_kind="blank",
            panels=[],
            texts=[],
        )
    params = PanelParams()
    image_rgb, gray, background, dark = page_paper(image_rgb, gray, params)
    raw_panels = _find_panels(image_rgb, gray, params, background, config, dark)
    ocr_lang: Literal["en", "ja"] = config.lang if config.lang != "auto" else ("ja" if manga_hint else "en")
    lines = to_text_lines(ocr.recognize(image_rgb, ocr_lang), config.min_ocr_score)
    if isinstance(ocr, CropRecognizer):
        # A line of lettering the detector boxed with the display lettering it touches (a title) is read apart.
        lines += swallowed_lines(image_rgb, lines, ocr)
    lang = config.lang if config.lang != "auto" else (script_language([ln.text for ln in lines]) or ocr_lang)
    # Closed frames drawn over a big panel (insets on a splash) are panels of their own; lettering tells a
    # caption box from an inset, so this waits for the OCR.
    top_level = raw_panels
    paper_luma = art_paper_luma(background, dark)
    raw_panels, inset_parent = add_insets(gray, raw_panels, background.scale, paper_luma, [ln.bbox for ln in lines])
    blocks = group_lines(lines, gray, paper_luma, raw_panels)
    if isinstance(ocr, CropRecognizer):
        # Balloons holding only "!" or "…": the detector finds no line there; the recogniser reads a crop.
        blocks += mute_balloons(image_rgb, gray, paper_luma, raw_panels, lines, ocr)
    # Page numbers, credits, notices and watermarks are kept for the reading but stay out of the story's order.
    split = split_furniture(blocks, raw_panels, width_px, height_px)
    blocks = [b for b in split.story if not _is_stray_glyph(b) and not (lang == "ja" and _is_latin_misread(b))]
    last_row = open_last_row([p for i, p in enumerate(raw_panels) if i not in inset_parent], blocks, background)
    if last_row is not None:
        raw_panels = [*raw_panels, last_row]
    direction = reading_direction(config, page, manga_hint, lang)
    panels = [raw_panels[i] for i in spread_aware_order(raw_panels, inset_parent, direction, width_px, height_px)]
    # Insets do not make a cover or an ad a story page: the page kind is judged on the panels without them.
    page_kind: PageKind = (
        "credits"
        if split.credits_page
        else classify_page(top_level, blocks, width_px, height_px, is_full_bleed(background))
    )
    # A page where no panel was found is mostly paper: a title strip, a text page. Its loose print is nobody's
    # line, as on a cover (lettering in a real balloon still is).
    print_only = not panels
    if page_kind != "story" or print_only:
        # A cover, an ad, or a page without frames is shown (and narrated) as one picture.
        content = [*panels, *(b.bbox for b in blocks)]
        panels = [union_box(content) if content else (0, 0, width_px, height_px)]
    texts = [
        *_texts_in_order(image_rgb, blocks, panels, direction, lang, page_kind, print_only),
        *furniture_regions(split.furniture, panels, lang),
    ]
    return PageReading(
        page=page.index,
        width=width_px,
        height=height_px,
        reading_direction=direction,
        page_kind=page_kind,
        panels=[Panel(bbox=p) for p in panels],
        texts=texts,
    )


def follow_book_direction(
    reading: PageReading, book_lang: Literal["en", "ja"], config: VisionConfig, manga_hint: bool | None
) -> PageReading:
    """A page with no story lettering to tell its language by (a page number or a publisher's mark does not
    count) reads the way its book does. Read alone, a wordless page of a Japanese manga (an action sequence, a
    scene without words) has nothing to say it reads right to left and is read left to right; once the book's
    language is known to be Japanese it is read right to left, its panels ordered again and its texts (page
    numbers, letterless sounds) pointed at their panels' new places.

    Only when nothing else decided the direction: ``--layout auto``, ``--lang auto``, no ComicInfo manga flag, the
    local reader's reading. The page's own reading, as cached, is left as it is."""
    if (
        config.layout != "auto"
        or config.lang != "auto"
        or manga_hint is not None
        or book_lang != "ja"
        or reading.reading_direction != "ltr"
        or reading.vision != "local"
        or script_language([t.text for t in reading.texts if t.kind != "furniture"]) is not None
    ):
        return reading
    order = spread_aware_order([p.bbox for p in reading.panels], {}, "rtl", reading.width, reading.height)
    place = {old: new for new, old in enumerate(order)}
    texts = [t if t.panel < 0 else t.model_copy(update={"panel": place[t.panel]}) for t in reading.texts]
    # Lettering in panels by their new order (stable within a panel); the rest, and furniture, stay where they were.
    story = sorted((t for t in texts if t.panel >= 0 and t.kind != "furniture"), key=lambda t: t.panel)
    rest = [t for t in texts if t.panel < 0 or t.kind == "furniture"]
    return reading.model_copy(
        update={"reading_direction": "rtl", "panels": [reading.panels[i] for i in order], "texts": [*story, *rest]}
    )


def _find_panels(
    image_rgb: npt.NDArray[np.uint8],
    gray: npt.NDArray[np.uint8],
    params: PanelParams,
    background: PageBackground,
    config: VisionConfig,
    dark: DarkPaper | None = None,
) -> list[BBox]:
    """The learned segmenter where it applies and is installed, else the classical detector. Where the page's
    gutters are dark (``dark``: black or screentoned, which the segmenter learnt as white), it sees them white.

    A wide strip goes to the segmenter a window at a time when its art is painted or flat-coloured (little paper
    inside it: the classical detector's ruled lines are off there, so panels sharing a frame line merge), weighed
    against the classical boxes as a colour page's are; line art on newsprint keeps the classical detector, which
    reads it whole (the segmenter cut the real newspaper strips of the stress set into the wrong boxes).

    Whichever finds them, a panel both lost between two panels of a tier or a column is added
    (:func:`lost_between_panels`)."""
    height_px, width_px = gray.shape
    learned_too = config.panels != "classical" and suits_model(width_px, height_px)
    classical = detect_panels(image_rgb, replace(params, paper_seams=not learned_too), background)
    panels = classical
    if learned_too:
        # The classical boxes also tell the model's title band from a framed panel.
        colour = is_colour_page(image_rgb)
        learned = detect_panels_learned(paper_as_white(gray, dark), classical, painted=colour)
        if learned is not None:
            panels = (
                colour_page_panels(learned, classical, (width_px, height_px))
                if config.panels == "auto" and colour
                else learned
            )
    elif (
        config.panels != "classical"
        and width_px > height_px
        and (config.panels == "model" or paper_inside_art(background) < _STRIP_LINE_ART_PAPER)
    ):
        strip = detect_panels_in_strip(paper_levelled(gray, background))
        if strip is not None:
            panels = strip if config.panels == "model" else colour_page_panels(strip, classical)
    return panels + lost_between_panels(panels, background, width_px, height_px)


def book_language(readings: list[PageReading]) -> Literal["en", "ja"]:
    """The language most of the book's lettering is in (by characters of text read); 'en' with no text."""
    votes: Counter[str] = Counter()
    for reading in readings:
        for text in reading.texts:
            votes[text.lang] += len(text.text)
    return "ja" if votes["ja"] > votes["en"] else "en"


def _as_rgb(image: npt.NDArray[np.uint8]) -> npt.NDArray[np.uint8]:
    if image.ndim == 2:
        return np.ascontiguousarray(np.stack([image] * 3, axis=-1))
    if image.shape[2] == 4:
        return np.ascontiguousarray(image[:, :, :3])
    return np.ascontiguousarray(image)


ART_MARKS = frozenset("<>=≥≤≦≧≠＜＞＝|｜_＿")
"""Signs no balloon of speech is made of: with at most one letter beside them, the OCR read a drawing (a monitor's
trace, hatching, a gauge) as text: 'R≥===', '7<7', '=ジ' in Black Jack vol. 1."""


def _is_stray_glyph(block: TextBlock) -> bool:
    """Outside any balloon, one character or no letter at all: a circle or a stroke of the art read as 'O',
    a price tag or a date in the art ('$150', '.05'), not lettering to be read aloud. Anywhere, balloons
    included: at most one letter among signs of the art (ART_MARKS). A balloon holding only '!' or '…' is speech."""
    text = "".join(ln.text for ln in block.lines)
    letters = sum(c.isalpha() for c in text)
    if letters <= 1 and any(c in ART_MARKS for c in text):
        return True
    return block.bubble is None and (letters == 0 or sum(c.isalnum() for c in text) <= 1)


_LATIN_TOKEN = re.compile(r"[A-Za-z0-9]+")


def _has_latin(text: str) -> bool:
    return any("a" <= c.lower() <= "z" for c in text)


def _japanese_only(text: str) -> bool:
    return is_cjk(text) and not _has_latin(text)


def _is_latin_misread(block: TextBlock) -> bool:
    """On a Japanese page, Latin letters with no word among them: hand-lettered kana (a siren's ファン) or a
    drawing that the multilingual recogniser read as 'Ti1 7'. A word is three letters or more ('Hello'), or two or
    more capitals ('OK', 'ICU'); digits alone are no Latin text (a number stays), and a line with any kana or
    kanji is Japanese."""
    text = "".join(ln.text for ln in block.lines)
    if is_cjk(text) or not _has_latin(text):
        return False
    words = [t for t in _LATIN_TOKEN.findall(text) if t.isalpha() and (len(t) >= 3 or (len(t) >= 2 and t.isupper()))]
    return not words


def open_last_row(panels: list[BBox], blocks: list[TextBlock], background: PageBackground) -> BBox | None:
    """An unframed last row, or None: lettering below every panel, with art reaching well below it on the paper
    (a page that ends on a figure drawn straight on the paper, as Pepper&Carrot's do), makes a panel as wide as
    the panels above, from the first to the last row of art below them. Lettering with no picture under it (a
    credit line, a closing caption) makes none; page furniture was set aside before."""
    if not panels:
        return None
    bottom = max(y + h for _x, y, _w, h in panels)
    below = [b for b in blocks if b.bbox[1] >= bottom]
    if not below:
        return None
    left, right = min(p[0] for p in panels), max(p[0] + p[2] for p in panels)
    scale = background.scale
    start = int(bottom * scale) + 1
    art = ~background.paper_mask[start:, int(left * scale) : int(right * scale)]
    rows = np.nonzero(art.mean(axis=1) >= _OPEN_ROW_ART)[0] if art.size else np.zeros(0, np.int64)
    if len(rows) == 0:
        return None
    top_px, end_px = round((start + rows[0]) / scale), round((start + rows[-1] + 1) / scale)
    outlines = [b.bubble.bbox if b.bubble is not None else b.bbox for b in below]
    outlined_to = max(y + h for _x, y, _w, h in outlines)
    height = end_px - top_px
    if height < _OPEN_ROW_MIN_HEIGHT * max(p[3] for p in panels) or end_px - outlined_to < _OPEN_ROW_BELOW * height:
        return None  # a sliver, or hardly more than the balloons themselves: no picture there
    return (left, top_px, right - left, height)


_ACROSS_SHARE = 0.25
"""Share of a block's box inside each of two panels when the block lies across their border."""


def _panel_of(box: BBox, panels: list[BBox]) -> int:
    """The panel holding most of the box; among panels holding it about as well, the smallest (an inset drawn
    over a splash holds its own lettering, which lies inside the splash's box too)."""
    overlaps = [overlap_of_smaller(box, panel) for panel in panels]
    best_overlap = max(overlaps, default=0.0)
    if best_overlap <= 0.5:
        return -1
    holders = [i for i, o in enumerate(overlaps) if o >= best_overlap - 0.1]
    return min(holders, key=lambda i: (area_px2(panels[i]), i))


def _texts_in_order(
    image_rgb: npt.NDArray[np.uint8],
    blocks: list[TextBlock],
    panels: list[BBox],
    direction: ReadingDirection,
    lang: Literal["en", "ja"],
    page_kind: PageKind,
    print_only: bool,
) -> list[TextRegion]:
    if not blocks:
        return []
    typical_letter = page_letter_px(blocks)
    texts_raw = [block_text(b) for b in blocks]
    # Look-alike letters the recogniser confuses, put back by the page's language.
    texts_raw = [latin_lookalikes(t) if lang == "en" else counter_ka(japanese_forms(t)) for t in texts_raw]
    mixed_case = sum(not is_all_caps(t) for t in texts_raw if any(c.isalpha() for c in t)) > len(texts_raw) / 2
    owners = [_panel_of(b.bbox, panels) for b in blocks]
    first_panel_top = min((p[1] for p in panels), default=0)
    ordered: list[int] = []
    # Lettering above the first panel (a title) comes first; other lettering outside every panel is read where it
    # sits, after the last panel (in reading order) whose top is above its middle: a balloon in the gutter between
    # two tiers is said between them, lettering below every panel last.
    outside = [i for i, o in enumerate(owners) if o < 0]
    before = [i for i in outside if centre(blocks[i].bbox)[1] < first_panel_top]
    after = {
        i: max((p for p, box in enumerate(panels) if box[1] <= centre(blocks[i].bbox)[1]), default=len(panels) - 1)
        for i in outside
        if i not in before
    }
    for i in after:
        # A balloon across the border of two panels is said between them, after the first one's lettering.
        across = [p for p, box in enumerate(panels) if overlap_of_smaller(blocks[i].bbox, box) >= _ACROSS_SHARE]
        if len(across) >= 2:
            after[i] = min(across)
    within_direction: ReadingDirection = "ltr" if direction == "ttb" else direction
    groups: list[list[int]] = [before, [i for i, p in after.items() if p < 0]]
    for p in range(len(panels)):
        groups.append([i for i, o in enumerate(owners) if o == p])
        groups.append([i for i, q in after.items() if q == p])
    for group in groups:
        boxes = [blocks[i].bbox for i in group]
        ordered.extend(group[k] for k in reading_order(boxes, within_direction))
    height_px = image_rgb.shape[0]
    kinds = [
        classify(
            blocks[i],
            texts_raw[i],
            typical_letter,
            mixed_case,
            near_top=centre(blocks[i].bbox)[1] < 0.25 * height_px,
            # Outside every panel there are titles, credits and notices, not balloons with open outlines.
            panel_wide=owners[i] < 0 or blocks[i].bbox[2] >= 0.6 * panels[owners[i]][2],
        )
        for i in range(len(blocks))
    ]
    if lang == "ja":  # a sign in the picture is nobody's line
        vertical = direction == "rtl" or lettered_vertically(blocks, texts_raw)  # a manga's columns
        kinds = [
            "caption" if k in ("speech", "shout") and is_sign(blocks[i], texts_raw[i], vertical) else k
            for i, k in enumerate(kinds)
        ]
    else:
        # Kana or kanji with no Latin letter on an English page: a sound word a translation left in the art, or
        # the art itself read by the multilingual recogniser (a shop sign as 工店); an English voice cannot say it.
        kinds = ["sound" if _japanese_only(texts_raw[i]) else k for i, k in enumerate(kinds)]
    if page_kind != "story" or print_only:
        # Print on an ad, a cover or a title strip is not somebody talking unless it sits in a real balloon.
        kinds = [k if blocks[i].bubble is not None or k == "sound" else "caption" for i, k in enumerate(kinds)]
    speaking = [i for i in ordered if kinds[i] in ("speech", "shout")]
    signatures = {}
    anchors: dict[int, tuple[float, float]] = {}
    for i in speaking:
        panel_box = panels[owners[i]] if owners[i] >= 0 else None
        anchor = speaker_anchor(blocks[i], panel_box)
        anchors[i] = (round(anchor[0], 1), round(anchor[1], 1))
        bubble = blocks[i].bubble
        box = bubble.bbox if bubble is not None else blocks[i].bbox
        window = int(max(box[2], box[3]) * 1.2)
        signatures[i] = appearance_signature(image_rgb, anchor, window, box)
    utterances = [
        Utterance(
            page=0,
            panel=owners[i],
            signature=signatures[i],
        )
        for i in speaking
    ]
    ids = cluster_utterances(utterances)
    speaker_of = {i: f"char{ids[k] + 1}" for k, i in enumerate(speaking)}
    out: list[TextRegion] = []
    for i in ordered:
        text = texts_raw[i]
        if kinds[i] != "sound" and is_all_caps(text):
            text = sentence_case(text)
        block = blocks[i]
        out.append(
            TextRegion(
                bbox=block.bbox,
                kind=kinds[i],
                text=text,
                speaker=speaker_of.get(i),
                panel=owners[i],
                lang=lang,
                vertical=any(ln.vertical for ln in block.lines),
                confidence=round(float(np.mean([ln.score for ln in block.lines])), 4),
                speaker_signature=[round(v, 4) for v in signatures[i]] if i in signatures else None,
                speaker_xy=anchors.get(i),
            )
        )
    return out
