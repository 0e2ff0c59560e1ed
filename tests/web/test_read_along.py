"""The read-along export of a real run (two pages, real OCR, voices and encoder): its guided navigation holds the
reading and the timeline, and its player, in headless Chromium from disk and over loopback HTTP, plays the
narration (muted) with the page and the highlighted balloon following the clock."""

from __future__ import annotations

import http.server
import json
import shutil
import threading
import time
from collections.abc import Iterator
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from comic_narrator.artifacts import BookReading, ClipList, Script, Timing
from comic_narrator.cli import main
from comic_narrator.web.guided import ROLE_OF_KIND
from comic_narrator.web.readalong import FONT_FILES, FONTS
from tests.web.conftest import loaded_font_statuses
from tests.web.guided_schema import schema_errors
from tests.web.readalong_page import line_at, spoken_lines

if TYPE_CHECKING:
    from selenium.webdriver.remote.webdriver import WebDriver

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def served(narrated: tuple[Path, Path]) -> Iterator[str]:
    """The read-along folder behind a plain static web server on loopback."""
    handler = partial(http.server.SimpleHTTPRequestHandler, directory=str(narrated[1]))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/index.html"
    finally:
        server.shutdown()
        server.server_close()


def test_the_guided_navigation_holds_the_reading_and_the_timeline(narrated: tuple[Path, Path]) -> None:
    work, folder = narrated
    reading = BookReading.model_validate_json((work / "reading.json").read_text(encoding="utf-8"))
    script = Script.model_validate_json((work / "script.json").read_text(encoding="utf-8"))
    clips = {
        c.line_id: c for c in ClipList.model_validate_json((work / "clips.json").read_text(encoding="utf-8")).clips
    }
    timing = Timing.model_validate_json((work / "timing.json").read_text(encoding="utf-8"))
    document = json.loads((folder / "guided.json").read_text(encoding="utf-8"))
    assert [page["imgref"] for page in document["guided"]] == ["pages/page-0001.png", "pages/page-0002.png"]
    balloons = []
    for page, node in zip(reading.pages, document["guided"], strict=True):
        assert (folder / node["imgref"]).exists()
        panels = [child for child in node.get("children", []) if child["role"] == ["panel"]]
        assert [p["imgref"].split("#xywh=")[1] for p in panels] == [
            ",".join(map(str, panel.bbox)) for panel in page.panels
        ], "every panel, in reading order"
        for balloon in (b for p in panels for b in p.get("children", [])):
            x, y, w, h = (int(v) for v in balloon["imgref"].split("#xywh=")[1].split(","))
            assert min(x, y) >= 0 and x + w <= page.width and y + h <= page.height
            balloons.append(balloon)
    lines = spoken_lines(folder)
    assert [line.id for line in lines] == [line.id for line in script.lines], "every line, in the script's order"
    assert [line.text for line in lines] == [line.text for line in script.lines]
    assert [line.page for line in lines] == [line.page for line in script.lines]
    starts = {i: s for shot in timing.shots for i, s in zip(shot.line_ids, shot.line_starts_s, strict=True)}
    for line in lines:
        assert line.start_s == pytest.approx(starts[line.id], abs=1e-3)
        assert line.end_s - line.start_s == pytest.approx(clips[line.id].duration_s, abs=2e-3)
        assert 0 <= line.start_s < line.end_s <= timing.duration_s
    speakers = {line.id: line.speaker for line in script.lines}
    assert balloons and all(b["character"] == [speakers[b["id"]]] for b in balloons)
    assert not (folder / "fonts").exists(), "the Japanese font only goes with Japanese books"
    assert (folder / "narration.m4a").read_bytes() == (work / "segments" / "audio.m4a").read_bytes()


def test_export_writes_the_same_folder_from_the_work_folder(narrated: tuple[Path, Path], tmp_path: Path) -> None:
    work, folder = narrated
    assert main(["export", str(work), str(tmp_path / "again")]) == 0
    for name in ("guided.json", "guided.js", "index.html", "player.js", "narration.m4a", "pages/page-0002.png"):
        assert (tmp_path / "again" / name).read_bytes() == (folder / name).read_bytes(), name


def test_export_of_a_folder_without_a_run_is_one_clear_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["export", str(tmp_path), str(tmp_path / "out")]) == 2
    message = capsys.readouterr().err
    assert message.startswith(f"error: {tmp_path}: has no book.json: narrate the book") and message.count("\n") == 1
    assert not (tmp_path / "out").exists()


def _state(browser: WebDriver) -> dict[str, object]:
    state: dict[str, object] = browser.execute_script("return window.readAlong.state()")
    return state


@pytest.mark.parametrize("where", ["file", "http"])
def test_the_highlighted_balloon_follows_the_narration(
    browser: WebDriver, narrated: tuple[Path, Path], served: str, where: str
) -> None:
    folder = narrated[1]
    lines = spoken_lines(folder)
    browser.get((folder / "index.html").as_uri() if where == "file" else served)
    assert browser.execute_script("return window.readAlong.pages") == 2
    deadline = time.monotonic() + 10
    while not browser.execute_script("return window.readAlong.ready()") and time.monotonic() < deadline:
        time.sleep(0.05)
    for line in lines:  # seeking into each line shows its page, its balloon and its caption
        browser.execute_script(
            "const a = document.getElementById('narration'); a.currentTime = arguments[0];",
            (line.start_s + line.end_s) / 2,
        )
        box = browser.find_element("id", "balloon-box")
        deadline = time.monotonic() + 10  # the page's image may still be loading: the box is placed when it is
        while (_state(browser)["line"] != line.id or not box.is_displayed()) and time.monotonic() < deadline:
            time.sleep(0.05)
        state = _state(browser)
        assert (state["line"], state["page"]) == (line.id, line.page) and line.text in str(state["caption"])
        assert box.is_displayed() and box.size["width"] > 10
    # Played from a little before the second page's first line: the page turns and the highlight follows.
    turn_s = min(line.start_s for line in lines if line.page == 1)
    browser.execute_script(
        "const a = document.getElementById('narration'); a.currentTime = arguments[0]; a.muted = true; a.play();",
        turn_s - 6,
    )
    seen: set[tuple[int, str]] = set()
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        state = _state(browser)
        now = float(state["time"])  # type: ignore[arg-type]
        expected = line_at(lines, now)
        # the page's state and the clock are read together; a frame may straddle a line's edge: 60 ms of slack
        if line_at(lines, now - 0.06) == expected == line_at(lines, now + 0.06):
            assert state["line"] == (expected.id if expected else None), f"at {now:.2f} s"
            if expected is not None:
                assert state["page"] == expected.page
        if state["line"]:
            seen.add((int(state["page"]), str(state["line"])))  # type: ignore[call-overload]
        time.sleep(0.2)
    assert float(_state(browser)["time"]) > turn_s + 2, "the narration played"  # type: ignore[arg-type]
    assert {page for page, _ in seen} == {0, 1}, "the page turned with the narration"
    browser.execute_script("document.getElementById('narration').pause()")


def test_keys_step_through_the_lines(browser: WebDriver, narrated: tuple[Path, Path]) -> None:
    from selenium.webdriver.common.keys import Keys

    folder = narrated[1]
    lines = spoken_lines(folder)
    browser.get((folder / "index.html").as_uri())
    body = browser.find_element("tag name", "body")
    for line in lines[:3]:
        body.send_keys(Keys.ARROW_RIGHT)
        assert _state(browser)["line"] == line.id
    body.send_keys(Keys.ARROW_LEFT)
    assert _state(browser)["line"] == lines[1].id
    body.send_keys(Keys.PAGE_DOWN)
    state = _state(browser)
    assert state["page"] == 1 and float(state["time"]) < min(ln.start_s for ln in lines if ln.page == 1)  # type: ignore[arg-type]
    assert browser.find_element("id", "caption").get_attribute("aria-live") == "polite"


def test_export_refuses_a_script_edited_since_the_run(narrated: tuple[Path, Path], tmp_path: Path) -> None:
    work = tmp_path / "work"
    shutil.copytree(narrated[0], work)
    script = work / "script.json"
    script.write_bytes(script.read_bytes())  # saved again after the timeline was made
    assert main(["export", str(work), str(tmp_path / "out")]) == 2
    assert not (tmp_path / "out").exists()


def test_every_guided_object_keeps_the_specifications_rules(narrated: tuple[Path, Path]) -> None:
    """The normative rules of Readium Guided Navigation (readium.org/guided-navigation, section 1): ``guided`` is a
    non-empty array; each object holds children (at least one) or a reference (audioref, imgref, textref); roles
    are arrays of strings; references are media fragments of the export's own files."""
    folder = narrated[1]
    document = json.loads((folder / "guided.json").read_text(encoding="utf-8"))
    assert set(document) == {"guided"} and document["guided"]
    seen = 0

    def check(node: dict[str, object]) -> None:
        nonlocal seen
        seen += 1
        children = node.get("children")
        assert (isinstance(children, list) and children) or {"audioref", "imgref", "textref"} & set(node), node
        role = node.get("role", [])
        assert isinstance(role, list) and all(isinstance(r, str) and r for r in role)
        if "text" in node:
            assert isinstance(node["text"], str) and node["text"].strip()
        for key in ("imgref", "audioref"):
            if key in node:
                target, _, fragment = str(node[key]).partition("#")
                assert (folder / target).is_file(), node[key]
                if key == "imgref" and fragment:
                    assert fragment.startswith("xywh=") and all(v.isdigit() for v in fragment[5:].split(","))
                if key == "audioref":
                    start, end = (float(v) for v in fragment.removeprefix("t=").split(","))
                    assert fragment.startswith("t=") and 0 <= start < end
        for child in children or []:  # type: ignore[attr-defined]
            check(child)

    for page in document["guided"]:
        check(page)
    assert seen > len(document["guided"]), "pages with panels and balloons inside"


def test_the_guided_navigation_validates_against_readiums_schema(narrated: tuple[Path, Path]) -> None:
    """guided.json against the pinned copy of Readium's published JSON Schema (tests/data/readium-guided-navigation),
    and guided.js carries the very same document for the player."""
    work, folder = narrated
    document = json.loads((folder / "guided.json").read_text(encoding="utf-8"))
    assert schema_errors(document) == []
    script = Script.model_validate_json((work / "script.json").read_text(encoding="utf-8"))
    kinds = {line.id: line.kind for line in script.lines}
    balloons = [
        b
        for page in document["guided"]
        for panel in page.get("children", [])
        for b in [panel, *panel.get("children", [])]
    ]
    for balloon in (b for b in balloons if b["id"] in kinds):
        assert balloon["role"] == [ROLE_OF_KIND[kinds[balloon["id"]]]], balloon
    player = (folder / "guided.js").read_text(encoding="utf-8").removeprefix("window.READ_ALONG = ").rstrip(";\n")
    assert json.loads(player)["guided"] == document


def test_a_japanese_books_guided_navigation_validates(japanese: tuple[Path, Path]) -> None:
    document = json.loads((japanese[1] / "guided.json").read_text(encoding="utf-8"))
    assert schema_errors(document) == []
    assert any(
        b.get("text")
        for page in document["guided"]
        for panel in page.get("children", [])
        for b in panel.get("children", [])
    )


@pytest.mark.parametrize("where", ["file", "http"])
def test_a_japanese_book_brings_its_font(browser: WebDriver, japanese: tuple[Path, Path], where: str) -> None:
    folder = japanese[1]
    for name in FONT_FILES:  # the OFL travels with the font
        assert (folder / "fonts" / name).read_bytes() == (FONTS / name).read_bytes()
    line = spoken_lines(folder)[0]
    if where == "file":
        browser.get((folder / "index.html").as_uri())
        assert loaded_font_statuses(browser, line.text) == ["loaded"]
        return
    handler = partial(http.server.SimpleHTTPRequestHandler, directory=str(folder))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        browser.get(f"http://127.0.0.1:{server.server_address[1]}/index.html")
        assert loaded_font_statuses(browser, line.text) == ["loaded"]
    finally:
        server.shutdown()
        server.server_close()
