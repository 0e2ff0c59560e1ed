"""End to end on a page of the bundled manga, read once, then given names, translations and a sound word (as the
LLM reader gives them, or a reviewer editing reading.json) and narrated: the Japanese and English subtitle files
and the two tracks inside the MP4, decoded back."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from comic_narrator.artifacts import Timing
from comic_narrator.cli import main
from tests.e2e.subtitle_files import mp4_subtitles, said, srt_cues, vtt_cues

pytestmark = pytest.mark.slow

MANGA = Path(__file__).parents[2] / "samples" / "blackjack-ni-yoroshiku-v01-p08-11.cbz"


def _edited(reading: dict[str, Any]) -> dict[str, Any]:
    """Page 1 as a reader that names speakers and translates would leave it: the second balloon of the first
    panel said by a named character (a voice taking over within a panel), every line translated, and a sound word
    lettered in the last panel."""
    page = reading["pages"][0]
    story = [t for t in page["texts"] if t["kind"] != "furniture"]
    assert len(story) >= 2 and story[0]["panel"] == story[1]["panel"] == 0, "page 1 opens with two balloons"
    story[1]["speaker"] = "akagi"
    page["characters"] = [{"id": "akagi", "name": "Akagi", "gender": "male", "age": "young"}]
    for number, text in enumerate(story, start=1):
        text["translation"] = f"English line {number}"
    last_panel = len(page["panels"]) - 1
    page["texts"].append(
        {
            "bbox": [10, 10, 40, 40],
            "kind": "sound",
            "text": "ドン",
            "panel": last_panel,
            "lang": "ja",
            "translation": "BAM",
        }
    )
    return reading


@pytest.fixture(scope="module")
def narrated(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("subtitles")
    out = folder / "manga.mp4"
    options = [str(MANGA), "--layout", "manga", "--pages", "1", "--voice-quality", "fast", "-o", str(out), "-q"]
    assert main([*options, "--vision-only"]) == 0
    edited = folder / "reading.json"
    stored = json.loads((folder / "manga.mp4.work" / "reading.json").read_text(encoding="utf-8"))
    edited.write_text(json.dumps(_edited(stored), ensure_ascii=False), encoding="utf-8")
    assert main([*options, "--reading", str(edited)]) == 0
    return out


def test_the_book_and_its_translation_are_files_and_tracks(narrated: Path) -> None:
    japanese, english = narrated.with_suffix(".srt"), narrated.with_name("manga.en.srt")
    for srt in (japanese, english):
        assert vtt_cues(srt.with_suffix(".vtt")) == srt_cues(srt)
    tracks = mp4_subtitles(narrated)
    assert [(lang, codec) for lang, codec, _ in tracks] == [("jpn", "mov_text"), ("eng", "mov_text")]
    assert tracks[0][2] == srt_cues(japanese)
    assert tracks[1][2] == srt_cues(english)


def test_the_english_track_says_the_translations(narrated: Path) -> None:
    english = srt_cues(narrated.with_name("manga.en.srt"))
    spoken = {said(text) for _, _, text in english} - {""}
    assert spoken and all(re.fullmatch(r"English line \d+", words) for words in spoken)


def test_a_voice_that_takes_over_in_a_panel_is_named_and_ids_never(narrated: Path) -> None:
    japanese = [text for _, _, text in srt_cues(narrated.with_suffix(".srt"))]
    english = [text for _, _, text in srt_cues(narrated.with_name("manga.en.srt"))]
    assert [t for t in japanese if "（" in t] == [next(t for t in japanese if t.startswith("（Akagi）\n"))]
    assert sum(t.startswith("(Akagi)\nEnglish line 2") for t in english) == 1
    assert not any(re.search(r"char\d+", t) for t in japanese + english)


def test_the_sound_word_is_bracketed_in_its_panel_shot_in_both_languages(narrated: Path) -> None:
    timing = Timing.model_validate_json((narrated.with_name("manga.mp4.work") / "timing.json").read_text())
    shot = next(s for s in timing.shots if s.panel == max(s.panel for s in timing.shots))
    for srt, tag in ((narrated.with_suffix(".srt"), "[ドン]"), (narrated.with_name("manga.en.srt"), "[BAM]")):
        tagged = [(start, end) for start, end, text in srt_cues(srt) if tag in text.split("\n")]
        assert tagged, f"no {tag} in {srt.name}"
        assert all(shot.start_s - 1e-3 <= start < end <= shot.start_s + shot.duration_s + 1e-3 for start, end in tagged)
