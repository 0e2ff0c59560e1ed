"""End to end: the sample page narrated as a draft, then again with ``--burn-subtitles`` and with
``--no-highlight`` in the same work folder (real OCR, voices, camera and libx264); the MP4s decoded and compared:
the burned text read back with the bundled OCR against the SRT, the speaking highlight on the balloon, and the
sound word swelling with its effect."""

from __future__ import annotations

import re
from pathlib import Path

import av
import numpy as np
import numpy.typing as npt
import pytest

from comic_narrator.artifacts import BookReading, CameraPlan, Timing
from comic_narrator.backends.rapidocr_engine import RapidOcrEngine
from comic_narrator.cli import main
from comic_narrator.video.camera import rect_at
from tests.conftest import SAMPLE_PAGE
from tests.e2e.subtitle_files import srt_cues
from tests.video.mp4_probe import probe_mp4

pytestmark = pytest.mark.slow

Image = npt.NDArray[np.uint8]


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, Path]:
    folder = tmp_path_factory.mktemp("burn")
    options = [str(SAMPLE_PAGE), "--voice-quality", "fast", "--draft", "-q", "--work-dir", str(folder / "work")]
    plain, burned, unlit = folder / "plain.mp4", folder / "burned.mp4", folder / "unlit.mp4"
    assert main([*options, "-o", str(plain)]) == 0
    assert main([*options, "-o", str(burned), "--burn-subtitles"]) == 0
    assert main([*options, "-o", str(unlit), "--no-highlight"]) == 0
    return plain, burned, unlit


def _frame_at(path: Path, seconds: float) -> Image:
    with av.open(str(path)) as container:
        for frame in container.decode(video=0):
            if frame.time is not None and frame.time >= seconds:
                return np.asarray(frame.to_ndarray(format="rgb24"), dtype=np.uint8)
    raise AssertionError(f"{path} ends before {seconds} s")


def _letters(text: str) -> str:
    return re.sub(r"[^a-z]", "", text.lower())


def test_the_subtitle_files_are_the_same_with_and_without_burning(runs: tuple[Path, Path, Path]) -> None:
    plain, burned, _ = runs
    assert srt_cues(plain.with_suffix(".srt")) == srt_cues(burned.with_suffix(".srt"))


def test_each_spoken_cue_is_in_the_picture_while_it_is_up(runs: tuple[Path, Path, Path]) -> None:
    plain, burned, _ = runs
    cues = [cue for cue in srt_cues(burned.with_suffix(".srt")) if cue[1] - cue[0] >= 1.0]
    assert len(cues) >= 3
    with RapidOcrEngine() as ocr:
        for start_s, end_s, text in cues:
            middle_s = (start_s + end_s) / 2
            with_text, without = _frame_at(burned, middle_s), _frame_at(plain, middle_s)
            height = with_text.shape[0]
            band = slice(height // 2, height)
            changed = np.abs(with_text[band].astype(int) - without[band]).max(axis=2) > 40
            assert changed.mean() > 0.01, f"nothing drawn at {middle_s:.2f} s"
            read = _letters(" ".join(line.text for line in ocr.recognize(with_text[band], "en")))
            words = re.findall(r"[a-z]+", text.lower())
            found = [word for word in words if word in read]
            assert len(found) >= 0.8 * len(words), f"at {middle_s:.2f} s OCR read {read!r} for {text!r}"


def test_frames_without_a_cue_are_left_alone(runs: tuple[Path, Path, Path]) -> None:
    plain, burned, _ = runs
    first_cue_s = srt_cues(burned.with_suffix(".srt"))[0][0]
    assert first_cue_s > 1.0
    difference = np.abs(_frame_at(burned, 0.5).astype(int) - _frame_at(plain, 0.5))
    assert difference.mean() < 1.0


def test_a_lone_page_is_titled_by_its_name_and_has_no_card_without_credits(runs: tuple[Path, Path, Path]) -> None:
    plain, _, _ = runs
    with av.open(str(plain)) as container:
        assert container.metadata["title"] == "peppercarrot-ep17-page2"
        assert "artist" not in container.metadata
    timing = Timing.model_validate_json((plain.parent / "work" / "timing.json").read_text(encoding="utf-8"))
    assert probe_mp4(plain).video_s == pytest.approx(timing.duration_s, abs=1e-3)


def test_the_balloon_of_the_line_being_spoken_glows_and_fades_in(runs: tuple[Path, Path, Path]) -> None:
    lit, _, unlit = runs
    start_s, end_s, _ = srt_cues(lit.with_suffix(".srt"))[0]  # the first line alone: its cue is its clip
    assert end_s - start_s > 1.0
    middle_s = (start_s + end_s) / 2
    glowing, plain = _frame_at(lit, middle_s), _frame_at(unlit, middle_s)
    changed = np.abs(glowing.astype(int) - plain).max(axis=2) > 40
    assert 0.002 < changed.mean() < 0.2, "an outline around one balloon, not nothing and not the whole frame"
    added = glowing[changed].astype(int) - plain[changed]
    red, green, blue = (added[:, channel].mean() for channel in range(3))
    assert red > blue + 20 and green > blue, "a warm glow"
    rows, cols = np.nonzero(changed)
    # The glow surrounds a bright balloon: inside the outline's box the frames agree, but for the encoder's
    # noise where the two encodes differ around it (a few levels; a glow painted over it would be tens).
    inside = (
        slice((rows.min() + rows.max()) // 2 - 3, (rows.min() + rows.max()) // 2 + 3),
        slice((cols.min() + cols.max()) // 2 - 3, (cols.min() + cols.max()) // 2 + 3),
    )
    assert np.abs(glowing[inside].astype(int) - plain[inside]).mean() < 6
    # Where it glows, yellow takes blue away: a third as much on the line's first frame (fading in).
    blue_drop = (plain[changed][:, 2].astype(int) - glowing[changed][:, 2]).mean()
    first_lit, first_unlit = _frame_at(lit, start_s), _frame_at(unlit, start_s)
    first_drop = (first_unlit[changed][:, 2].astype(int) - first_lit[changed][:, 2]).mean()
    assert blue_drop > 15 and 0 < first_drop < 0.6 * blue_drop, f"fading in: {first_drop:.1f} then {blue_drop:.1f}"
    quiet = np.abs(_frame_at(lit, 0.5).astype(int) - _frame_at(unlit, 0.5)).mean()
    assert quiet < 1.0, "nothing is lit before the first line"


def test_the_sound_word_swells_when_its_effect_plays(runs: tuple[Path, Path, Path]) -> None:
    lit, _, unlit = runs
    work = lit.parent / "work"
    reading = BookReading.model_validate_json((work / "reading.json").read_text(encoding="utf-8"))
    plan = CameraPlan.model_validate_json((work / "camera.json").read_text(encoding="utf-8"))
    page = reading.pages[0]
    index, shot = next(
        (i, s) for i, s in enumerate(plan.shots) if any(t.kind == "sound" and t.panel == s.panel for t in page.texts)
    )
    word = next(t for t in page.texts if t.kind == "sound" and t.panel == shot.panel)
    frame_in_shot = round(0.2 * plan.fps)  # its effect starts 0.05 s in; the swell is near its height
    seconds = (shot.start_frame + frame_in_shot) / plan.fps
    swollen, plain = _frame_at(lit, seconds), _frame_at(unlit, seconds)
    changed = np.abs(swollen.astype(int) - plain).max(axis=2) > 40
    assert changed.sum() > 50, "the lettering moved"
    x, y, w, _ = rect_at(plan, index, frame_in_shot)
    scale = swollen.shape[1] / w
    bx, by, bw, bh = word.bbox
    left, top = (bx - x - 0.3 * bw) * scale, (by - y - 0.3 * bh) * scale
    right, bottom = (bx + bw - x + 0.3 * bw) * scale, (by + bh - y + 0.3 * bh) * scale
    rows, cols = np.nonzero(changed)
    near = (cols >= left) & (cols <= right) & (rows >= top) & (rows <= bottom)
    assert near.mean() > 0.9, "only around the sound word"
