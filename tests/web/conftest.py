"""Headless Chromium for the page tests: Debian's ``chromium`` driven through its own ``chromedriver``
(selenium, from the test extra), or a skip that names what is missing."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

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
