"""Headless Chromium for the page tests: Debian's ``chromium`` driven through its own ``chromedriver``
(selenium, from the test extra), or a skip that names what is missing; the narrated books the web tests share,
and the review server over a copy of one (``served``)."""

from __future__ import annotations

import http.client
import json
import shutil
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from comic_narrator.artifacts import BookReading, Script
from comic_narrator.web.review import ReviewSession
from comic_narrator.web.server import ReviewServer

if TYPE_CHECKING:
    from selenium.webdriver.remote.webdriver import WebDriver

CHROMEDRIVER = Path("/usr/bin/chromedriver")
"""The driver Debian's ``chromium-driver`` installs; used by its path so nothing is fetched at test time."""


def _chromium() -> str | None:
    return shutil.which("chromium") or shutil.which("chromium-browser")


@pytest.fixture(scope="session")
def browser() -> Iterator[WebDriver]:
    """One headless browser for the session (autoplay allowed, sound muted), or a skip with the reason."""
    try:
        from selenium import webdriver
        from selenium.webdriver.chrome.service import Service
    except ImportError:
        pytest.skip("selenium is not installed (pip install -e '.[test]')")
    binary = _chromium()
    if binary is None or not CHROMEDRIVER.exists():
        pytest.skip("no headless browser: apt-get install chromium chromium-driver (Debian's browser and its driver)")
    options = webdriver.ChromeOptions()
    options.binary_location = binary
    for argument in (
        "--headless=new",
        "--no-sandbox",  # tests run as root in containers, where Chromium's sandbox cannot start
        "--disable-dev-shm-usage",
        "--autoplay-policy=no-user-gesture-required",
        "--mute-audio",
        "--window-size=1400,1000",
    ):
        options.add_argument(argument)
    driver = webdriver.Chrome(service=Service(str(CHROMEDRIVER)), options=options)
    driver.set_page_load_timeout(60)
    try:
        yield driver
    finally:
        driver.quit()


@pytest.fixture(scope="session")
def narrated(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """(work folder, read-along folder) of a two-page book (the sample page twice) narrated with --read-along."""
    from comic_narrator.cli import main
    from tests.conftest import SAMPLE_PAGE

    root = tmp_path_factory.mktemp("read-along")
    book = root / "book"
    book.mkdir()
    for name in ("p1.jpg", "p2.jpg"):
        shutil.copyfile(SAMPLE_PAGE, book / name)
    out, folder = root / "book.mp4", root / "read-along"
    argv = [str(book), "-o", str(out), "-q", "--voice-quality", "fast", "--draft", "--read-along", str(folder)]
    assert main(argv) == 0
    return root / "book.mp4.work", folder


@pytest.fixture(scope="session")
def japanese(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """(work folder, read-along folder) of one page of the bundled manga sample, narrated with --read-along."""
    from comic_narrator.cli import main
    from tests.conftest import REPO

    root = tmp_path_factory.mktemp("japanese")
    out, folder = root / "manga.mp4", root / "read-along"
    manga = REPO / "samples" / "blackjack-ni-yoroshiku-v01-p08-11.cbz"
    argv = [str(manga), "--layout", "manga", "--pages", "3", "-o", str(out), "-q", "--voice-quality", "fast"]
    assert main([*argv, "--draft", "--read-along", str(folder)]) == 0
    return root / "manga.mp4.work", folder


def loaded_font_statuses(browser: WebDriver, text: str) -> object:
    """What loading the project's Japanese font for ``text`` gives in the page: ["loaded"] when it is reachable.
    The page's font faces are waited for first (up to 10 s): a face not registered yet would load nothing."""
    return browser.execute_async_script(
        """
        const [text, done] = [arguments[0], arguments[arguments.length - 1]];
        const started = Date.now();
        (function attempt() {
          const known = [...document.fonts].some((f) => f.family.replace(/"/g, "") === "Narrator Sans JP");
          if (!known && Date.now() - started < 10000) { setTimeout(attempt, 100); return; }
          document.fonts.load('18px "Narrator Sans JP"', text)
            .then((faces) => done(faces.map((f) => f.status)), (error) => done(String(error)));
        })();
        """,
        text,
    )


@dataclass(frozen=True)
class Served:
    """A review server on loopback over a copy of the narrated book's work folder, its session and that folder."""

    server: ReviewServer
    session: ReviewSession
    work: Path

    def ask(self, method: str, path: str, body: bytes | None = None) -> tuple[int, dict[str, Any]]:
        """One request with the session's token; the status and the JSON answer."""
        host, port = self.server.server_address[:2]
        connection = http.client.HTTPConnection(str(host), port, timeout=60)
        connection.request(method, path, body=body, headers={"X-Review-Token": self.server.token})
        answer = connection.getresponse()
        data = answer.read()
        connection.close()
        return answer.status, json.loads(data)

    def save(self, edit: object) -> tuple[int, str]:
        """POST ``edit`` as the page does; the status and the one line answered (the message or the error)."""
        status, answer = self.ask("POST", "/api/save", json.dumps(edit).encode("utf-8"))
        return status, str(answer.get("message", answer.get("error")))

    def script(self) -> Script:
        return Script.model_validate_json((self.work / "script.json").read_bytes())

    def reading(self) -> BookReading:
        return BookReading.model_validate_json((self.work / "reading.json").read_bytes())


@pytest.fixture
def served(narrated: tuple[Path, Path], tmp_path: Path) -> Iterator[Served]:
    """The review server over a copy of the narrated two-page book's work folder (each test edits its own copy)."""
    from comic_narrator.config import VoiceConfig
    from comic_narrator.voice.voicebank import open_voice_bank

    work = tmp_path / "book.mp4.work"
    shutil.copytree(narrated[0], work, ignore=shutil.ignore_patterns("segments", "*.log"))
    voice = VoiceConfig(quality="fast")
    with open_voice_bank(voice) as bank:
        session = ReviewSession(work, bank, voice)
        server = ReviewServer(session)
        server.serve_in_thread()
        try:
            yield Served(server, session, work)
        finally:
            server.shutdown()
            server.server_close()
