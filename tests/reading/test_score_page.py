"""The measure itself (`comic-narrator eval`'s scoring), on constructed readings against constructed ground
truth: a missed panel is no exact order, a merged balloon found twice counts once in the text order, texts match
by box or, without boxes, by content, kinds and speakers are scored over what was found, and the summary pools
CER per language."""

from __future__ import annotations

from typing import Any

from comic_narrator.artifacts import PageReading, Panel, TextRegion
from comic_narrator.reading.evaluate import score_page, summarise

PANELS = [(0, 0, 400, 300), (0, 300, 400, 300), (0, 600, 400, 300)]


def _gt(texts: list[dict[str, Any]] | None = None, panels: list[tuple[int, int, int, int]] = PANELS) -> dict[str, Any]:
    gt_panels: list[dict[str, Any]] = [{"order": n + 1, "bbox": list(b), "texts": []} for n, b in enumerate(panels)]
    for t in texts or []:
        gt_panels[t.pop("panel")]["texts"].append(t)
    return {"image": "p.png", "width": 400, "height": 900, "reading_direction": "ltr", "panels": gt_panels}


def _reading(panels: list[tuple[int, int, int, int]], texts: list[TextRegion] | None = None) -> PageReading:
    return PageReading(
        page=0,
        width=400,
        height=900,
        reading_direction="ltr",
        panels=[Panel(bbox=b) for b in panels],
        texts=texts or [],
    )


def _text(box: tuple[int, int, int, int], text: str, kind: str = "speech", speaker: str | None = "char1") -> TextRegion:
    return TextRegion(bbox=box, kind=kind, text=text, speaker=speaker, panel=0)  # type: ignore[arg-type]


def test_every_panel_found_in_order_is_exact() -> None:
    score = score_page(_reading(PANELS), _gt(), [], 0.5)
    assert (score.panel_precision, score.panel_recall, score.panel_order_exact, score.order_exact) == (1, 1, True, True)
    assert score.panel_kendall_tau == 1.0


def test_a_missed_panel_is_no_exact_order_even_when_the_rest_are_in_order() -> None:
    score = score_page(_reading([PANELS[0], PANELS[2]]), _gt(), [], 0.5)
    assert score.panels_matched == 2 and score.panel_recall == round(2 / 3, 4) and score.panel_precision == 1.0
    assert not score.panel_order_exact and not score.order_exact
    assert score.panel_kendall_tau == 1.0, "the two found are in order"


def test_panels_found_out_of_order() -> None:
    score = score_page(_reading([PANELS[1], PANELS[0], PANELS[2]]), _gt(), [], 0.5)
    assert score.panels_matched == 3 and not score.panel_order_exact and score.panel_kendall_tau < 1.0


def test_texts_in_order_by_box_with_a_merged_balloon_counted_once() -> None:
    gt = _gt(
        [
            {"panel": 0, "kind": "speech", "text": "Hello", "bbox": [10, 10, 100, 40], "speaker": "ann"},
            {"panel": 0, "kind": "speech", "text": "there", "bbox": [10, 60, 100, 40], "speaker": "ann"},
            {"panel": 1, "kind": "caption", "text": "Later", "bbox": [10, 310, 100, 40]},
            {"panel": 2, "kind": "sound", "text": "BOOM", "bbox": [10, 610, 100, 40]},
            {"panel": 2, "kind": "speech", "text": "Ow", "bbox": [200, 610, 100, 40], "speaker": "bob"},
        ]
    )
    merged = _text((10, 10, 100, 90), "Hello there")  # both of the first panel's balloons read as one
    later = _text((10, 310, 100, 40), "Later", kind="speech", speaker="char2")  # a caption read as speech
    boom = _text((10, 610, 100, 40), "BOOM", kind="sound", speaker=None)
    score = score_page(_reading(PANELS, [merged, later, boom]), gt, [], 0.5)
    assert score.texts_found == 4 and score.text_recall == 0.8
    assert score.text_order_exact and score.order_exact
    assert score.kinds_right == 3, "Hello, there and BOOM; Later's kind is wrong"
    assert score.speaker_pairs == [("char1", "ann"), ("char1", "ann"), (None, "bob")]
    # Sound words are left out of CER; the missed "Ow" is two edits of the 17 letters.
    assert score.cer_letters == len("Hellotherelaterow") and score.cer_edits == 2 and score.cer == round(2 / 17, 4)


def test_texts_read_out_of_order() -> None:
    gt = _gt(
        [
            {"panel": 0, "kind": "speech", "text": "First", "bbox": [10, 10, 100, 40]},
            {"panel": 1, "kind": "speech", "text": "Second", "bbox": [10, 310, 100, 40]},
        ]
    )
    read = [_text((10, 310, 100, 40), "Second"), _text((10, 10, 100, 40), "First")]
    score = score_page(_reading(PANELS, read), gt, [], 0.5)
    assert score.panel_order_exact and not score.text_order_exact and not score.order_exact


def test_without_boxes_texts_match_by_content() -> None:
    gt = _gt([{"panel": 0, "kind": "speech", "text": "Where are you going?"}])
    far_away = _text((300, 800, 90, 90), "where are you going")  # no box to overlap: the words decide
    score = score_page(_reading(PANELS, [far_away]), gt, [], 0.5)
    assert score.texts_found == 1 and score.kinds_right == 1


def test_the_summary_pools_cer_by_language_and_kinds_over_found_texts() -> None:
    en = score_page(
        _reading(PANELS, [_text((10, 10, 100, 40), "Helo")]),
        _gt([{"panel": 0, "kind": "speech", "text": "Hello", "bbox": [10, 10, 100, 40], "speaker": "ann"}]),
        [],
        1.0,
    )
    ja = score_page(
        _reading(PANELS, [_text((10, 10, 100, 40), "こんにちは世界", kind="caption")]),
        _gt([{"panel": 0, "kind": "speech", "text": "こんにちは世界", "bbox": [10, 10, 100, 40], "speaker": "ann"}]),
        [],
        3.0,
    )
    summary = summarise("set", [en, ja])
    assert summary.cer_by_lang == {"en": 0.2, "ja": 0.0}
    assert summary.kind_accuracy == 0.5 and summary.order_exact_rate == 1.0 and summary.seconds_per_page == 2.0
    assert summary.speakers_known == 2 and summary.speaker_pair_f1 == 1.0 and summary.speaker_pair_f1_one_id == 1.0


def test_with_boxes_a_garbled_reading_in_the_right_place_is_found() -> None:
    gt = _gt([{"panel": 0, "kind": "speech", "text": "Where are you going?", "bbox": [10, 10, 100, 40]}])
    garbled = _text((12, 12, 96, 36), "Wnxq zzz")
    score = score_page(_reading(PANELS, [garbled]), gt, [], 0.5)
    assert score.texts_found == 1 and score.cer > 0.5


def test_furniture_and_print_in_a_non_story_region_are_neither_matched_nor_misread() -> None:
    gt = _gt([{"panel": 0, "kind": "speech", "text": "Hi", "bbox": [10, 10, 100, 40]}])
    read = [
        _text((10, 10, 100, 40), "Hi"),
        _text((10, 850, 200, 30), "www.example.com", kind="furniture", speaker=None),
        _text((300, 850, 90, 30), "Page 4", kind="caption", speaker=None),
    ]
    score = score_page(_reading(PANELS, read), gt, [(290, 840, 110, 50)], 0.5)
    assert score.texts_found == 1 and score.cer_edits == 0
    kept = score_page(_reading(PANELS, read), gt, [], 0.5)
    assert kept.cer_edits == len("Page4"), "outside a non-story region the caption is story text read in excess"
