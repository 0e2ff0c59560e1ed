"""Panels and their order on each kind of page issue 9 lists: the stress set of training/panels/stress.py (pages
constructed from licence-clean panel art, held-out pages under scan conditions, public-domain corpus pages),
read by the reader's own choice of panel finder; and the rules behind the figures, each on its own."""

from __future__ import annotations

import json
from pathlib import Path

import cv2
import numpy as np
import pytest
from PIL import Image

from comic_narrator.artifacts import BBox
from comic_narrator.config import VisionConfig
from comic_narrator.reading.gutter_split import split_along_gutters
from comic_narrator.reading.metrics import in_order, match_boxes
from comic_narrator.reading.order import reading_order, spread_aware_order
from comic_narrator.reading.panel_model import colour_page_panels, detect_panels_learned, without_title_band
from comic_narrator.reading.panels import (
    PanelParams,
    detect_panels,
    estimate_background,
    paper_inside_art,
    paper_levelled,
)
from comic_narrator.reading.reader import _find_panels
from tests.conftest import REPO
from tests.reading.conftest import DATA, TRAINING_PANELS, assert_panels_in_order, training_module

SHARED = REPO.parent / "shared"


# Floors per kind (F1 at IoU 0.5, pages whose whole panel order is exact), a little under what the reader scores
# on the set built below (seed 9, 6 constructed pages a kind, every other held-out page under each condition);
# training/panels/README.md has the figures before and after.
FLOORS: dict[str, tuple[float, int]] = {
    "bleed": (0.95, 6),  # a first panel running off the top was dropped as a title band: 3 of 6 in order before
    "borderless": (0.95, 6),
    "breakout": (0.97, 6),
    "captions-across": (0.97, 6),
    "inset-overlap": (0.92, 6),  # two pages needed level tops read from the reading side
    "nested": (0.97, 6),
    # the model trained on steep slants cut the golden-age splash along a kerb (0.800) until nested cores stopped
    # counting as panels
    "splash": (0.97, 6),
    "spread": (0.97, 6),
    # without the gutter split: F1 0.68, 1 page in order; before steep slants were trained on: 0.795, 2 in order
    "slanted": (0.97, 6),
    # the classical detector alone: F1 0.55, none in order; 4 in order before tiers it merged were split (6 now)
    "sunday": (0.97, 6),
    # colour strips whose panels share frame lines: F1 0.83, 4 in order before strips went to the segmenter
    "strip-constructed": (0.93, 5),
    # the same strips on old newsprint: 4 of 6 in order (F1 0.930) before the segmenter saw the paper levelled white
    "strip-newsprint": (0.95, 5),
    # rows were cut first, so both strips were read across (right panel, left panel, ...): none in order
    "yonkoma": (0.97, 6),
    # frameless painted panels apart by a few pixels of light paint (added 2026-12-07): F1 0.610, 2 in order before
    # a ridge of paper between art cut colour pages; F1 0.841, 3 in order after, and 0.857, 4 since a panel lost
    # between two of a tier is read (the rest merge where the art beside a gutter is light too)
    "painted-gutters": (0.83, 4),
    # tiers sharing frame lines, no gutter (added 2026-12-06 and not yet worked on: a weakness kept in sight)
    "shared-frames": (0.90, 2),
    "golden-age": (0.97, 3),
    "newspaper-strip": (0.97, 2),
    "small-scan": (0.93, 6),
    "large-scan": (0.93, 6),
    "jpeg-noise": (0.92, 5),
    "screentone": (0.88, 5),
    "dark-panels": (0.85, 5),
    "grey-paper": (0.89, 5),
    "page-margins": (0.95, 6),
    "skewed-scan": (0.88, 5),
    # added 2026-12-07, each read whole and in order when added: frames of other shapes (rounded corners, ovals,
    # scalloped dream frames), older manga's dense pages, hand-ruled frames running past their corners, sound words
    # lettered across gutters, double and heavy frames, and
    # four more scan conditions (the back page showing through, a binding's shadow, dust, uneven light)
    "rounded-frames": (0.97, 6),
    "dense": (0.97, 6),
    "hand-ruled": (0.95, 6),
    "sound-across": (0.95, 6),
    "double-frames": (0.95, 6),
    "show-through": (0.93, 6),
    "specks": (0.93, 6),
    "spine-shadow": (0.92, 6),
    "uneven-light": (0.92, 6),
    # facing held-out pages scanned as one image, off-centre, the binding's shadow at the fold: 8 of 10 in order
    # before a doubtful region the classical detector boxed too was kept (the left half's first panel cut in two)
    "scanned-spread": (0.90, 5),
    # a webtoon's column as the slices the ingest cuts it into (added 2026-12-07): 33 of 34 in order before a colour
    # slice whose classical detector found no panel took the segmenter's; extra boxes in the gaps keep F1 low
    "webtoon": (0.88, 33),
    # manga effects over the art (focus lines, speed lines, panels inked black, gradient tone; an effect often with
    # no frame), added 2026-12-07 and read as they came; in colour one page joins a frameless panel of focus lines
    # with its neighbour across the gutter
    "effects": (0.97, 6),
    "effects-colour": (0.93, 5),
}


@pytest.fixture(scope="module")
def stress_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    if not (SHARED / "training").is_dir() or not (SHARED / "corpus").is_dir():
        pytest.skip("../shared/training and ../shared/corpus are absent: the stress pages are built from them")
    out = tmp_path_factory.mktemp("stress")
    training_module("stress").build(out, seed=9, per_kind=6, held_out_stride=2)
    return out


@pytest.mark.parametrize("kind", sorted(FLOORS))
def test_each_kind_of_page_reads_its_panels_in_order(stress_dir: Path, kind: str) -> None:
    panels_of = training_module("stress_eval").panels_of
    folder = stress_dir / kind
    matched = found = truth = exact = 0
    for page in json.loads((folder / "gt.json").read_text(encoding="utf-8"))["pages"]:
        rgb = np.asarray(Image.open(folder / page["image"]).convert("RGB"))
        pred, parents = panels_of(rgb, "auto")
        ordered = [pred[i] for i in spread_aware_order(pred, parents, page["reading_direction"], *rgb.shape[1::-1])]
        gt: list[BBox] = [tuple(p["bbox"]) for p in page["panels"]]  # type: ignore[misc]
        hits = match_boxes(gt, ordered)
        matched, found, truth = matched + len(hits), found + len(ordered), truth + len(gt)
        exact += len(hits) == len(gt) and in_order([hits[g] for g in range(len(gt))])
    precision, recall = matched / max(found, 1), matched / max(truth, 1)
    f1 = 2 * precision * recall / max(precision + recall, 1e-9)
    floor_f1, floor_exact = FLOORS[kind]
    assert f1 >= floor_f1, f"{kind}: F1 {f1:.3f} (P {precision:.3f} R {recall:.3f})"
    assert exact >= floor_exact, f"{kind}: {exact} pages in order"


BUNDLED = REPO / "tests" / "data" / "vision" / "stress"


@pytest.mark.parametrize(
    "image", [p["image"] for p in json.loads((BUNDLED / "gt.json").read_text(encoding="utf-8"))["pages"]]
)
def test_bundled_stress_pages_read_every_panel_in_order(image: str) -> None:
    """Constructed pages kept in the repository (ATTRIBUTION beside them), each of which the reader got wrong
    before: a bleeding first panel dropped as a title band, a Sunday page's tiers merged by the classical
    detector, a slanted tier read left to right, a panel over its neighbour's corner read out of turn, two
    pages of steep slanted tiers the model merged (2 and 3 of 7 panels found before it trained on steep slants),
    a splash the model retrained on them cut along a kerb (four boxes, before cores nested in each other's
    boxes stopped counting as panels), and a Sunday page whose rain and castle tower the classical detector cut
    into 14 boxes for 11 panels, kept while the segmenter found fewer, and one whose top tier's last two panels it
    merged, kept while the segmenter found only one more, and a colour strip whose painted panels share frame
    lines (3 boxes for 5 before strips went to the segmenter a window at a time), and a 4-koma page read across
    its two strips, and another whose panels' boxes balloons over the gap between the strips grew (read across
    until a grown box could still be a strip's), and a colour strip on old newsprint whose panels merged (2 boxes
    for 3 before the segmenter saw its yellowed paper levelled white), and a painted page whose gutters are bands
    of light paint a few pixels wide (4 boxes for 7 before a ridge of paper between art cut colour pages), and a
    page whose first panel is an oval (the segmenter doubtful towards its box's corners dropped it until a
    classical box matching the doubtful region kept it), and a webtoon slice on graded paper (no panel until a
    colour page whose classical detector found none took the segmenter's). No page gets a box more than its panels."""
    page = next(
        p for p in json.loads((BUNDLED / "gt.json").read_text(encoding="utf-8"))["pages"] if p["image"] == image
    )
    rgb = np.asarray(Image.open(BUNDLED / image).convert("RGB"))
    gt: list[BBox] = [tuple(p["bbox"]) for p in page["panels"]]  # type: ignore[misc]
    assert_panels_in_order(rgb, gt, page["reading_direction"])


def test_a_first_panel_bleeding_off_the_top_is_no_title_band() -> None:
    # Three learned panels, the top one above the rest with no classical frame under it: a title band, unless it
    # runs off the page's top edge (a bleed has no top frame for the classical detector to follow either).
    below = [(50, 700, 500, 400), (600, 700, 500, 400)]
    assert without_title_band([(0, 0, 1200, 650), *below], []) == [(0, 0, 1200, 650), *below]
    assert without_title_band([(60, 40, 1100, 200), *below], []) == below


def test_black_jack_page_14_keeps_its_bleeding_first_panel() -> None:
    page = SHARED / "training" / "blackjack-ni-yoroshiku" / "vol01" / "bj01_000014.jpg"
    if not page.is_file():
        pytest.skip(f"{page} is absent (../shared/training)")
    annotations = json.loads((TRAINING_PANELS / "annotations" / "bj01-a.json").read_text(encoding="utf-8"))
    gt = next([tuple(p["bbox"]) for p in pg["panels"]] for pg in annotations["pages"] if pg["image"] == page.name)
    rgb = np.asarray(Image.open(page).convert("RGB"))
    found = detect_panels_learned(cv2.cvtColor(rgb, cv2.COLOR_RGB2GRAY), detect_panels(rgb))
    assert found is not None
    ordered = [found[i] for i in reading_order(found, "rtl")]
    hits = match_boxes(gt, ordered)
    assert 0 in hits and hits[0] == 0
    assert len(hits) == len(gt)


def _two_panels(slope: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """A 200x300 region: two panels of art (grey) under one frame, apart along a gutter of paper 6 px wide with a
    frame line each side, rising by ``slope``; the segmenter's probability doubts the gutter a little."""
    h, w = 300, 200
    ys, xs = np.mgrid[0:h, 0:w]
    line = 150 + slope * (xs - w / 2)
    light = np.abs(ys - line) <= 3
    prob = np.where(np.abs(ys - line) <= 4, 0.7, 1.0).astype(np.float32)
    mask = np.ones((h, w), bool)
    return light, prob, mask


@pytest.mark.parametrize("slope", [0.0, 0.2, -0.3])
def test_a_region_joined_across_a_gutter_comes_apart_along_it(slope: float) -> None:
    light, prob, mask = _two_panels(slope)
    pieces = split_along_gutters(light, prob, mask, 2000)
    assert len(pieces) == 2
    assert all(p.sum() >= 2000 for p in pieces)
    # The two pieces lie either side of the gutter line.
    centre_rows = [float(np.nonzero(p)[0].mean()) for p in pieces]
    assert min(centre_rows) < 150 < max(centre_rows)


def test_no_cut_where_the_segmenter_is_sure_or_paper_lies_beside_the_line() -> None:
    light, prob, mask = _two_panels(0.1)
    sure = np.ones_like(prob)
    assert len(split_along_gutters(light, sure, mask, 2000)) == 1
    # A wide white sky across the panel: paper within reach on both sides, so no gutter between two edges.
    sky = np.zeros_like(light)
    sky[100:200] = True
    doubt = np.where(sky, 0.7, 1.0).astype(np.float32)
    assert len(split_along_gutters(sky, doubt, mask, 2000)) == 1


@pytest.mark.parametrize(("paper_share", "doubt", "cut"), [(1.0, 0.87, True), (0.92, 0.87, False), (1.0, 0.92, False)])
def test_a_clear_line_of_paper_needs_less_doubt(paper_share: float, doubt: float, cut: bool) -> None:
    # A gutter of paper clear across the region (a painted page's light band, a thin manga gutter) is a cut where
    # the segmenter doubts it only a little (paper share less mean probability 0.13); one with art breaking
    # across a twelfth of it, or doubted less, is not.
    light, prob, mask = _two_panels(0.0)
    light[:, round(paper_share * 200) :] &= ~(np.abs(np.arange(300) - 150) <= 3)[:, None]
    prob = np.where(prob < 1.0, doubt, 1.0).astype(np.float32)
    assert (len(split_along_gutters(light, prob, mask, 2000)) == 2) is cut


def test_colour_pages_take_the_segmenters_panels_when_it_finds_three_more_or_fewer() -> None:
    classical: list[BBox] = [(0, 0, 100, 100)]
    learned: list[BBox] = [(0, 0, 50, 50), (50, 0, 50, 50), (0, 50, 50, 50)]
    assert colour_page_panels(learned, classical) == classical
    assert colour_page_panels([*learned, (50, 50, 50, 50)], classical) == [*learned, (50, 50, 50, 50)]
    # The classical detector cut a painted panel along its rain streaks: the segmenter's one box wins.
    streaks: list[BBox] = [(0, 0, 30, 100), (30, 0, 40, 100), (70, 0, 30, 100)]
    assert colour_page_panels(classical, streaks) == classical
    # As many panels either way: the classical boxes stay.
    assert colour_page_panels([(1, 1, 99, 99)], classical) == classical


def test_a_colour_panel_the_classical_detector_lost_outright_is_added_to_its_panels() -> None:
    # The classical detector kept the bottom tier and lost the top one (a skewed scan's wide panel); the segmenter
    # found both tiers, only one panel more, so the classical boxes stay, with the lost panel beside them.
    bottom: list[BBox] = [(0, 500, 300, 400), (320, 500, 300, 400)]
    top: BBox = (0, 0, 620, 450)
    assert colour_page_panels([top, *bottom], bottom) == [*bottom, top]
    # A learned box that overlaps a classical one by a fifth of itself is part of it, not lost.
    assert colour_page_panels([(0, 420, 620, 160), *bottom], bottom) == bottom
    # A classical box that two learned panels tile as one tier: a tier merged across a narrow gutter, split.
    tier: list[BBox] = [(0, 500, 300, 400), (310, 500, 310, 400)]
    assert colour_page_panels([top, *tier], [top, (0, 500, 620, 400)]) == [top, *tier]
    # Two learned boxes inside it that do not span its height (a title bar over a picture) leave it whole.
    ad: list[BBox] = [(0, 500, 620, 100), (100, 620, 400, 250)]
    assert colour_page_panels([top, *ad], [top, (0, 500, 620, 400)]) == [top, (0, 500, 620, 400)]
    # With no classical panel at all, one or two learned boxes are no story's panels (an ad, a cover) ...
    assert colour_page_panels([top], []) == []
    # ... unless the page is known and each fills a fifth of it or more: a webtoon slice on coloured paper.
    assert colour_page_panels([top], [], (700, 1000)) == [top]
    assert colour_page_panels([top, (0, 0, 120, 120)], [], (700, 1000)) == []
    assert colour_page_panels([top], [], (1000, 1500)) == []
    assert colour_page_panels([top], [], (1400, 1000)) == []  # a fifth of the page's width times its height


def test_a_group_of_tiers_the_classical_detector_merged_is_cut_into_the_learned_panels_that_tile_it() -> None:
    # A wide panel over a row of two, one classical box for the three (the segmenter found only two more on the
    # page): straight cuts part the learned boxes, a tier from the row, then the row's two panels, so they win.
    top: BBox = (0, 0, 620, 450)
    merged: BBox = (0, 470, 620, 800)
    nested: list[BBox] = [(0, 470, 620, 380), (0, 860, 300, 410), (310, 860, 310, 410)]
    assert colour_page_panels([top, *nested], [top, merged]) == [top, *nested]
    # Four panels turning about the page's middle (a pinwheel) cover it as well, but no straight cut parts them:
    # such boxes are as likely the segmenter's own mistake, so the classical box stays.
    pinwheel: list[BBox] = [(0, 470, 400, 200), (400, 470, 220, 500), (220, 970, 400, 300), (0, 670, 220, 600)]
    assert colour_page_panels(pinwheel, [top, merged]) == [top, merged]
    # Panels that part but leave a quarter of it bare are no tiling of it either.
    assert colour_page_panels([top, *nested[:2]], [top, merged]) == [top, merged]


def test_a_lettered_tier_whose_balloon_crosses_its_gutter_is_read_as_its_two_panels() -> None:
    """Pepper&Carrot ep. 12 p. 1, lettered, at 0.6 scale: a balloon lettered over the thin gutter of the last tier
    joins its two panels for the classical detector (3 boxes for the page's 4 panels before)."""
    rgb = np.asarray(Image.open(DATA / "peppercarrot-training" / "E12P01-lettered.jpg").convert("RGB"))
    # The panels, checked by eye on the page at full size (992 x 1401), in reading order.
    truth = [(41, 38, 915, 745), (41, 807, 912, 275), (41, 1105, 452, 258), (495, 1097, 458, 266)]
    assert_panels_in_order(rgb, [tuple(round(v * 0.6) for v in box) for box in truth], "ltr")  # type: ignore[misc]


def test_slanted_tiers_are_read_tier_by_tier() -> None:
    # Boxes of a slanted middle tier overlap the tier below by just over a fifth of a box: still a tier.
    top = [(582, 106, 587, 546), (71, 106, 577, 498)]
    middle = [(75, 568, 368, 512), (434, 616, 364, 518), (798, 650, 368, 560)]
    bottom = [(75, 1096, 563, 563), (595, 1147, 570, 512)]
    boxes = [*top, *middle, *bottom]
    order = [boxes[i] for i in reading_order(boxes, "rtl")]
    assert order == [top[0], top[1], middle[2], middle[1], middle[0], bottom[1], bottom[0]]


def test_a_panel_drawn_over_its_neighbours_corner_is_read_from_the_reading_side() -> None:
    # Both hang from the same gutter; the left one overlaps the right one's corner by a third of its width.
    left, right = (71, 1096, 693, 501), (592, 1096, 577, 556)
    assert [(left, right)[i] for i in reading_order([left, right], "rtl")] == [right, left]
    assert [(left, right)[i] for i in reading_order([left, right], "ltr")] == [left, right]


def test_a_panel_joined_to_a_half_believed_margin_is_kept_without_it(monkeypatch: pytest.MonkeyPatch) -> None:
    """A book's margin the model half-believes (0.6) touching a panel it is sure of makes one doubtful region; the
    region is dropped as doubtful, but the panel inside it is kept, without the margin (a model trained on steep
    slants lost the first panel of 5 of 14 held-out pages under book margins this way)."""
    from comic_narrator.reading import panel_model

    height, width = 512, 384
    prob = np.zeros((height, width), np.float32)
    prob[60:300, 20:80] = 0.6  # the margin band, touching the first panel's left side (and no other panel)
    prob[60:300, 80:340] = 0.99  # the first panel
    prob[320:480, 80:340] = 0.99  # the second, apart
    page = np.random.default_rng(3).integers(0, 256, (height, width), dtype=np.uint8)  # art: no line of paper
    monkeypatch.setattr(panel_model, "panel_probability", lambda grey: (prob, 1.0))
    boxes = panel_model._panels_of(page, 0.5)
    assert boxes is not None and len(boxes) == 2, boxes
    first = min(boxes, key=lambda b: b[1])
    assert match_boxes([(80, 60, 260, 240)], [first]) == {0: 0}
    assert first[0] >= 70, "the margin band stays out of the panel"
    # A doubtful region with no confident core at all (a running header, a scanner's edge) still gives nothing.
    prob[60:300, 80:340] = 0.7
    boxes = panel_model._panels_of(page, 0.5)
    assert boxes is not None and len(boxes) == 1


@pytest.mark.parametrize("transpose", [False, True])
def test_of_two_gutters_that_exclude_each_other_the_surer_one_is_cut(transpose: bool) -> None:
    # A 300x200 region with two level lines of paper, at rows 130 and 170. Either cut leaves the other between two
    # pieces too small to keep (min_area 11,000 of 60,000), so only one can be made: the clearer paper with the
    # deeper doubt (row 130: all paper, probability 0.5), not row 170 (92 % paper, probability 0.7). Transposed:
    # the same as columns.
    h, w = 300, 200
    ys, xs = np.mgrid[0:h, 0:w]
    light = (np.abs(ys - 130) <= 3) | ((np.abs(ys - 170) <= 3) & (xs % 12 != 0))
    prob = np.where(np.abs(ys - 130) <= 4, 0.5, np.where(np.abs(ys - 170) <= 4, 0.7, 1.0)).astype(np.float32)
    mask = np.ones((h, w), bool)
    if transpose:
        light, prob, mask = light.T, prob.T, mask.T
    pieces = split_along_gutters(light, prob, mask, 11_000)
    assert len(pieces) == 2
    axis = 1 if transpose else 0
    cut = min(int(np.nonzero(p)[axis].max()) for p in pieces)
    assert abs(cut - 130) <= 4, cut


def test_a_surer_column_gutter_wins_over_a_row_gutter_it_excludes() -> None:
    # A row line (92 % paper, probability 0.7) and a column line (all paper, probability 0.5) across a 300x200
    # region; after either cut the other would leave pieces under min_area (15,000 < 16,000), so the surer is cut.
    h, w = 300, 200
    ys, xs = np.mgrid[0:h, 0:w]
    row_line, column_line = np.abs(ys - 150) <= 3, np.abs(xs - 100) <= 3
    light = column_line | (row_line & (xs % 12 != 0))
    prob = np.where(np.abs(xs - 100) <= 4, 0.5, np.where(np.abs(ys - 150) <= 4, 0.7, 1.0)).astype(np.float32)
    pieces = split_along_gutters(light, prob, np.ones((h, w), bool), 16_000)
    assert len(pieces) == 2
    assert all(np.ptp(np.nonzero(p)[0]) == h - 1 for p in pieces), "each piece spans every row: a column cut"


def test_a_painted_strip_goes_to_the_segmenter_a_window_at_a_time() -> None:
    """The bundled colour strip: five painted panels sharing frame lines. The classical detector alone reads them as
    one; `--panels model` and `auto` (its art holds little paper) read the five through the windowed segmenter."""
    rgb = np.asarray(Image.open(BUNDLED / "strip-constructed-15-pc-seed21.jpg").convert("RGB"))
    grey = np.asarray(Image.fromarray(rgb).convert("L"))
    params = PanelParams()
    background = estimate_background(rgb, params)
    assert paper_inside_art(background) < 0.3
    counts = {
        mode: len(_find_panels(rgb, grey, params, background, VisionConfig(panels=mode)))  # type: ignore[arg-type]
        for mode in ("classical", "model", "auto")
    }
    assert counts == {"classical": 1, "model": 5, "auto": 5}


def test_yellowed_paper_is_levelled_white_for_the_segmenter_and_white_paper_is_left() -> None:
    rgb = np.asarray(Image.open(BUNDLED / "strip-newsprint-05-pc.jpg").convert("RGB"))
    grey = np.asarray(Image.fromarray(rgb).convert("L"))
    background = estimate_background(rgb, PanelParams())
    paper = 0.299 * background.rgb[0] + 0.587 * background.rgb[1] + 0.114 * background.rgb[2]
    assert 180 < paper < 240  # yellowed newsprint
    levelled = paper_levelled(grey, background)
    assert np.percentile(levelled, 1) == 0 and np.median(levelled[grey >= paper - 2]) == 255
    assert np.all(np.diff(levelled.ravel()[np.argsort(grey, axis=None)].astype(int)) >= 0)  # shades keep their order
    white = np.asarray(Image.open(BUNDLED / "strip-constructed-15-pc-seed21.jpg").convert("RGB"))
    white_grey = np.asarray(Image.fromarray(white).convert("L"))
    assert paper_levelled(white_grey, estimate_background(white, PanelParams())) is white_grey


def test_a_blank_strip_holds_no_paper_inside_art() -> None:
    """With no art at all there is no paper inside it: 0.0, not a share of nothing."""
    blank = np.full((200, 800, 3), 250, np.uint8)
    assert paper_inside_art(estimate_background(blank, PanelParams())) == 0.0
