"""The book's audio mastered page by page as pages are voiced (audio/mix.py StreamingMaster), against the exact
master after the last page, on real voices: the same pieces, the same target, and a book it cannot master on the
way is said to have missed (so the run masters it again)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import soundfile

from comic_narrator.artifacts import BookReading, Clip, PageReading, Panel, Script, ScriptLine, TextRegion
from comic_narrator.audio.mix import (
    DUAL_MONO_LU,
    SETTLE_VOICE_BLOCKS,
    STREAM_TOLERANCE_LU,
    PageSound,
    StreamingMaster,
    block_powers,
    gated_loudness,
    master_pages,
    mix_voices,
)
from comic_narrator.audio.truepeak import PEAK_CEILING, true_peak_envelope
from comic_narrator.config import AudioConfig, RunConfig, VoiceConfig
from comic_narrator.flow.book_audio import BookAudio
from comic_narrator.progress import SILENT
from comic_narrator.timeline.timing import build_timing
from comic_narrator.voice.casting import cast_characters
from comic_narrator.voice.synthesis import synthesize_script
from comic_narrator.voice.voicebank import open_voice_bank
from tests.audio.conftest import work_of

LINES = [
    "The storm came in over the hills before anyone in the village had finished the harvest.",
    "Get inside, all of you, and bar the doors until the wind has passed!",
    "I told you this would happen, and nobody listened to a single word I said.",
    "Quiet now. Listen. Can you hear the bells ringing down by the old harbour?",
]


@pytest.fixture(scope="module")
def spoken(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[Clip]]:
    """Four real lines, each about four seconds, voiced once by the fast voices."""
    work = tmp_path_factory.mktemp("stream-master")
    script = Script(
        lang="en",
        lines=[
            ScriptLine(id=f"p000-t{n:02d}", page=0, panel=0, speaker="char1", kind="speech", text=text)
            for n, text in enumerate(LINES)
        ],
    )
    reading = BookReading(source="test", lang="en", pages=[_page(0, [line.text for line in script.lines])])
    with open_voice_bank(VoiceConfig(quality="fast")) as bank:
        cast = cast_characters(reading, bank.voices(), VoiceConfig(quality="fast"), "en")
        clips = synthesize_script(script, cast, VoiceConfig(jobs=1, quality="fast"), work / "clips", SILENT)
    return work, clips


def _page(number: int, texts: list[str]) -> PageReading:
    return PageReading(
        page=number,
        width=400,
        height=600,
        reading_direction="ltr",
        panels=[Panel(bbox=(0, 0, 400, 600))],
        texts=[
            TextRegion(bbox=(10, 10 + 40 * n, 80, 30), kind="speech", text=text, speaker="char1", panel=0)
            for n, text in enumerate(texts)
        ],
    )


def _book(work: Path, clips: list[Clip], pages: int, louder_from: int | None = None) -> list[PageSound]:
    """``pages`` pages of two lines each (the real clips in turn); from page ``louder_from`` on, the clips are
    copies 12 dB louder (a second voice recorded hot)."""
    config = AudioConfig()
    book = []
    for number in range(pages):
        chosen = [clips[(2 * number) % len(clips)], clips[(2 * number + 1) % len(clips)]]
        own = []
        for index, clip in enumerate(chosen):
            file = clip.audio_file
            if louder_from is not None and number >= louder_from:
                samples, rate = soundfile.read(str(work / clip.audio_file), dtype="float32")
                file = f"clips/hot-{number}-{index}.wav"
                soundfile.write(str(work / file), np.clip(samples * 3.98, -1, 1), rate)
            own.append(clip.model_copy(update={"line_id": f"p{number:03d}-t{index:02d}", "audio_file": file}))
        texts = [LINES[(2 * number + i) % len(LINES)] for i in range(2)]
        reading = BookReading(source="test", lang="en", pages=[_page(number, texts)])
        script = Script(
            lang="en",
            lines=[
                ScriptLine(id=c.line_id, page=number, panel=0, speaker="char1", kind="speech", text=t)
                for c, t in zip(own, texts, strict=True)
            ],
        )
        timing = build_timing(reading, script, own, config, fps=24)
        voices = mix_voices(work, timing, own)
        book.append(PageSound(timing, own, reading, block_powers(voices, config.sample_rate_hz)))
    return book


def _loudness(pieces: list[np.ndarray]) -> float:
    return gated_loudness([block_powers(piece, 48_000) for piece in pieces])


def test_pages_mastered_as_they_come_match_the_exact_master(spoken: tuple[Path, list[Clip]]) -> None:
    work, clips = spoken
    book = _book(work, clips, 6)
    config = AudioConfig()
    target = config.target_lufs - DUAL_MONO_LU
    streaming = StreamingMaster(work, config)
    given: list[list[np.ndarray]] = [streaming.add(page) for page in book]
    last = streaming.finish()
    # Nothing is given out before 15 s of speech settle the voices' gain; then each page one page late (its
    # bed's join needs the next page's ambience); the last at the end.
    speech = np.cumsum([int(np.count_nonzero(10 * np.log10(np.maximum(p.powers, 1e-20)) - 0.691 >= -70)) for p in book])
    settled = int(np.argmax(speech >= SETTLE_VOICE_BLOCKS))
    assert 0 < settled < len(book) - 1
    assert all(out == [] for out in given[:settled])
    assert len(given[settled]) == settled
    assert all(len(out) == 1 for out in given[settled + 1 :]) and len(last) == 1
    pieces = [piece for out in given for piece in out] + last
    exact = list(master_pages(work, book, config))
    assert [len(p) for p in pieces] == [len(p) for p in exact]
    # The same book, on target both ways; the streamed one within its tolerance and says so truthfully.
    assert _loudness(exact) == pytest.approx(target, abs=0.05)
    assert _loudness(pieces) == pytest.approx(streaming.loudness, abs=1e-9)
    assert abs(streaming.loudness - target) <= STREAM_TOLERANCE_LU and streaming.on_target()
    assert max(true_peak_envelope(p, PEAK_CEILING).max() for p in pieces) <= PEAK_CEILING + 1e-4
    # Page by page within a dB of the exact master: no page jumps in level.
    levels = [
        10 * np.log10(np.mean(s.astype(np.float64) ** 2) / np.mean(e.astype(np.float64) ** 2))
        for s, e in zip(pieces, exact, strict=True)
    ]
    assert max(abs(level) for level in levels) < 1.0


def test_a_book_whose_voices_jump_late_is_said_to_miss(spoken: tuple[Path, list[Clip]]) -> None:
    """Voices 12 dB hotter on the last page: the gain settled on the first pages and the makeup moves at most a dB
    a page, so the streamed book lands over the target and says so; the exact master still lands."""
    work, clips = spoken
    book = _book(work, clips, 5, louder_from=4)
    config = AudioConfig()
    streaming = StreamingMaster(work, config)
    pieces = [piece for page in book for piece in streaming.add(page)] + streaming.finish()
    assert streaming.loudness - (config.target_lufs - DUAL_MONO_LU) > STREAM_TOLERANCE_LU
    assert not streaming.on_target()
    assert _loudness(pieces) == pytest.approx(streaming.loudness, abs=1e-9)
    exact = list(master_pages(work, book, config))
    assert _loudness(exact) == pytest.approx(config.target_lufs - DUAL_MONO_LU, abs=0.05)


def test_a_first_run_masters_the_book_as_its_pages_stream(narrated: Path) -> None:
    """The sample page narrated once (tests/audio/conftest.py): its audio was mastered and encoded on the way, not
    mastered again after the last page (the fallback, which would hide a streamed master that took nothing)."""
    log = (work_of(narrated) / "comic-narrator.log").read_text(encoding="utf-8")
    assert "the book's audio streamed at" in log and "mastered again" not in log
    assert "the last page is mastered; the end card's sound" in log
    assert "the book's AAC is encoded (1 pages mastered)" in log


def test_a_cancelled_book_audio_leaves_no_finished_file(tmp_path: Path) -> None:
    config = RunConfig(input_path=tmp_path / "in", output_path=tmp_path / "out.mp4", work_dir=tmp_path)
    audio = BookAudio(config, tmp_path / "audio.m4a")
    audio.cancel()
    assert audio.failure is None
    assert not (tmp_path / "audio.m4a").exists(), "the encoder was never told to finish"
