"""End to end on the bundled sample page: real OCR, real voices, real encoder; then resume and re-voice."""

from __future__ import annotations

import itertools
import json
import os
import re
import shutil
from pathlib import Path

import av
import numpy as np
import numpy.typing as npt
import pyloudnorm
import pytest

from comic_narrator.artifacts import BookReading, Script, Timing
from comic_narrator.cli import main
from comic_narrator.config import AudioConfig, RenderConfig
from tests.conftest import SAMPLE_PAGE
from tests.e2e.subtitle_files import mp4_subtitles, said, srt_cues, vtt_cues

pytestmark = pytest.mark.slow


def _streams(path: Path) -> dict[str, tuple[str, float]]:
    with av.open(str(path)) as container:
        found: dict[str, tuple[str, float]] = {}
        for stream in container.streams:
            assert stream.duration is not None and stream.time_base is not None
            found[stream.type] = (stream.codec_context.name, float(stream.duration * stream.time_base))
        video = container.streams.video[0]
        assert (video.codec_context.width, video.codec_context.height) == (1920, 1080)
    return found


@pytest.fixture(scope="module")
def narrated(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("e2e")
    out = folder / "sample.mp4"
    assert main([str(SAMPLE_PAGE), "-o", str(out), "-q"]) == 0
    return out


def test_a_plain_run_writes_the_video_and_its_subtitles_only(narrated: Path) -> None:
    """No --audiobook, --read-along or --split-chapters: nothing else is written beside the video."""
    assert sorted(p.name for p in narrated.parent.iterdir()) == [
        "sample.mp4",
        "sample.mp4.work",
        "sample.srt",
        "sample.vtt",
    ]


def test_streams_are_h264_and_aac_with_equal_durations(narrated: Path) -> None:
    streams = _streams(narrated)
    assert streams["video"][0] == "h264"
    assert streams["audio"][0] == "aac"
    assert abs(streams["video"][1] - streams["audio"][1]) <= 1 / 30 + 1e-6
    assert streams["video"][1] > 10  # a real page of dialogue, not a stub


AAC_FRAME_SAMPLES = 1024


def decoded_av(path: Path) -> tuple[npt.NDArray[np.float64], int, int, float]:
    """The MP4 decoded back with PyAV: audio samples (frames x channels) cut to the length the container declares
    (the decoder hands out the last AAC frame whole, padding included), its sample rate, the number of decoded
    video frames and the frame rate. Checks on the way that the decoded audio covers the declared length and
    runs past it by less than one AAC frame."""
    with av.open(str(path)) as container:
        stream = container.streams.audio[0]
        rate_hz = stream.codec_context.sample_rate
        assert stream.duration is not None and stream.time_base is not None
        declared = round(float(stream.duration * stream.time_base) * rate_hz)
        audio = np.concatenate([f.to_ndarray() for f in container.decode(stream)], axis=1).T.astype(np.float64)
    assert 0 <= len(audio) - declared < AAC_FRAME_SAMPLES
    with av.open(str(path)) as container:
        video = container.streams.video[0]
        fps = float(video.average_rate or 0)
        frames = sum(1 for _ in container.decode(video))
    return audio[:declared], rate_hz, frames, fps


def test_decoded_mp4_meets_the_loudness_target_and_stays_in_sync(narrated: Path) -> None:
    """Real: the whole run and its AAC/H.264 file, decoded back by PyAV; loudness by pyloudnorm (BS.1770) over
    the channels as delivered (the mono mix is written to both). Checked on the decoded file, not the WAV."""
    audio, rate_hz, frames, fps = decoded_av(narrated)
    assert audio.shape[1] == 2 and fps == RenderConfig.fps
    loudness = pyloudnorm.Meter(rate_hz).integrated_loudness(audio)
    assert abs(loudness - AudioConfig.target_lufs) <= 0.5, f"{loudness:.2f} LUFS, target {AudioConfig.target_lufs}"
    # A/V sync: the audio lasts as long as the decoded pictures, within one frame.
    assert abs(len(audio) / rate_hz - frames / fps) <= 1 / fps


def test_srt_cues_match_the_spoken_lines(narrated: Path) -> None:
    work = narrated.with_name(narrated.name + ".work")
    script = Script.model_validate_json((work / "script.json").read_text())
    cues = srt_cues(narrated.with_suffix(".srt"))
    # A line under a sound word that stays up longer is in several cues in a row: each line said is one run.
    spoken = [text for text, _ in itertools.groupby(said(c[2]) for c in cues) if text]
    assert spoken == [line.text for line in script.lines]
    assert len(cues) >= 4
    assert all(b[0] >= a[1] for a, b in itertools.pairwise(cues)), "cues must not overlap"
    timing = json.loads((work / "timing.json").read_text())
    assert cues[-1][1] <= timing["duration_s"] + 1e-3


def test_vtt_beside_the_srt_has_the_same_cues(narrated: Path) -> None:
    srt = srt_cues(narrated.with_suffix(".srt"))
    assert vtt_cues(narrated.with_suffix(".vtt")) == srt


def test_mp4_carries_the_subtitles_as_a_mov_text_track(narrated: Path) -> None:
    """Real: the track decoded back by PyAV (FFmpeg's mov_text decoder), to the millisecond of the SRT."""
    tracks = mp4_subtitles(narrated)
    assert [(lang, codec) for lang, codec, _ in tracks] == [("eng", "mov_text")]
    assert tracks[0][2] == srt_cues(narrated.with_suffix(".srt"))


def test_sound_words_are_cued_within_their_panel_shot(narrated: Path) -> None:
    work = narrated.with_name(narrated.name + ".work")
    reading = BookReading.model_validate_json((work / "reading.json").read_text())
    timing = Timing.model_validate_json((work / "timing.json").read_text())
    cues = srt_cues(narrated.with_suffix(".srt"))
    sounds = [(page, t) for page in reading.pages for t in page.texts if t.kind == "sound"]
    assert sounds, "the sample page letters a sound word (the wind's BrrOoooOoo)"
    for page, region in sounds:
        shot = next(s for s in timing.shots if (s.page, s.panel) == (page.page, region.panel))
        tagged = [c for c in cues if f"[{' '.join(region.text.split())}]" in c[2].split("\n")]
        assert tagged, f"no cue for {region.text!r}"
        for start_s, end_s, _ in tagged:
            assert shot.start_s - 1e-3 <= start_s < end_s <= shot.start_s + shot.duration_s + 1e-3


def test_no_cue_names_a_character_id(narrated: Path) -> None:
    """The local reader's speakers are ``charN`` clusters, not names: no cue may show one."""
    text = narrated.with_suffix(".srt").read_text(encoding="utf-8")
    assert not re.search(r"char\d+", text)
    assert not any(
        re.fullmatch(r"\(.*\)", part) for c in srt_cues(narrated.with_suffix(".srt")) for part in c[2].split("\n")
    )


def test_each_panel_shot_is_as_long_as_its_audio(narrated: Path) -> None:
    work = narrated.with_name(narrated.name + ".work")
    timing = json.loads((work / "timing.json").read_text())
    clips = {c["line_id"]: c for c in json.loads((work / "clips.json").read_text())["clips"]}
    # Every voiced line sits in one shot, so the checks under the `if` below run for each of them.
    assert sorted(line for shot in timing["shots"] for line in shot["line_ids"]) == sorted(clips) != []
    for shot in timing["shots"]:
        assert shot["duration_s"] == pytest.approx(shot["frames"] / timing["fps"])
        if shot["line_ids"]:
            last = shot["line_ids"][-1]
            spoken_end = shot["line_starts_s"][-1] + clips[last]["duration_s"]
            assert shot["start_s"] <= shot["line_starts_s"][0]
            assert spoken_end <= shot["start_s"] + shot["duration_s"] + 1e-6
            # ...and the shot does not run on more than the tail pause plus one frame after the last word
            assert shot["start_s"] + shot["duration_s"] - spoken_end <= 0.35 + 1 / timing["fps"] + 1e-6


def test_the_book_s_last_page_is_shared_by_every_render_worker(narrated: Path) -> None:
    """The sample's one page is the book's last: its video is cut into one segment per render worker (one per
    core), of equal length within a frame, inside its shots, and the MP4 holds every frame of them."""
    work = narrated.with_name(narrated.name + ".work")
    timing = json.loads((work / "timing.json").read_text())
    total = sum(shot["frames"] for shot in timing["shots"])
    workers = len(os.sched_getaffinity(0))
    counts = []
    for segment in sorted((work / "segments").glob("page-0001-*.mp4")):
        with av.open(str(segment)) as container:
            counts.append(sum(1 for _ in container.decode(video=0)))
    assert len(counts) == min(workers, total // timing["fps"])
    assert sum(counts) == total and max(counts) - min(counts) <= 1
    with av.open(str(narrated)) as container:
        assert sum(1 for _ in container.decode(video=0)) >= total  # the pages, then the end card


def test_rerun_reuses_every_stage_and_edit_revoices_one_line(
    narrated: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    work = narrated.with_name(narrated.name + ".work")
    copy_work = tmp_path / "sample.mp4.work"
    shutil.copytree(work, copy_work)
    out = tmp_path / "sample.mp4"
    clips_before = {p.name: p.stat().st_mtime_ns for p in (copy_work / "clips").glob("*.wav")}

    assert main([str(SAMPLE_PAGE), "-o", str(out)]) == 0
    captured = capsys.readouterr()
    err = captured.err
    # The closing line says what was written and how fast against the video's length.
    assert re.match(
        rf"wrote {re.escape(str(out))} \([\d.]+ s of video from 1 page\(s\) in [\d.]+ s, [\d.]+x real time; 0 failure",
        captured.out,
    )
    assert "[ingest] reusing" in err
    assert "(cached)" in err
    assert "[voices]" in err
    clips_after = {p.name: p.stat().st_mtime_ns for p in (copy_work / "clips").glob("*.wav")}
    assert clips_after == clips_before, "an unchanged re-run must not re-synthesise anything"

    script_file = copy_work / "script.json"
    script = json.loads(script_file.read_text())
    script["lines"][0]["text"] = "This line was edited by hand."
    script_file.write_text(json.dumps(script, indent=2))
    assert main([str(SAMPLE_PAGE), "-o", str(out), "-q"]) == 0
    new_clips = set((copy_work / "clips").glob("*.wav")) - {copy_work / "clips" / n for n in clips_before}
    assert len(new_clips) == 1, "only the edited line is re-voiced"
    assert srt_cues(out.with_suffix(".srt"))[0][2] == "This line was edited by hand."

    capsys.readouterr()
    before = out.stat().st_mtime_ns
    assert main([str(SAMPLE_PAGE), "-o", str(out)]) == 0
    assert "is up to date" in capsys.readouterr().err
    assert out.stat().st_mtime_ns == before, "an unchanged re-run does not re-encode the video"


def test_vision_only_then_read_json_matches_stored_reading(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "v.mp4"
    assert main([str(SAMPLE_PAGE), "-o", str(out), "--vision-only", "-q"]) == 0
    assert not out.exists()
    stored = (tmp_path / "v.mp4.work" / "reading.json").read_text()
    capsys.readouterr()
    assert main(["read", str(SAMPLE_PAGE), "--json", "--work-dir", str(tmp_path / "v.mp4.work")]) == 0
    captured = capsys.readouterr()
    printed = captured.out
    assert json.loads(printed) == json.loads(stored)
    assert captured.err == "", "--json is for scripts: no progress lines beside it"
    reading = json.loads(printed)
    assert reading["pages"][0]["panels"], "the sample page has panels"
    assert any(re.search(r"[A-Za-z]{3}", t["text"]) for t in reading["pages"][0]["texts"])
