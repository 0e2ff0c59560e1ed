"""The Open JTalk engine's own rules: every voice but Mei is made from Mei (casting keeps two leads off one
recorded speaker by it), and without pyopenjtalk-plus the engine says what to install."""

from __future__ import annotations

import sys

import pytest

from comic_narrator.backends.openjtalk_tts import OpenJTalkEngine
from comic_narrator.backends.protocols import Delivery
from comic_narrator.errors import EngineError


def test_every_voice_but_mei_is_made_from_mei() -> None:
    made_from = {info.id: info.derived_from for info in OpenJTalkEngine().voices()}
    assert made_from.pop("ja-mei") is None
    assert len(made_from) >= 8 and set(made_from.values()) == {"ja-mei"}


def test_without_pyopenjtalk_the_engine_says_what_to_install(monkeypatch: pytest.MonkeyPatch) -> None:
    # A None entry in sys.modules is what the import system reports as a package that is not installed.
    monkeypatch.setitem(sys.modules, "pyopenjtalk", None)
    with pytest.raises(EngineError, match="need pyopenjtalk-plus"):
        OpenJTalkEngine().synthesize("はい。", "ja-mei", Delivery())
