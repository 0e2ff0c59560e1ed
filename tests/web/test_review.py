"""`comic-narrator review` end to end: the real command narrates the sample page and serves the review page on
loopback; requests without the token are refused, only the work folder's files are served, malformed edits are
refused without touching the disk, a line is voiced on demand, and in headless Chromium an edited line and a new
voice are saved and used by the next run."""

from __future__ import annotations

import http.client
import json
import queue
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

import pytest
import soundfile
import yaml

from comic_narrator.artifacts import BookReading, Cast, ClipList, Script, Timing
from comic_narrator.cli import main
from comic_narrator.config import VoiceConfig
from comic_narrator.voice.voicebank import open_voice_bank
from comic_narrator.web.review import ReviewSession
from comic_narrator.web.server import ReviewServer
from tests.conftest import SAMPLE_PAGE
from tests.web.conftest import loaded_font_statuses

if TYPE_CHECKING:
    from selenium.webdriver.remote.webdriver import WebDriver
    from selenium.webdriver.remote.webelement import WebElement

pytestmark = pytest.mark.slow
RUN_OPTIONS = ["-q", "--voice-quality", "fast", "--draft"]
NEW_TEXT = "Off we go to the land of the setting moons, where Shichimi lives!"
ADDED_TEXT = "The clouds close in around the broom."


@dataclass(frozen=True)
class Review:
    url: str
    host: str
    port: int
    token: str
    output: Path
    work: Path


@pytest.fixture(scope="module")
def review(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Review]:
    output = tmp_path_factory.mktemp("review") / "page.mp4"
    command = [sys.executable, "-c", "import sys; from comic_narrator.cli import main; sys.exit(main(sys.argv[1:]))"]
    command += ["review", str(SAMPLE_PAGE), "-o", str(output), *RUN_OPTIONS, "--no-browser"]
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    lines: queue.Queue[str] = queue.Queue()
    threading.Thread(target=lambda: [lines.put(line) for line in process.stdout or []], daemon=True).start()
    try:
        url, said, deadline = "", [], time.monotonic() + 600
        while not url and time.monotonic() < deadline and (process.poll() is None or not lines.empty()):
            try:
                line = lines.get(timeout=1)
            except queue.Empty:
                continue
            said.append(line)
            url = line.removeprefix("review: ").strip() if line.startswith("review: ") else ""
        assert url, f"the review server did not start (exit status {process.poll()}): {''.join(said)}"
        parts = urlsplit(url)
        assert parts.hostname == "127.0.0.1"
        yield Review(
            url,
            parts.hostname,
            parts.port or 80,
            parts.query.removeprefix("token="),
            output,
            output.with_name("page.mp4.work"),
        )
    finally:
        process.send_signal(signal.SIGINT)
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def _request(
    review: Review, method: str, path: str, body: bytes | None = None, token: str | None = None
) -> tuple[int, bytes]:
    """One request with the path sent exactly as given (no client-side tidying of '..')."""
    connection = http.client.HTTPConnection(review.host, review.port, timeout=120)
    headers = {"Content-Type": "application/json"}
    if token is not None:
        headers["X-Review-Token"] = token
    connection.request(method, path, body=body, headers=headers)
    answer = connection.getresponse()
    data = answer.read()
    connection.close()
    return answer.status, data


def test_requests_without_the_token_are_refused(review: Review) -> None:
    assert _request(review, "GET", f"/?token={review.token}")[0] == 200
    for path in ("/", "/?token=wrong", "/api/book", "/files/script.json", "/static/review.js"):
        status, body = _request(review, "GET", path)
        assert status == 403 and b"token" in body, path
    script = (review.work / "script.json").read_bytes()
    status, _ = _request(review, "POST", "/api/save", b'{"lines": [], "voices": {}}', token="wrong")
    assert status == 403 and (review.work / "script.json").read_bytes() == script


def test_only_files_of_the_work_folder_are_served(review: Review) -> None:
    status, body = _request(review, "GET", f"/files/book.json?token={review.token}")
    assert status == 200 and body == (review.work / "book.json").read_bytes()
    outside = review.work.parent / "secret.txt"
    outside.write_text("not yours", encoding="utf-8")
    (review.work / "link-out.txt").symlink_to(outside)
    for path in (
        "../secret.txt",
        "%2e%2e/secret.txt",
        "..%2fsecret.txt",
        "link-out.txt",
        "/etc/hostname",
        "pages/../../secret.txt",
        "",
        "clips",
    ):
        status, body = _request(review, "GET", f"/files/{path}?token={review.token}")
        assert status == 404 and b"not yours" not in body, path


def test_a_malformed_edit_is_refused_and_changes_nothing(review: Review) -> None:
    script = Script.model_validate_json((review.work / "script.json").read_bytes())
    before = {p.name: p.read_bytes() for p in review.work.iterdir() if p.is_file() and p.suffix != ".log"}
    first = script.lines[0].model_dump()
    bad_edits = {
        b"{not json": "not a valid edit",
        json.dumps({"lines": [{**first, "panel": 40}], "voices": {}}).encode(): "line 1: page 1 has panels 1..",
        json.dumps({"lines": [{**first, "page": 7}], "voices": {}}).encode(): "line 1: page 8 is not in the book",
        json.dumps({"lines": [{**first, "text": "   "}], "voices": {}}).encode(): "line 1: the text is empty",
        json.dumps({"lines": [{**first, "emotion": "smug"}], "voices": {}}).encode(): "first at lines.0.emotion",
        json.dumps({"lines": [{**first, "speaker": "a b/c"}], "voices": {}}).encode(): "is not an id",
        json.dumps({"lines": [{**first, "id": "../x"}], "voices": {}}).encode(): "line 1: id '../x' is not a line id",
        json.dumps({"lines": [first, first], "voices": {}}).encode(): "line 2: id p001-t01 is used twice",
        json.dumps({"lines": [first], "voices": {first["speaker"]: "no-such-voice"}}).encode(): "unknown voice",
        json.dumps({"lines": [first], "voices": {}, "extra": 1}).encode(): "first at extra",
        json.dumps({"lines": [first], "panels": {"0": [{"bbox": [0, 0, 99999, 50], "was": 0}]}}).encode(): (
            "page 1, panel 1: (0, 0, 99999, 50) is not inside"
        ),
        json.dumps({"lines": [first], "panels": {"0": [{"bbox": [0, 0, 50, 50], "was": 0}] * 2}}).encode(): (
            "page 1, panel 2: it was panel 1, which is not a panel"
        ),
        json.dumps({"lines": [first], "panels": {"9": []}}).encode(): "page 10 is not in the book",
        json.dumps({"lines": [first], "panels": {"0": []}}).encode(): "line 1: page 1 has panels 1..0",
    }
    for body, expected in bad_edits.items():
        status, answer = _request(review, "POST", "/api/save", body, token=review.token)
        assert status == 400, body
        assert expected in json.loads(answer)["error"], (body, answer)
    after = {p.name: p.read_bytes() for p in review.work.iterdir() if p.is_file() and p.suffix != ".log"}
    assert after == before, "a refused edit wrote nothing"
    assert not list(review.work.glob(".review-*")), "no scratch copies left behind"


def test_a_line_is_voiced_on_demand_and_then_reused(review: Review) -> None:
    line = Script.model_validate_json((review.work / "script.json").read_bytes()).lines[0].model_dump()
    request = json.dumps({"line": {**line, "text": "A line nobody has voiced before."}, "voice": "en-joe-deep"})
    started = time.monotonic()
    status, answer = _request(review, "POST", "/api/clip", request.encode(), token=review.token)
    first_s = time.monotonic() - started
    assert status == 200, answer
    url = json.loads(answer)["url"]
    assert url.startswith("/files/clips/") and url.endswith(".wav")
    status, wav = _request(review, "GET", f"{url}?token={review.token}")
    assert status == 200 and wav[:4] == b"RIFF"
    info = soundfile.info(str(review.work / url.removeprefix("/files/")))
    assert info.duration > 1.0, "a whole sentence of speech"
    started = time.monotonic()
    assert json.loads(_request(review, "POST", "/api/clip", request.encode(), token=review.token)[1])["url"] == url
    assert time.monotonic() - started < first_s, "the second play is the cached clip"


def _loaded(browser: WebDriver) -> bool:
    """The review page has its book (its script is added by the page itself, so it may not be there yet)."""
    return bool(browser.execute_script("return !!(window.review && window.review.loaded())"))


def _wait_for(condition: object, what: str, timeout_s: float = 60) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if callable(condition) and condition():
            return
        time.sleep(0.1)
    raise AssertionError(f"timed out waiting for {what}")


def test_an_edit_saved_in_the_browser_is_used_by_the_next_run(browser: WebDriver, review: Review) -> None:
    from selenium.webdriver.support.select import Select

    reading = BookReading.model_validate_json((review.work / "reading.json").read_bytes())
    script = Script.model_validate_json((review.work / "script.json").read_bytes())
    first = script.lines[0]
    browser.get(review.url)
    _wait_for(lambda: _loaded(browser), "the page to load")
    assert len(browser.find_elements("css selector", "svg rect.panel")) == len(reading.pages[0].panels)
    assert len(browser.find_elements("css selector", "svg rect.text")) == len(reading.pages[0].texts)
    rows = browser.find_elements("css selector", "#lines li")
    assert [row.get_attribute("data-id") for row in rows] == [line.id for line in script.lines]
    text = rows[0].find_element("css selector", "textarea.text")
    text.clear()
    text.send_keys(NEW_TEXT)
    voice = Select(browser.find_element("css selector", f"#cast tr[data-speaker='{first.speaker}'] select"))
    old_voice = voice.first_selected_option.get_attribute("value")
    new_voice = next(o.get_attribute("value") for o in voice.options if o.get_attribute("value") != old_voice)
    voice.select_by_value(str(new_voice))
    assert browser.execute_script("return window.review.dirty()")
    t01, t02, *rest = script.lines
    assert t01.panel == t02.panel and rest, "the sample's first two lines share a panel"

    def row(index: int) -> WebElement:
        return browser.find_elements("css selector", "#lines li")[index]

    Select(row(1).find_element("css selector", "select.emotion")).select_by_value("sad")
    row(1).find_element("css selector", "button.up").click()  # t02 before t01, in the same panel
    row(1).find_element("css selector", "button.add").click()  # a new line after t01
    row(2).find_element("css selector", "textarea.text").send_keys(ADDED_TEXT)
    Select(row(2).find_element("css selector", "select.kind")).select_by_value("speech")
    row(len(script.lines)).find_element("css selector", "button.delete").click()  # the last line goes
    browser.find_element("id", "save").click()
    _wait_for(lambda: browser.find_element("id", "status").text.startswith("saved "), "the save")
    saved = Script.model_validate_json((review.work / "script.json").read_bytes())
    assert [line.id for line in saved.lines] == [t02.id, t01.id, "p001-n01", *(line.id for line in rest[:-1])]
    assert saved.lines[1].text == NEW_TEXT and saved.lines[0].emotion == "sad"
    added = saved.lines[2]
    assert (added.text, added.speaker, added.kind, added.panel) == (ADDED_TEXT, "narrator", "speech", t01.panel)
    assert saved.lines[3:] == rest[:-1]
    assert yaml.safe_load((review.work / "review-cast.yaml").read_text(encoding="utf-8"))[first.speaker] == new_voice

    assert main([str(SAMPLE_PAGE), "-o", str(review.output), *RUN_OPTIONS]) == 0
    subtitles = review.output.with_suffix(".srt").read_text(encoding="utf-8")
    assert NEW_TEXT in subtitles and ADDED_TEXT in subtitles and rest[-1].text not in subtitles
    assert subtitles.index(t02.text[:20]) < subtitles.index(NEW_TEXT[:20]) < subtitles.index(ADDED_TEXT[:20])
    cast = Cast.model_validate_json((review.work / "cast.json").read_bytes())
    assert cast.voice_for(first.speaker).voice == new_voice
    clips = ClipList.model_validate_json((review.work / "clips.json").read_bytes()).clips
    assert {c.voice for c in clips if c.line_id in {ln.id for ln in saved.lines if ln.speaker == first.speaker}} == {
        new_voice
    }


def test_panels_fixed_in_the_browser_are_kept_for_the_next_run(browser: WebDriver, review: Review) -> None:
    from selenium.webdriver.common.keys import Keys

    before = BookReading.model_validate_json((review.work / "reading.json").read_bytes()).pages[0]
    script = {line.id: line for line in Script.model_validate_json((review.work / "script.json").read_bytes()).lines}
    assert len(before.panels) >= 4
    browser.get(review.url)
    _wait_for(lambda: _loaded(browser), "the page to load")
    browser.find_element("css selector", "#page-0 details.panels summary").click()
    rows = browser.find_elements("css selector", "#page-0 .panel-list li")
    assert len(rows) == len(before.panels)
    rows[2].find_element("css selector", "button.later").click()  # panels 3 and 4 trade places in reading order
    x = browser.find_elements("css selector", "#page-0 .panel-list li")[0].find_element("css selector", ".panel-x")
    x.send_keys(Keys.CONTROL, "a")
    x.send_keys(str(before.panels[0].bbox[0] + 2), Keys.TAB)
    browser.find_element("id", "save").click()
    _wait_for(lambda: browser.find_element("id", "status").text.startswith("saved "), "the save")

    saved = BookReading.model_validate_json((review.work / "review-reading.json").read_bytes()).pages[0]
    old = [panel.bbox for panel in before.panels]
    x0, y0, w0, h0 = old[0]
    assert [panel.bbox for panel in saved.panels] == [(x0 + 2, y0, w0, h0), old[1], old[3], old[2], *old[4:]]
    swap = {2: 3, 3: 2}
    assert [t.panel for t in saved.texts] == [swap.get(t.panel, t.panel) for t in before.texts]
    lines = Script.model_validate_json((review.work / "script.json").read_bytes()).lines
    assert {line.id: line.panel for line in lines} == {i: swap.get(ln.panel, ln.panel) for i, ln in script.items()}
    assert [line.panel for line in lines] == sorted(line.panel for line in lines), "said panel by panel"

    assert main([str(SAMPLE_PAGE), "-o", str(review.output), *RUN_OPTIONS]) == 0
    read = BookReading.model_validate_json((review.work / "reading.json").read_bytes()).pages[0]
    assert read.panels == saved.panels, "the run started from the fixed reading"
    timing = Timing.model_validate_json((review.work / "timing.json").read_bytes())
    shot_of = {line_id: shot.panel for shot in timing.shots for line_id in shot.line_ids}
    assert shot_of == {line.id: line.panel for line in lines}


def test_save_and_render_runs_the_edited_book_from_the_page(browser: WebDriver, review: Review) -> None:
    browser.get(review.url)
    _wait_for(lambda: _loaded(browser), "the page to load")
    text = browser.find_elements("css selector", "#lines li")[-1].find_element("css selector", "textarea.text")
    text.clear()
    text.send_keys("DRATS! Hold on tight, Carrot!")
    browser.find_element("id", "render").click()
    _wait_for(lambda: browser.find_element("id", "status").text.startswith("wrote "), "the render", timeout_s=600)
    assert "DRATS! Hold on tight, Carrot!" in review.output.with_suffix(".srt").read_text(encoding="utf-8")
    fixed = BookReading.model_validate_json((review.work / "review-reading.json").read_bytes())
    assert BookReading.model_validate_json((review.work / "reading.json").read_bytes()).pages == fixed.pages


def test_the_review_page_of_a_japanese_book(browser: WebDriver, japanese: tuple[Path, Path]) -> None:
    """The same server in-process over a manga page: its lines on the page, and the project's font for them."""
    work = japanese[0]
    script = Script.model_validate_json((work / "script.json").read_bytes())
    voice = VoiceConfig(quality="fast")
    with open_voice_bank(voice) as bank:
        server = ReviewServer(ReviewSession(work, bank, voice))
        server.serve_in_thread()
        try:
            browser.get(server.url)
            _wait_for(lambda: _loaded(browser), "the page to load")
            shown = [t.get_attribute("value") for t in browser.find_elements("css selector", "#lines textarea.text")]
            assert shown == [line.text for line in script.lines] and shown
            assert loaded_font_statuses(browser, script.lines[0].text) == ["loaded"]
            assert _request_font(server) == (403, 200)
        finally:
            server.shutdown()
            server.server_close()


def _request_font(server: ReviewServer) -> tuple[int, int]:
    """The font's answer without and with the token."""
    host, port = server.server_address[:2]
    statuses = []
    for query in ("", f"?token={server.token}"):
        connection = http.client.HTTPConnection(str(host), port, timeout=30)
        connection.request("GET", f"/static/NarratorSansJP-Bold.ttf{query}")
        statuses.append(connection.getresponse().status)
        connection.close()
    return statuses[0], statuses[1]
