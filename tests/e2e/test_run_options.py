"""Whole-run options on the bundled sample page, checked on what the run wrote and on the MP4 decoded back.

Real throughout: ingest, OCR (once, for the module's reading), casting, the bundled voices, the mix, the H.264/AAC
encoder and PyAV decoding. Runs start from the module's reading (--reading) so OCR is not repeated, use
--preset ultrafast, and the short ones speak a one-line edited script, so each adds seconds, not a minute.
"""

from __future__ import annotations

import copy
import json
import re
from pathlib import Path
from typing import Any

import av
import numpy as np
import pytest
import soundfile

from comic_narrator.artifacts import Cast, ClipList, Script, Timing
from comic_narrator.cli import main
from tests.backends.tts_servers import ServerState, tts_server
from tests.conftest import SAMPLE_PAGE
from tests.e2e.test_narrate_sample import decoded_av

pytestmark = pytest.mark.slow

SOUND_WORD = "BrrOoooOoo"
"""The sample page's one lettered sound effect, as the local reader reads it."""


@pytest.fixture(scope="module")
def reading(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """The sample page's reading, as `--vision-only` stores it (one real OCR pass for the whole module)."""
    folder = tmp_path_factory.mktemp("reading")
    assert main([str(SAMPLE_PAGE), "-o", str(folder / "r.mp4"), "--vision-only", "-q"]) == 0
    stored: dict[str, Any] = json.loads((folder / "r.mp4.work" / "reading.json").read_text())
    return stored


def _write(path: Path, data: object) -> Path:
    path.write_text(json.dumps(data, indent=2), encoding="utf-8")
    return path


def _x264_options(path: Path) -> str:
    """x264 writes its settings into the stream (an SEI message in the first packet)."""
    with av.open(str(path)) as container:
        first = bytes(next(container.demux(video=0)))
    found = re.search(rb"x264 - core .*? options: ([^\x00]*)", first, re.S)
    assert found, "no x264 settings in the first packet"
    return found.group(1).decode("ascii", "replace")


def _assert_in_sync(path: Path, fps: int) -> None:
    audio, rate_hz, frames, decoded_fps = decoded_av(path)
    assert decoded_fps == fps
    assert abs(len(audio) / rate_hz - frames / fps) <= 1 / fps


# ---------------------------------------------------------------------------------------------------- one run


@pytest.fixture(scope="module")
def combined(reading: dict[str, Any], tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One run combining options that each leave their own trace: an edited reading (its first speech balloon
    turned into a caption, its last given to a second speaker, char2), --no-captions, --read-sfx,
    --narrator-voice, --cast (char2 pinned with a speed),
    --no-sound-bed, --fps 25, --preset ultrafast."""
    folder = tmp_path_factory.mktemp("combined")
    edited = copy.deepcopy(reading)
    texts = edited["pages"][0]["texts"]
    first_speech = next(t for t in texts if t["kind"] == "speech")
    first_speech["kind"], first_speech["speaker"] = "caption", None
    assert any(t["kind"] == "sound" and SOUND_WORD in t["text"] for t in texts)
    last_speech = [t for t in texts if t["kind"] in ("speech", "shout")][-1]
    last_speech["speaker"] = "char2"
    reading_file = _write(folder / "edited-reading.json", edited)
    cast_file = folder / "cast.yaml"
    cast_file.write_text("char2: {voice: en-joe-robot, speed: 1.2}\n", encoding="utf-8")
    out = folder / "options.mp4"
    command = [str(SAMPLE_PAGE), "-o", str(out), "--reading", str(reading_file), "--no-captions", "--read-sfx"]
    command += ["--narrator-voice", "en-joe-deep", "--cast", str(cast_file), "--no-sound-bed"]
    assert main([*command, "--fps", "25", "--preset", "ultrafast", "-q"]) == 0
    return out


def _work(out: Path) -> Path:
    return out.with_name(out.name + ".work")


def test_the_edited_reading_is_what_the_run_used(combined: Path, reading: dict[str, Any]) -> None:
    used = json.loads((_work(combined) / "reading.json").read_text())
    edited = json.loads((combined.parent / "edited-reading.json").read_text())
    assert used == edited and used != reading


def test_no_captions_drops_the_caption_and_read_sfx_speaks_the_sound_word(combined: Path) -> None:
    edited = json.loads((combined.parent / "edited-reading.json").read_text())
    caption = next(t["text"] for t in edited["pages"][0]["texts"] if t["kind"] == "caption")
    script = Script.model_validate_json((_work(combined) / "script.json").read_text())
    assert all(line.kind != "caption" and caption[:20] not in line.text for line in script.lines)
    sound = [line for line in script.lines if line.kind == "sound"]
    assert len(sound) == 1 and SOUND_WORD.casefold() in sound[0].text.casefold()
    assert sound[0].speaker == "narrator"


def test_narrator_voice_and_cast_file_are_honoured(combined: Path) -> None:
    work = _work(combined)
    cast = {m.character: m for m in Cast.model_validate_json((work / "cast.json").read_text()).members}
    assert cast["narrator"].voice == "en-joe-deep"
    assert cast["char2"].voice == "en-joe-robot" and cast["char2"].speed == 1.2
    script = Script.model_validate_json((work / "script.json").read_text())
    voice_of = {c.line_id: c.voice for c in ClipList.model_validate_json((work / "clips.json").read_text()).clips}
    # The narrator says the sound word (--read-sfx) and char2 has balloons: the loop below checks both.
    assert {line.speaker for line in script.lines} >= {"narrator", "char2"}
    for line in script.lines:
        if line.speaker in ("narrator", "char2"):
            assert voice_of[line.id] == cast[line.speaker].voice


def test_no_sound_bed_leaves_true_silence_between_the_lines(combined: Path) -> None:
    """Without the bed (effects, page swishes, room tone) every sample outside the spoken lines is zero."""
    work = _work(combined)
    track, rate_hz = soundfile.read(work / "audio.wav", dtype="float32")
    timing = Timing.model_validate_json((work / "timing.json").read_text())
    clips = {c.line_id: c for c in ClipList.model_validate_json((work / "clips.json").read_text()).clips}
    spoken = np.zeros(len(track), dtype=bool)
    for shot in timing.shots:
        for line_id, start_s in zip(shot.line_ids, shot.line_starts_s, strict=True):
            start = round(start_s * rate_hz)
            spoken[max(0, start - 480) : start + round(clips[line_id].duration_s * rate_hz) + 480] = True
    assert spoken.any() and not spoken.all()
    assert float(np.abs(track[~spoken]).max()) == 0.0


def test_fps_25_and_the_preset_reach_the_encoded_file(combined: Path) -> None:
    _assert_in_sync(combined, 25)
    options = _x264_options(combined)
    assert "cabac=0" in options and "subme=0" in options, options  # ultrafast; veryfast has cabac=1 subme=2


# ---------------------------------------------------------------------------------------------------- short runs


def _one_line_script(text: str, page: int = 0) -> dict[str, Any]:
    line = {"id": "p001-t01", "page": page, "panel": 0, "speaker": "narrator", "kind": "speech", "text": text}
    return {"schema_version": 1, "lang": "en", "lines": [line]}


def test_an_edited_script_through_a_tts_server_at_24_fps(reading: dict[str, Any], tmp_path: Path) -> None:
    """Stand-in: the TTS is the project's loopback Fish-API test server (tests/backends/tts_servers.py: tones, not
    speech). Real: the run's HTTP engine, casting with a server, and everything after."""
    reading_file = _write(tmp_path / "reading.json", reading)
    script_file = _write(tmp_path / "script.json", _one_line_script("Only this line, edited by hand."))
    out = tmp_path / "server.mp4"
    state = ServerState()
    with tts_server(state) as url:
        command = [str(SAMPLE_PAGE), "-o", str(out), "--reading", str(reading_file), "--script", str(script_file)]
        assert main([*command, "--tts-server", url, "--fps", "24", "--preset", "ultrafast", "-q"]) == 0
    spoken = [r for r in state.requests if r["path"] == "/v1/tts"]
    assert [r["text"] for r in spoken] == ["Only this line, edited by hand."]
    clips = ClipList.model_validate_json((_work(out) / "clips.json").read_text()).clips
    assert [c.voice for c in clips] == ["fish:hero"]
    assert "Only this line, edited by hand." in out.with_suffix(".srt").read_text()
    _assert_in_sync(out, 24)


def test_sixty_fps(reading: dict[str, Any], tmp_path: Path) -> None:
    reading_file = _write(tmp_path / "reading.json", reading)
    script_file = _write(tmp_path / "script.json", _one_line_script("Sixty frames a second."))
    out = tmp_path / "sixty.mp4"
    command = [str(SAMPLE_PAGE), "-o", str(out), "--reading", str(reading_file), "--script", str(script_file)]
    assert main([*command, "--fps", "60", "--preset", "ultrafast", "-q"]) == 0
    _assert_in_sync(out, 60)


# ---------------------------------------------------------------------------------------------------- refusals


@pytest.mark.parametrize(
    ("flag", "where"),
    [("--reading", "pages.0.texts.0.colour"), ("--script", "lines.0.colour")],
)
def test_unknown_keys_in_edited_files_are_refused_naming_file_and_field(
    flag: str, where: str, reading: dict[str, Any], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    if flag == "--reading":
        data: dict[str, Any] = copy.deepcopy(reading)
        data["pages"][0]["texts"][0]["colour"] = "red"
    else:
        data = _one_line_script("Hello.")
        data["lines"][0]["colour"] = "red"
    edited = _write(tmp_path / "edited.json", data)
    capsys.readouterr()
    code = main([str(SAMPLE_PAGE), "-o", str(tmp_path / "x.mp4"), flag, str(edited), "-q"])
    err = capsys.readouterr().err.strip()
    assert code != 0 and len(err.splitlines()) == 1
    assert str(edited) in err and where in err and "Extra inputs are not permitted" in err
    assert not (tmp_path / "x.mp4").exists()


def test_a_script_line_on_a_page_the_book_lacks_is_refused(
    reading: dict[str, Any], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Pages count from 0 in the script: a line on page 1 of a one-page book used to be voiced and then left off
    the timeline without a word (an empty subtitle file, a silent video)."""
    reading_file = _write(tmp_path / "reading.json", reading)
    script_file = _write(tmp_path / "script.json", _one_line_script("Lost line.", page=1))
    capsys.readouterr()
    command = [str(SAMPLE_PAGE), "-o", str(tmp_path / "x.mp4"), "--reading", str(reading_file)]
    assert main([*command, "--script", str(script_file), "-q"]) != 0
    err = capsys.readouterr().err
    assert str(script_file) in err and "lines.0: page 1, panel 0 is not in the reading" in err


def test_a_page_whose_reading_crashes_stops_the_run_or_with_keep_going_is_listed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Stand-in: the crash (the local reader is replaced by one that raises, as a reader bug on an odd page would).
    Real: the rest of the run, which must still write the video with the page shown and unnarrated."""
    import comic_narrator.reading.reader as reader

    def crash(*_args: object, **_kwargs: object) -> None:
        raise RuntimeError("a reader bug on this page")

    monkeypatch.setattr(reader, "read_page", crash)
    out = tmp_path / "crash.mp4"
    capsys.readouterr()
    assert main([str(SAMPLE_PAGE), "-o", str(out), "--preset", "ultrafast"]) == 2
    err = capsys.readouterr().err
    assert "page 1" in err and "a reader bug on this page" in err and "--keep-going" in err
    assert not out.exists()
    assert main([str(SAMPLE_PAGE), "-o", str(out), "--preset", "ultrafast", "--keep-going"]) == 3
    failures = json.loads((_work(out) / "failures.json").read_text())
    assert len(failures) == 1 and "page 1" in failures[0] and "a reader bug on this page" in failures[0]
    assert "a reader bug on this page" in capsys.readouterr().err
    assert Script.model_validate_json((_work(out) / "script.json").read_text()).lines == []
    assert out.stat().st_size > 0


def test_a_page_whose_voices_fail_stops_the_run_or_with_keep_going_stays_silent(tmp_path: Path) -> None:
    """Stand-in: the TTS (the loopback Fish-API test server, answering 500 to one page's line as an overloaded GPU
    server would). Real: the CLI, the streaming pages, the failure record and the video of the other page."""
    book = tmp_path / "book"
    book.mkdir()
    for name in ("p1.jpg", "p2.jpg"):
        (book / name).write_bytes(SAMPLE_PAGE.read_bytes())
    lines = [
        {"id": "p001-t01", "page": 0, "panel": 0, "speaker": "narrator", "kind": "speech", "text": "Page one speaks."},
        {
            "id": "p002-t01",
            "page": 1,
            "panel": 0,
            "speaker": "narrator",
            "kind": "speech",
            "text": "Silence on page two.",
        },
    ]
    script_file = _write(tmp_path / "script.json", {"schema_version": 1, "lang": "en", "lines": lines})
    out = tmp_path / "book.mp4"
    state = ServerState(fail_text="page two")
    with tts_server(state) as url:
        command = [str(book), "-o", str(out), "--script", str(script_file), "--tts-server", url]
        command += ["--preset", "ultrafast", "--fps", "24", "-q"]
        assert main(command) == 2
        assert not out.exists()
        assert main([*command, "--keep-going"]) == 3
    failures = json.loads((_work(out) / "failures.json").read_text())
    assert len(failures) == 1 and failures[0].startswith("page 2") and "voicing failed" in failures[0]
    subtitles = out.with_suffix(".srt").read_text()
    assert "Page one speaks." in subtitles and "page two" not in subtitles
    timing = Timing.model_validate_json((_work(out) / "timing.json").read_text())
    assert {shot.page for shot in timing.shots} == {0, 1}, "the failed page is still shown"
    assert not [shot for shot in timing.shots if shot.page == 1 and shot.line_ids]
    _assert_in_sync(out, 24)


def test_a_page_that_is_no_image_stops_the_run_or_with_keep_going_is_a_blank_page(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Real: a folder whose second 'page' is a saved login page, the whole CLI run, the cached book reused."""
    book = tmp_path / "book"
    book.mkdir()
    (book / "p1.jpg").write_bytes(SAMPLE_PAGE.read_bytes())
    (book / "p2.jpg").write_bytes(b"<!DOCTYPE html>\n<html><body>Sign in to download</body></html>\n")
    out = tmp_path / "book.mp4"
    command = [str(book), "-o", str(out), "--preset", "ultrafast", "--fps", "24", "-q"]
    capsys.readouterr()
    assert main(command) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and str(book / "p2.jpg") in err[0] and "web page (HTML)" in err[0]
    assert not out.exists()
    for _run in range(2):  # the second run takes the book from the cache, its blank page still marked
        assert main([*command, "--keep-going"]) == 3
        failures = json.loads((_work(out) / "failures.json").read_text())
        assert len(failures) == 1 and failures[0].startswith("page 2 (") and "web page (HTML)" in failures[0]
    timing = Timing.model_validate_json((_work(out) / "timing.json").read_text())
    assert {shot.page for shot in timing.shots} == {0, 1}, "the blank page stands in for the unreadable one"
    assert not [shot for shot in timing.shots if shot.page == 1 and shot.line_ids]
    assert [shot for shot in timing.shots if shot.page == 0 and shot.line_ids]
    _assert_in_sync(out, 24)
