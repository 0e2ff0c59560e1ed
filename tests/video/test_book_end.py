"""End to end on two pages of the bundled manga (its CBZ carries a ComicInfo.xml): the MP4's title and artist,
the end card read back from the decoded frames with the bundled OCR, chapter markers at the pages' first frames,
one file per chapter with its own subtitles, and the page transition (slide, fade, cut) decoded (real OCR,
voices, camera and libx264)."""

from __future__ import annotations

from pathlib import Path

import av
import numpy as np
import pytest

from comic_narrator.artifacts import Timing
from comic_narrator.backends.rapidocr_engine import RapidOcrEngine
from comic_narrator.cli import main
from comic_narrator.video.transition import TRANSITION_S
from tests.audio.measure import decoded_audio, longest_quiet_s
from tests.e2e.subtitle_files import mp4_subtitles, srt_cues
from tests.video.mp4_probe import probe_mp4

pytestmark = pytest.mark.slow

MANGA = Path(__file__).parents[2] / "samples" / "blackjack-ni-yoroshiku-v01-p08-11.cbz"
CREDIT = "Narrated by comic-narrator"
OPTIONS = [str(MANGA), "--layout", "manga", "--pages", "1-2", "--voice-quality", "fast", "--draft", "-q"]


@pytest.fixture(scope="module")
def narrated(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("book-end") / "manga.mp4"
    extras = ["--chapters", "1,2", "--split-chapters", "--credits", CREDIT]
    assert main([*OPTIONS, *extras, "-o", str(out)]) == 0
    return out


@pytest.fixture(scope="module")
def transitions(narrated: Path) -> dict[str, Path]:
    """The same book with each transition (the default slide is the run above), from the same work folder."""
    outputs = {"slide": narrated}
    for kind in ("cut", "fade"):
        outputs[kind] = narrated.with_name(f"{kind}.mp4")
        work = ["--work-dir", str(narrated.parent / f"{narrated.name}.work")]
        assert main([*OPTIONS, *work, "--transition", kind, "-o", str(outputs[kind])]) == 0
    return outputs


def _timing(out: Path) -> Timing:
    return Timing.model_validate_json((out.parent / f"{out.name}.work" / "timing.json").read_text(encoding="utf-8"))


def test_title_and_artist_come_from_comic_info(narrated: Path) -> None:
    with av.open(str(narrated)) as container:
        metadata = container.metadata
    assert metadata["title"] == "ブラックジャックによろしく (Black Jack ni Yoroshiku)"
    assert metadata["artist"] == "佐藤秀峰 (Shuho Sato)"
    assert "free for any secondary use" in metadata["comment"]


def test_the_video_ends_with_a_card_of_the_credits(narrated: Path) -> None:
    pages_s = _timing(narrated).duration_s
    streams = probe_mp4(narrated)
    assert streams.video_s >= pages_s + 4.0 - 1e-6, "a card of at least 4 s after the pages"
    assert abs(streams.video_s - streams.audio_s) <= 1 / streams.fps + 1e-6
    with av.open(str(narrated)) as container:
        frames = [f for f in container.decode(video=0) if f.time is not None and f.time >= pages_s + 1.0]
    card = np.asarray(frames[len(frames) // 2].to_ndarray(format="rgb24"))
    with RapidOcrEngine() as ocr:
        read = " ".join(line.text for line in ocr.recognize(card, "en")).lower()
    for words in ("narrated by", "shuho sato", "manga on web", "secondary use"):
        assert words in read, f"{words!r} not on the card; OCR read {read!r}"


def test_no_end_card_ends_the_video_with_the_pages(narrated: Path) -> None:
    """The same book again from its work folder with --no-end-card: the file is made again (the card is part of
    the render's key), ends with its last page, and its last chapter ends there too; without --split-chapters
    no file is written per chapter."""
    out = narrated.with_name("no-card.mp4")
    work = ["--work-dir", str(narrated.parent / f"{narrated.name}.work")]
    assert main([*OPTIONS, *work, "--chapters", "1,2", "--no-end-card", "-o", str(out)]) == 0
    pages_s = _timing(narrated).duration_s
    streams = probe_mp4(out)
    assert streams.video_s == pytest.approx(pages_s, abs=2 / streams.fps)
    assert probe_mp4(narrated).video_s >= streams.video_s + 4.0 - 1e-6
    with av.open(str(out)) as container:
        chapters = container.chapters()
    assert float(chapters[-1]["end"] * chapters[-1]["time_base"]) == pytest.approx(pages_s, abs=0.05)
    assert not list(out.parent.glob("no-card-*.mp4")), "chapter files only with --split-chapters"


def test_the_card_is_not_dead_air(narrated: Path) -> None:
    """Soft air under the card, fading out at its end: nowhere under -50 dBFS for 3 s (issue 13, Sound)."""
    audio, rate_hz = decoded_audio(narrated)
    card = audio[:, round((_timing(narrated).duration_s + 0.5) * rate_hz) :]
    assert 20 * np.log10(np.sqrt(np.mean(card**2))) > -60, "not silence"
    assert longest_quiet_s(audio, rate_hz) < 3.0


def test_chapter_markers_start_at_their_pages(narrated: Path) -> None:
    page_two_s = next(shot.start_s for shot in _timing(narrated).shots if shot.page == 1)
    with av.open(str(narrated)) as container:
        chapters = container.chapters()
        total_s = float(container.duration or 0) / av.time_base
    assert [c["metadata"]["title"] for c in chapters] == ["Chapter 1", "Chapter 2"]
    bounds = [(float(c["start"] * c["time_base"]), float(c["end"] * c["time_base"])) for c in chapters]
    assert bounds[0][0] == 0.0
    assert bounds[0][1] == bounds[1][0] == pytest.approx(page_two_s, abs=0.001)
    assert bounds[1][1] == pytest.approx(total_s, abs=0.05)


def test_each_chapter_is_a_file_with_its_own_subtitles(narrated: Path) -> None:
    whole = probe_mp4(narrated)
    parts = [narrated.with_name(f"manga-{n:02d}.mp4") for n in (1, 2)]
    probes = [probe_mp4(part) for part in parts]
    assert sum(probe.frames for probe in probes) == whole.frames
    for probe in probes:
        assert abs(probe.video_s - probe.audio_s) <= 1 / probe.fps + 1e-6
    start_s = probes[0].video_s
    book = srt_cues(narrated.with_suffix(".srt"))
    for part, (low, high) in zip(parts, [(0.0, start_s), (start_s, whole.video_s)], strict=True):
        cues = srt_cues(part.with_suffix(".srt"))
        assert cues, f"{part.name} has subtitles"
        assert [text for _, _, text in mp4_subtitles(part)[0][2]] == [text for _, _, text in cues]
        expected = [(max(s, low) - low, min(e, high) - low, t) for s, e, t in book if s < high and e > low]
        assert [t for _, _, t in cues] == [t for _, _, t in expected]
        times = np.array([(s, e) for s, e, _ in cues]) - np.array([(s, e) for s, e, _ in expected])
        assert np.abs(times).max() <= 0.0011, "the book's cues, timed from the chapter's start"


def _frames(path: Path, first: int, count: int) -> list[np.ndarray]:
    with av.open(str(path)) as container:
        decoded = [frame.to_ndarray(format="rgb24") for frame in container.decode(video=0)]
    return [np.asarray(frame, dtype=np.int32) for frame in decoded[first : first + count]]


def test_the_second_page_slides_in_from_the_left_as_manga_reads(transitions: dict[str, Path], narrated: Path) -> None:
    from comic_narrator.video.camera import ease_in_out

    fps = round(probe_mp4(narrated).fps)
    page_two = round(next(shot.start_s for shot in _timing(narrated).shots if shot.page == 1) * fps)
    steps = round(TRANSITION_S * fps)
    slide = _frames(transitions["slide"], page_two - 1, steps + 3)
    cut = _frames(transitions["cut"], page_two - 1, steps + 3)
    fade = _frames(transitions["fade"], page_two - 1, steps + 3)
    left_as = cut[0]  # page 1's last frame: every run shows it alike
    assert np.abs(slide[0] - left_as).mean() < 2 and np.abs(fade[0] - left_as).mean() < 2
    assert np.abs(cut[1] - left_as).mean() > 20, "a cut shows page 2 at once"
    n = steps // 2
    width = left_as.shape[1]
    shift = round(ease_in_out((n + 1) / (steps + 1)) * width)
    middle = slide[1 + n]
    assert np.abs(middle[:, shift:] - left_as[:, : width - shift]).mean() < 6, "page 1 pushed to the right"
    assert np.abs(middle[:, :shift] - cut[1 + n][:, width - shift :]).mean() < 6, "page 2 coming in from the left"
    weight = ease_in_out((n + 1) / (steps + 1))
    mixed = (1 - weight) * left_as + weight * cut[1 + n]
    assert np.abs(fade[1 + n] - mixed).mean() < 6, "a fade mixes the two"
    for kind in ("slide", "fade"):
        assert np.abs(_frames(transitions[kind], page_two + steps + 1, 1)[0] - cut[steps + 2]).mean() < 2, kind
