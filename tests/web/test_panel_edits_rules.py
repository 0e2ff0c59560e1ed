"""The review's panel rules (web/panel_edits.py) one by one, through the review server on loopback over a copy of a
real narrated book (the sample page twice, tests/web/conftest.py): a page's panels reordered, redrawn, removed or
added, where the page's lettering goes with them, and the sizes, places and counts a panel edit is held to."""

from __future__ import annotations

import pytest

from comic_narrator.artifacts import BBox, BookReading, PageReading
from tests.web.conftest import Served

pytestmark = pytest.mark.slow


def _centre(box: BBox) -> tuple[float, float]:
    return box[0] + box[2] / 2, box[1] + box[3] / 2


def _inside(point: tuple[float, float], box: BBox) -> bool:
    return box[0] <= point[0] < box[0] + box[2] and box[1] <= point[1] < box[1] + box[3]


def _saved_page(served: Served, number: int = 0) -> PageReading:
    return BookReading.model_validate_json((served.work / "review-reading.json").read_bytes()).pages[number]


def _save_panels(served: Served, panels: list[dict[str, object]], moved: dict[int, int]) -> tuple[int, str]:
    """Save page 1's ``panels``; its lines follow their panels as ``moved`` (old -> new, a panel not in it: gone)."""
    lines = [line.model_dump() for line in served.script().lines]
    for line in lines:
        if line["page"] == 0 and line["panel"] != -1:
            line["panel"] = moved.get(int(line["panel"]), -1)  # type: ignore[call-overload]
    return served.save({"lines": lines, "panels": {"0": panels}})


def test_panels_put_in_another_order_take_their_lettering_with_them(served: Served) -> None:
    page = served.reading().pages[0]
    count = len(page.panels)
    assert count >= 4
    order = list(range(count))[::-1]
    status, message = _save_panels(
        served,
        [{"bbox": list(page.panels[i].bbox), "was": i} for i in order],
        {old: new for new, old in enumerate(order)},
    )
    assert status == 200 and message.endswith("and the panels: script.json, review-cast.yaml, review-reading.json")
    saved = _saved_page(served)
    assert [panel.bbox for panel in saved.panels] == [page.panels[i].bbox for i in order]
    assert [text.panel for text in saved.texts] == [count - 1 - text.panel for text in page.texts]
    assert _saved_page(served, 1) == served.reading().pages[1], "the page not edited is kept as it was"


def test_a_redrawn_panel_keeps_its_lettering_even_where_it_no_longer_covers_it(served: Served) -> None:
    page = served.reading().pages[0]
    panel = page.texts[0].panel
    x, y = page.panels[panel].bbox[:2]
    corner: BBox = (x, y, 8, 8)  # the smallest panel there may be, in the old panel's corner
    held = [text for text in page.texts if text.panel == panel]
    assert held and not any(_inside(_centre(text.bbox), corner) for text in held)
    panels = [{"bbox": list(corner if i == panel else p.bbox), "was": i} for i, p in enumerate(page.panels)]
    status, message = _save_panels(served, panels, {i: i for i in range(len(page.panels))})
    assert status == 200, message
    saved = _saved_page(served)
    assert saved.panels[panel].bbox == corner
    assert [text.panel for text in saved.texts] == [text.panel for text in page.texts]


def test_a_removed_panels_lettering_goes_to_the_new_panel_holding_its_centre_else_to_the_whole_page(
    served: Served,
) -> None:
    page = served.reading().pages[0]
    gone = page.texts[0].panel
    first, *_, last = [i for i, text in enumerate(page.texts) if text.panel == gone]
    assert first != last, "the removed panel holds two texts"
    kept = [i for i in range(len(page.panels)) if i != gone]
    # The new panel (listed last) is an 8 x 8 box around the last text's centre; a kept panel listed before it
    # spans that centre across (or down), and no kept panel holds the first text's centre.
    cx, cy = _centre(page.texts[last].bbox)
    new: BBox = (int(cx) - 4, int(cy) - 4, 8, 8)
    assert any(page.panels[i].bbox[0] <= cx < sum(page.panels[i].bbox[::2]) for i in kept)
    assert not any(_inside(_centre(page.texts[first].bbox), page.panels[i].bbox) for i in kept)
    panels = [{"bbox": list(page.panels[i].bbox), "was": i} for i in kept] + [{"bbox": list(new)}]
    status, message = _save_panels(served, panels, {old: new for new, old in enumerate(kept)})
    assert status == 200, message
    saved = _saved_page(served)
    assert [panel.bbox for panel in saved.panels] == [*(page.panels[i].bbox for i in kept), new]
    assert saved.texts[last].panel == len(kept), "the new panel holds its centre"
    assert saved.texts[first].panel == -1, "no panel holds its centre: the whole page"
    others = [(i, text.panel) for i, text in enumerate(page.texts) if text.panel != gone]
    assert [(i, saved.texts[i].panel) for i, _ in others] == [(i, kept.index(p)) for i, p in others]


def test_a_panel_is_at_least_8_by_8_px_and_inside_its_page(served: Served) -> None:
    page = served.reading().pages[0]
    width, height = page.width, page.height
    whole: list[dict[str, object]] = [{"bbox": [0, 0, width, height]}]
    status, message = _save_panels(served, whole, {})
    assert status == 200, message
    assert [panel.bbox for panel in _saved_page(served).panels] == [(0, 0, width, height)]
    assert {text.panel for text in _saved_page(served).texts} == {0}, "all the lettering is on the one panel"
    for box in ((10, 10, 7, 8), (10, 10, 8, 7)):
        status, message = _save_panels(served, [{"bbox": list(box)}], {})
        assert status == 400 and message == f"page 1, panel 1: {box[2]}x{box[3]} px is smaller than 8x8", message
    for box in ((-1, 0, 100, 100), (0, -1, 100, 100), (1, 0, width, 100), (0, 1, 100, height)):
        status, message = _save_panels(served, [{"bbox": [0, 0, 8, 8]}, {"bbox": list(box)}], {})
        assert status == 400 and message == f"page 1, panel 2: {box} is not inside the {width}x{height} page", message


def test_a_panel_was_one_of_the_pages_panels_or_is_new(served: Served) -> None:
    page = served.reading().pages[0]
    for was in (-1, len(page.panels)):
        status, message = _save_panels(served, [{"bbox": list(page.panels[0].bbox), "was": was}], {})
        assert status == 400 and message == f"page 1, panel 1: it was panel {was + 1}, which is not a panel", message
    last = len(page.panels) - 1
    status, message = _save_panels(served, [{"bbox": list(page.panels[last].bbox), "was": last}], {last: 0})
    assert status == 200, message
    assert [text.panel for text in _saved_page(served).texts] == [0 if t.panel == last else -1 for t in page.texts]


def test_a_page_has_at_most_200_panels(served: Served) -> None:
    page = served.reading().pages[0]
    grid = [[8 + 10 * (i % 20), 8 + 10 * (i // 20), 8, 8] for i in range(201)]
    assert all(x + 8 <= page.width and y + 8 <= page.height for x, y, _, _ in grid)
    status, message = _save_panels(served, [{"bbox": box} for box in grid], {})
    assert status == 400 and message == "page 1: 201 panels; at most 200", message
    status, message = _save_panels(served, [{"bbox": box} for box in grid[:200]], {})
    assert status == 200, message
    assert len(_saved_page(served).panels) == 200
