"""End to end on a page of the bundled manga, its reading given English translations (as the LLM reader gives
them): ``--burn-subtitles`` draws the Japanese cues and ``--burn-subtitles en`` the English ones into the
picture, each read back from the decoded frames with the bundled OCR (real OCR, voices, camera and libx264)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import av
import numpy as np
import pytest

from comic_narrator.backends.rapidocr_engine import RapidOcrEngine
from comic_narrator.cli import main
from tests.e2e.subtitle_files import srt_cues

pytestmark = pytest.mark.slow

MANGA = Path(__file__).parents[2] / "samples" / "blackjack-ni-yoroshiku-v01-p08-11.cbz"
OPTIONS = [str(MANGA), "--layout", "manga", "--pages", "1", "--voice-quality", "fast", "--draft", "-q"]


@pytest.fixture(scope="module")
def burned(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    folder = tmp_path_factory.mktemp("burned-ja")
    work = ["--work-dir", str(folder / "work")]
    assert main([*OPTIONS, *work, "--vision-only", "-o", str(folder / "read.mp4")]) == 0
    reading = json.loads((folder / "work" / "reading.json").read_text(encoding="utf-8"))
    story = [t for t in reading["pages"][0]["texts"] if t["kind"] not in ("furniture", "sound")]
    for number, text in enumerate(story, start=1):
        text["translation"] = f"English line {number}"
    edited = folder / "reading.json"
    edited.write_text(json.dumps(reading, ensure_ascii=False), encoding="utf-8")
    outputs = {}
    for lang, flag in (("ja", []), ("en", ["en"])):
        outputs[lang] = folder / f"{lang}.mp4"
        given = ["--reading", str(edited), "--burn-subtitles", *flag, "-o", str(outputs[lang])]
        assert main([*OPTIONS, *work, *given]) == 0
    return outputs


def _read_at(ocr: RapidOcrEngine, path: Path, seconds: float, lang: str) -> str:
    with av.open(str(path)) as container:
        frame = next(f for f in container.decode(video=0) if f.time is not None and f.time >= seconds)
    image = np.asarray(frame.to_ndarray(format="rgb24"))
    lower = image[image.shape[0] * 2 // 3 :]
    return "".join(line.text for line in ocr.recognize(lower, "ja" if lang == "ja" else "en"))


def test_the_book_s_japanese_and_its_english_translation_are_burned_in(burned: dict[str, Path]) -> None:
    japanese = srt_cues(burned["ja"].with_suffix(".srt"))
    english = {(start, end): text for start, end, text in srt_cues(burned["ja"].with_name("ja.en.srt"))}
    cue = next(c for c in japanese if c[1] - c[0] >= 1.0 and (c[0], c[1]) in english and "\n" not in c[2])
    middle_s = (cue[0] + cue[1]) / 2
    with RapidOcrEngine() as ocr:
        read_ja = _read_at(ocr, burned["ja"], middle_s, "ja")
        read_en = _read_at(ocr, burned["en"], middle_s, "en")
    wanted = re.sub(r"[\s.…!?！？、。・]", "", cue[2])
    found = sum(1 for char in wanted if char in read_ja)
    assert found >= 0.7 * len(wanted), f"OCR read {read_ja!r} for {cue[2]!r}"
    translation = english[(cue[0], cue[1])].lower()  # "english line N"
    read = read_en.lower().replace(" ", "")
    assert "engl" in read, f"OCR read {read_en!r}"
    assert translation.replace("english ", "").replace(" ", "") in read, f"OCR read {read_en!r} for {translation!r}"
