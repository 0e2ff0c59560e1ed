"""English subtitles for a Japanese book, end to end through the LLM reader: the bundled manga's first page read
locally, sent to the loopback chat server (tests/llm/chat_server.py; its "translate" mode gives every lettering
that is not ASCII a stand-in English translation naming its region), narrated with the bundled voices, and the
OUT.en.srt beside the video read back."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from comic_narrator.cli import main
from tests.e2e.subtitle_files import srt_cues
from tests.llm.chat_server import chat_server

pytestmark = pytest.mark.slow

MANGA = Path(__file__).parents[2] / "samples" / "blackjack-ni-yoroshiku-v01-p08-11.cbz"


def test_a_japanese_book_read_by_the_llm_gets_english_subtitles(tmp_path: Path) -> None:
    out = tmp_path / "manga.mp4"
    options = [str(MANGA), "--layout", "manga", "--pages", "1", "--voice-quality", "fast", "-o", str(out), "-q"]
    with chat_server("translate") as (url, state):
        assert main([*options, "--vision", "llm", "--llm-url", url]) == 0
    assert len(state.requests) == 1
    reading = json.loads((tmp_path / "manga.mp4.work" / "reading.json").read_text(encoding="utf-8"))
    assert reading["lang"] == "ja"
    page = reading["pages"][0]
    story = [t for t in page["texts"] if t["kind"] != "furniture"]
    translated = {t["translation"] for t in story if t["translation"]}
    assert translated and len(translated) == len([t for t in story if not t["text"].isascii()])
    script = json.loads((tmp_path / "manga.mp4.work" / "script.json").read_text(encoding="utf-8"))
    spoken = [line for line in script["lines"] if line["kind"] != "sound"]
    assert spoken, "the page has lines to say"
    own = srt_cues(out.with_suffix(".srt"))
    english = srt_cues(out.with_suffix(".en.srt"))
    assert len(english) == len(own)
    # Each English cue is the translation of the Japanese cue it stands beside, at the same times.
    for (start, end, text), (own_start, own_end, own_text) in zip(english, own, strict=True):
        assert (start, end) == (own_start, own_end)
        regions = [int(n) for n in re.findall(r"English of region (\d+)", text)]
        assert regions, text
        for index in regions:
            assert page["texts"][index]["text"].replace("\n", " ")[:4] in own_text.replace("\n", " ")
