"""The browser fixture drives a real Chromium: a page served over loopback HTTP runs its script, and the same
page opened from disk does too."""

from __future__ import annotations

import http.server
import threading
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from selenium.webdriver.remote.webdriver import WebDriver

PAGE = """<!doctype html><title>t</title><p id="out">static</p>
<script>document.getElementById("out").textContent = String(6 * 7) + " " + location.protocol;</script>"""


def test_the_browser_runs_a_page_from_disk_and_over_http(browser: WebDriver, tmp_path: Path) -> None:
    (tmp_path / "index.html").write_text(PAGE, encoding="utf-8")
    browser.get((tmp_path / "index.html").as_uri())
    assert browser.find_element("id", "out").text == "42 file:"
    handler = partial(http.server.SimpleHTTPRequestHandler, directory=str(tmp_path))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        browser.get(f"http://127.0.0.1:{server.server_address[1]}/index.html")
        assert browser.find_element("id", "out").text == "42 http:"
    finally:
        server.shutdown()
        server.server_close()
