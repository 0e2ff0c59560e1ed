"""The guided navigation's rules (web/guided.py) one by one over a real run (the narrated two-page book of
tests/web/conftest.py): the stretch of narration each panel and page carries, who speaks in a panel, which
lettering a line points at, where a line over the whole page and a line added by hand go, and a book of one page."""

from __future__ import annotations

from pathlib import Path

import pytest

from comic_narrator.artifacts import BookReading, ClipList, Script, ScriptLine, Timing
from comic_narrator.web.guided import GuidedDocument, guided_document, line_bbox
from tests.web.guided_schema import schema_errors

pytestmark = pytest.mark.slow
AUDIO = "narration.m4a"


def _run(work: Path) -> tuple[BookReading, Script, ClipList, Timing]:
    return (
        BookReading.model_validate_json((work / "reading.json").read_bytes()),
        Script.model_validate_json((work / "script.json").read_bytes()),
        ClipList.model_validate_json((work / "clips.json").read_bytes()),
        Timing.model_validate_json((work / "timing.json").read_bytes()),
    )


def _images(reading: BookReading) -> list[str]:
    return [f"pages/page {page.page + 1:04d}.png" for page in reading.pages]  # a space, as a user's name may have


def _span(timing: Timing, page: int, panel: int | None = None) -> str | None:
    """The stretch of the narration the shots of a panel (or of a whole page) take, as the document writes it."""
    shots = [s for s in timing.shots if s.page == page and panel in (None, s.panel)]
    if not shots:
        return None
    return f"{AUDIO}#t={min(s.start_s for s in shots):.3f},{max(s.start_s + s.duration_s for s in shots):.3f}"


def test_each_page_and_panel_carries_its_shots_stretch_and_each_panel_its_speakers(
    narrated: tuple[Path, Path],
) -> None:
    reading, script, clips, timing = _run(narrated[0])
    images = _images(reading)
    document = guided_document(reading, script, clips, timing, AUDIO, images)
    assert schema_errors(document.model_dump(exclude_none=True)) == []
    assert len(document.guided) == len(reading.pages) == 2
    quiet = 0
    for page, node in zip(reading.pages, document.guided, strict=True):
        number = page.page + 1
        assert (node.id, node.imgref, node.audioref) == (
            f"page{number}",
            images[page.page].replace(" ", "%20"),
            _span(timing, page.page),
        )
        panels = node.children or []
        assert [p.id for p in panels] == [f"page{number}-panel{i + 1}" for i in range(len(page.panels))]
        for index, panel in enumerate(panels):
            said = [line for line in script.lines if (line.page, line.panel) == (page.page, index)]
            assert panel.audioref == _span(timing, page.page, index)
            assert [b.id for b in panel.children or []] == [line.id for line in said]
            assert panel.character == (sorted({line.speaker for line in said}) or None)
            quiet += not said
    assert quiet, "a panel with no line has no balloons and no speakers"


def test_a_line_points_at_the_lettering_its_writers_id_names_on_its_own_page(narrated: tuple[Path, Path]) -> None:
    reading, script, _, _ = _run(narrated[0])
    first, second = reading.pages
    assert len(first.texts) >= 2
    written = [line for line in script.lines if line.page == 0]
    assert [line_bbox(line, first) for line in written] == [
        first.texts[int(line.id.rsplit("-t", 1)[1]) - 1].bbox for line in written
    ]
    line = written[0]
    for number in (1, len(first.texts)):
        assert line_bbox(line.model_copy(update={"id": f"p001-t{number:02d}"}), first) == first.texts[number - 1].bbox
    for other in ("p001-t00", f"p001-t{len(first.texts) + 1:02d}", "p001-n01", "p002-t01", "t01"):
        assert line_bbox(line.model_copy(update={"id": other}), first) is None, other
    assert line_bbox(line.model_copy(update={"id": "p002-t01", "page": 1}), second) == second.texts[0].bbox


def test_a_line_over_the_whole_page_comes_first_and_a_hand_added_line_shows_its_text_alone(
    narrated: tuple[Path, Path],
) -> None:
    reading, script, clips, timing = _run(narrated[0])
    moved, *rest = script.lines
    assert moved.page == 0 and moved.panel >= 0
    added = ScriptLine(id="p001-n01", page=0, panel=moved.panel, speaker="narrator", kind="caption", text="Later.")
    empty = added.model_copy(update={"id": "p001-n02", "text": ""})
    edited = script.model_copy(update={"lines": [moved.model_copy(update={"panel": -1}), added, empty, *rest]})
    document = guided_document(reading, edited, clips, timing, AUDIO, _images(reading))
    assert schema_errors(document.model_dump(exclude_none=True)) == []
    page = document.guided[0].children or []
    whole = page[0]
    start = next(
        s for shot in timing.shots for i, s in zip(shot.line_ids, shot.line_starts_s, strict=True) if i == moved.id
    )
    duration = next(c.duration_s for c in clips.clips if c.line_id == moved.id)
    assert (whole.id, whole.text, whole.character) == (moved.id, moved.text, [moved.speaker])
    assert whole.audioref == f"{AUDIO}#t={start:.3f},{start + duration:.3f}"
    assert whole.imgref is not None and whole.imgref.endswith(
        "#xywh=" + ",".join(map(str, line_bbox(moved, reading.pages[0]) or ()))
    )
    assert [p.id for p in page[1:]] == [f"page1-panel{i + 1}" for i in range(len(reading.pages[0].panels))]
    balloons = {b.id: b for b in page[1 + moved.panel].children or []}
    assert moved.id not in balloons and "p001-n02" not in balloons, "an empty line never voiced has nothing to show"
    shown = balloons["p001-n01"]
    assert (shown.text, shown.character, shown.role, shown.imgref, shown.audioref) == (
        "Later.",
        ["narrator"],
        ["caption"],
        None,
        None,
    )


def test_a_book_of_one_page_is_one_page_of_guided_navigation(narrated: tuple[Path, Path]) -> None:
    reading, script, clips, timing = _run(narrated[0])
    one = reading.model_copy(update={"pages": reading.pages[:1]})
    said = script.model_copy(update={"lines": [line for line in script.lines if line.page == 0]})
    document = guided_document(one, said, clips, timing, AUDIO, _images(one))
    assert [page.id for page in document.guided] == ["page1"]
    assert schema_errors(document.model_dump(exclude_none=True)) == []
    again = GuidedDocument.model_validate_json(document.to_json())
    assert again == document
