"""Script synthesis with the real bundled voice: one clip per line, content-addressed cache, atomic WAVs."""

from __future__ import annotations

import logging
import os
import threading
from pathlib import Path

import numpy as np
import pytest
import soundfile as sf

from comic_narrator.artifacts import Cast, CastMember, Script, ScriptLine
from comic_narrator.backends.kokoro_tts import KokoroEngine
from comic_narrator.backends.protocols import Delivery, Speech
from comic_narrator.config import VoiceConfig
from comic_narrator.progress import SILENT
from comic_narrator.voice.synthesis import default_jobs, synthesize_script, synthesize_with_bank
from comic_narrator.voice.voicebank import VoiceBank, open_voice_bank


def _script(*texts: str) -> Script:
    lines = [
        ScriptLine(
            id=f"p001-t{i:02d}", page=0, panel=0, speaker="narrator" if i == 0 else "char1", kind="speech", text=text
        )
        for i, text in enumerate(texts)
    ]
    return Script(lang="en", lines=lines)


CAST = Cast(
    members=[CastMember(character="narrator", voice="en-joe"), CastMember(character="char1", voice="en-joe-young")]
)
CONFIG = VoiceConfig(jobs=2)


def test_clips_cache_and_reuse(tmp_path: Path) -> None:
    clips_dir = tmp_path / "clips"
    script = _script("Once upon a time.", "Who goes there?", "...")
    clips = synthesize_script(script, CAST, CONFIG, clips_dir, SILENT)

    assert [c.line_id for c in clips] == [line.id for line in script.lines]
    for clip in clips[:2]:
        samples, rate = sf.read(tmp_path / clip.audio_file, dtype="float32")
        assert rate == clip.sample_rate_hz == 22_050
        assert abs(len(samples) / rate - clip.duration_s) < 1e-6
        assert clip.duration_s > 0.5 and float(np.abs(samples).max()) > 0.1
        assert clip.audio_file == f"clips/{clip.cache_key}.wav"
    assert clips[0].voice == "en-joe" and clips[1].voice == "en-joe-young"
    # A line with nothing speakable keeps its place as a zero-length clip.
    assert clips[2].duration_s == 0.0 and (tmp_path / clips[2].audio_file).exists()
    assert not list(clips_dir.glob("*.tmp*"))

    # Re-run: nothing is re-voiced (the WAVs are untouched) and the clips are identical.
    stamps = {p.name: p.stat().st_mtime_ns for p in clips_dir.iterdir()}
    assert synthesize_script(script, CAST, CONFIG, clips_dir, SILENT) == clips
    assert {p.name: p.stat().st_mtime_ns for p in clips_dir.iterdir()} == stamps

    # An edited line re-voices only that line.
    edited = _script("Once upon a time.", "Who goes there, stranger?", "...")
    again = synthesize_script(edited, CAST, CONFIG, clips_dir, SILENT)
    assert again[0] == clips[0] and again[2] == clips[2]
    assert again[1].cache_key != clips[1].cache_key
    assert len(list(clips_dir.iterdir())) == len(stamps) + 1


def test_deterministic_across_runs(tmp_path: Path) -> None:
    script = _script("The bell rang twice, then the lights went out.")
    a = synthesize_script(script, CAST, CONFIG, tmp_path / "a" / "clips", SILENT)
    b = synthesize_script(script, CAST, CONFIG, tmp_path / "b" / "clips", SILENT)
    assert a == b
    wav_a = (tmp_path / "a" / a[0].audio_file).read_bytes()
    assert wav_a == (tmp_path / "b" / b[0].audio_file).read_bytes()


def test_corrupt_cached_wav_is_revoiced(tmp_path: Path) -> None:
    clips_dir = tmp_path / "clips"
    script = _script("Hello again.")
    [clip] = synthesize_script(script, CAST, CONFIG, clips_dir, SILENT)
    path = tmp_path / clip.audio_file
    path.write_bytes(b"RIFF garbage")
    os.utime(path, (0, 0))
    [again] = synthesize_script(script, CAST, CONFIG, clips_dir, SILENT)
    assert again == clip
    assert sf.info(str(path)).frames > 0


def test_a_cached_clip_cut_short_is_voiced_again(tmp_path: Path) -> None:
    """libsndfile reads a WAV cut short without complaint; the RIFF length it declares is what gives it away."""
    clips_dir = tmp_path / "clips"
    script = _script("A clip the disk filled up on.")
    [clip] = synthesize_script(script, CAST, CONFIG, clips_dir, SILENT)
    path = tmp_path / clip.audio_file
    whole = path.read_bytes()
    path.write_bytes(whole[: len(whole) // 2])
    assert sf.info(str(path)).frames > 0  # still readable, so only the length check can tell
    [again] = synthesize_script(script, CAST, CONFIG, clips_dir, SILENT)
    assert again == clip and path.read_bytes() == whole


def test_jobs_zero_means_one_per_core() -> None:
    assert default_jobs(VoiceConfig(jobs=0)) == max(1, os.cpu_count() or 1)
    assert default_jobs(VoiceConfig(jobs=3)) == 3


def test_a_stopped_page_voices_no_line_it_has_not_started(tmp_path: Path) -> None:
    """The stream sets ``stop`` when the run fails or is interrupted while a page is being voiced: the lines under
    way finish (their clips stay cached), the rest are left out, so the run ends without voicing a whole page."""
    stop = threading.Event()
    said: list[str] = []
    with open_voice_bank(VoiceConfig(jobs=1)) as bank:
        real = bank.synthesize

        def synthesize(text: str, voice_id: str, delivery: Delivery) -> Speech:
            said.append(text)
            if len(said) == 2:
                stop.set()
            return real(text, voice_id, delivery)

        bank.synthesize = synthesize  # type: ignore[method-assign]
        script = _script("One.", "Two.", "Three.", "Four.")
        clips = synthesize_with_bank(script, CAST, VoiceConfig(jobs=1), tmp_path / "clips", SILENT, bank, stop)
    assert said == ["One.", "Two."]
    assert [clip.line_id for clip in clips] == ["p001-t00", "p001-t01"]
    assert len(list((tmp_path / "clips").glob("*.wav"))) == 2


def _japanese(*lines: tuple[str, str]) -> tuple[Script, Cast]:
    script = Script(
        lang="ja",
        lines=[
            ScriptLine(id=f"p001-t{i:02d}", page=0, panel=0, speaker=speaker, kind="speech", text=text)
            for i, (speaker, text) in enumerate(lines)
        ],
    )
    return script, Cast(members=[CastMember(character=s, voice=s) for s in {s for s, _ in lines}])


def test_a_line_the_voice_makes_no_sound_for_stays_silent_and_the_book_goes_on(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    # Open JTalk has no sound for a lone 々 (an OCR can read one in a stray mark): that line is a silent clip with
    # a warning naming it, where it used to stop the whole book.
    script, cast = _japanese(("ja-mei", "々"), ("ja-mei", "こんにちは。"))
    with caplog.at_level(logging.WARNING, logger="comic_narrator"):
        clips = synthesize_script(script, cast, CONFIG, tmp_path / "clips", SILENT)
    assert clips[0].duration_s == 0.0 and (tmp_path / clips[0].audio_file).exists()
    assert clips[1].duration_s > 0.3
    assert "p001-t00" in caplog.text and "stays silent" in caplog.text
    assert "p001-t01" not in caplog.text  # the voiced line is not warned about


def test_a_line_the_reading_frontend_cannot_read_stays_silent(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    engine = KokoroEngine()
    engine.open()
    real = engine._japanese_phonemes("はい。")  # loads the real frontend

    def frontend(sentence: str) -> str:  # the real one, except that it fails on one word as it did on イェーィ
        if "留守" in sentence:
            raise KeyError("ー")
        return str(reader(sentence))

    reader, engine._g2p = engine._g2p, frontend
    script, cast = _japanese(("ja-alpha", "只今留守にしています。"), ("ja-alpha", "はい。"))
    with caplog.at_level(logging.WARNING, logger="comic_narrator"):
        clips = synthesize_with_bank(script, cast, CONFIG, tmp_path / "clips", SILENT, VoiceBank(CONFIG, [engine]))
    assert real and clips[0].duration_s == 0.0 and clips[1].duration_s > 0.2
    assert "p001-t00" in caplog.text and "cannot read" in caplog.text
