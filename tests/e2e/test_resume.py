"""Resume: a run killed with SIGKILL mid-stage picks up where it was, and a half-written artifact is redone, never
trusted (house rule 8)."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import av
import pytest

from comic_narrator.artifacts import Book, Cast, CastMember, PageReading, Script, ScriptLine
from comic_narrator.cli import main
from comic_narrator.config import VoiceConfig
from comic_narrator.progress import SILENT
from comic_narrator.voice.synthesis import synthesize_script
from comic_narrator.workdir import read_artifact
from tests.conftest import SAMPLE_PAGE

FAST = ["--preset", "ultrafast", "--fps", "24", "--jobs", "1", "-q"]
"""Cheaper encoding and one voice job, so the run is short and its clips are written one at a time."""


def _cli() -> list[str]:
    script = Path(sys.executable).with_name("comic-narrator")
    if script.exists():
        return [str(script)]
    return [sys.executable, "-c", "import sys; from comic_narrator.cli import main; sys.exit(main())"]


def _mtimes(folder: Path) -> dict[str, int]:
    """Finished clips only (named by their cache key): a clip being written is a `KEY.XXXX.tmp.wav` beside them."""
    return {p.name: p.stat().st_mtime_ns for p in folder.glob("*.wav") if re.fullmatch(r"[0-9a-f]{32}\.wav", p.name)}


def _assert_valid_mp4(path: Path) -> None:
    with av.open(str(path)) as container:
        video, audio = container.streams.video[0], container.streams.audio[0]
        assert video.codec_context.name == "h264" and audio.codec_context.name == "aac"
        assert video.duration is not None and video.time_base is not None
        assert audio.duration is not None and audio.time_base is not None
        video_s, audio_s = float(video.duration * video.time_base), float(audio.duration * audio.time_base)
        assert video_s > 5 and abs(video_s - audio_s) <= 1 / 24 + 1e-6
        frames = sum(1 for _ in container.decode(video=0))
    assert frames == round(video_s * 24)


def _kill_once(command: list[str], ready: Callable[[], bool], what: str, within_s: float) -> None:
    """Start ``command`` and SIGKILL it the moment ``ready()`` holds (polled every 10 ms)."""
    first = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + within_s
    try:
        while not ready():
            assert first.poll() is None, f"the run ended before any {what} was written"
            assert time.monotonic() < deadline, f"no {what} within {within_s:g} s"
            time.sleep(0.01)
        os.kill(first.pid, signal.SIGKILL)
    finally:
        first.kill()
        first.wait()
    assert first.returncode == -signal.SIGKILL


@pytest.mark.slow
def test_sigkill_while_voicing_then_resume(tmp_path: Path) -> None:
    """Real: the installed `comic-narrator` command on the bundled sample page, killed with SIGKILL as soon as its
    first clip exists, then the same command again. It must finish, keep every clip finished before the kill
    (same file, same mtime), keep the cached page reading, and write an MP4 that decodes."""
    out = tmp_path / "out.mp4"
    command = [*_cli(), str(SAMPLE_PAGE), "-o", str(out), *FAST]
    clips = tmp_path / "out.mp4.work" / "clips"
    _kill_once(command, lambda: clips.is_dir() and bool(_mtimes(clips)), "clip", 240)
    assert not out.exists(), "the killed run got as far as the video: it was not killed mid-run"
    finished = _mtimes(clips)
    readings = {p.name: p.stat().st_mtime_ns for p in (tmp_path / "out.mp4.work" / "readings").glob("*.json")}
    assert finished and readings

    rerun = subprocess.run(command, capture_output=True, text=True, timeout=600)
    assert rerun.returncode == 0, rerun.stderr
    after = _mtimes(clips)
    assert {name: after[name] for name in finished} == finished, "finished clips were voiced again"
    assert len(after) > len(finished), "the kill came after the last clip: nothing was left to resume"
    assert {p.name: p.stat().st_mtime_ns for p in (tmp_path / "out.mp4.work" / "readings").glob("*.json")} == readings
    clip_list = json.loads((tmp_path / "out.mp4.work" / "clips.json").read_text(encoding="utf-8"))["clips"]
    assert {Path(c["audio_file"]).name for c in clip_list} <= set(after)
    _assert_valid_mp4(out)


@pytest.mark.slow
def test_truncated_json_artifacts_are_redone(tmp_path: Path) -> None:
    """Real CLI, OCR and reader (`--vision-only`: ingest and read). The stand-in for a half-written file is a cached
    artifact cut in half by the test (our own writer renames complete files only, so a cut file comes from outside:
    a full disk, an interrupted copy). The next run must redo those stages and write them whole again."""
    out = tmp_path / "out.mp4"
    work = tmp_path / "out.mp4.work"
    assert main([str(SAMPLE_PAGE), "-o", str(out), "-q", "--vision-only"]) == 0
    (page_file,) = (work / "readings").glob("page-0001.*.json")
    whole = {path: path.read_bytes() for path in (work / "book.json", page_file)}
    for path, data in whole.items():
        path.write_bytes(data[: len(data) // 2])
    assert main([str(SAMPLE_PAGE), "-o", str(out), "-q", "--vision-only"]) == 0
    assert read_artifact(work / "book.json", Book).pages
    assert read_artifact(page_file, PageReading).texts
    assert {path: path.read_bytes() for path in whole} == whole, "the redone stages write what they wrote before"


def test_truncated_clip_is_voiced_again(tmp_path: Path) -> None:
    """Real voice (en-joe, Piper) and real clip cache. A clip WAV cut short by the test (the stand-in for a partial
    file) reads without error in libsndfile, just shorter, so only a check of its RIFF length keeps it from being
    trusted under its cache key: the next synthesis voices the line again, at full length."""
    script = Script(lang="en", lines=[ScriptLine(id="l1", page=0, panel=0, speaker="narrator", kind="caption",
                                                 text="The storm had passed by morning.")])  # fmt: skip
    cast = Cast(members=[CastMember(character="narrator", voice="en-joe", lines=1)])
    config = VoiceConfig(jobs=1)
    (clip,) = synthesize_script(script, cast, config, tmp_path / "clips", SILENT)
    wav = tmp_path / clip.audio_file
    whole = wav.read_bytes()
    wav.write_bytes(whole[: len(whole) // 2])
    (again,) = synthesize_script(script, cast, config, tmp_path / "clips", SILENT)
    assert again.duration_s == pytest.approx(clip.duration_s)
    assert len(wav.read_bytes()) == len(whole)


def _segments(work: Path) -> dict[str, int]:
    return {p.name: p.stat().st_mtime_ns for p in (work / "segments").glob("page-*.mp4")}


def _duration_s(path: Path) -> float:
    with av.open(str(path)) as container:
        video = container.streams.video[0]
        assert video.duration is not None and video.time_base is not None
        return float(video.duration * video.time_base)


@pytest.mark.slow
def test_sigkill_while_pages_stream_then_resume_gives_the_same_video(tmp_path: Path) -> None:
    """Real: the installed command on two pages of the bundled manga sample, streamed (page 2 is read and voiced
    while page 1 renders). Killed with SIGKILL once the first video segment is on disk, then run again: the
    finished segments are reused as they are (same files, same mtimes), and the subtitles and the duration equal
    those of a run that was never interrupted (within one frame)."""
    manga = Path(__file__).parents[2] / "samples" / "blackjack-ni-yoroshiku-v01-p08-11.cbz"
    options = [str(manga), "--pages", "1-2", "--layout", "manga", *FAST]
    reference = tmp_path / "reference.mp4"
    whole = subprocess.run([*_cli(), *options[:-1], "-o", str(reference)], capture_output=True, text=True, timeout=900)
    assert whole.returncode == 0, whole.stderr

    out = tmp_path / "out.mp4"
    work = tmp_path / "out.mp4.work"
    _kill_once(
        [*_cli(), *options, "-o", str(out)],
        lambda: (work / "segments").is_dir() and bool(_segments(work)),
        "segment",
        600,
    )
    assert not out.exists(), "the killed run got as far as the video"
    finished = _segments(work)

    rerun = subprocess.run([*_cli(), *options[:-1], "-o", str(out)], capture_output=True, text=True, timeout=900)
    assert rerun.returncode == 0, rerun.stderr
    after = _segments(work)
    assert {name: after[name] for name in finished} == finished, "finished segments were rendered again"
    reused = re.search(r"(\d+) reused", rerun.stderr)
    assert reused is not None and int(reused.group(1)) >= len(finished)
    assert out.with_suffix(".srt").read_text(encoding="utf-8") == reference.with_suffix(".srt").read_text(
        encoding="utf-8"
    )
    assert abs(_duration_s(out) - _duration_s(reference)) <= 1 / 24 + 1e-6
    _assert_valid_mp4(out)
