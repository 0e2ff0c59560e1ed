"""The end card's soft air against a page's neutral bed: both are built by the real synthesiser and measured with
BS.1770 (tests/audio/measure.py). The card's track is added after mastering, beside the pages' mono mix, so the two
must sit at the same mono level to sound alike in the file."""

from __future__ import annotations

import numpy as np
import pytest

from comic_narrator.artifacts import BookReading, PageReading, ShotTiming, Timing
from comic_narrator.audio.bed import PageScene
from comic_narrator.audio.mix import bed_for
from comic_narrator.audio.scene import SceneChoice
from comic_narrator.config import AudioConfig
from comic_narrator.flow.book_end import card_sound
from tests.audio.measure import loudness_lufs

FPS = 24


def _steady_loudness(track: np.ndarray, rate_hz: int) -> float:
    """Loudness of the middle of a track, past its fades."""
    return loudness_lufs(track[round(1.5 * rate_hz) : -round(1.5 * rate_hz)].astype(np.float64)[None, :], rate_hz)


def _page_bed(seconds: int, config: AudioConfig) -> np.ndarray:
    """A page nothing places (the neutral bed), nothing said on it: its bed, undimmed by speech."""
    frames = seconds * FPS
    shot = ShotTiming(page=0, panel=-1, start_s=0.0, duration_s=seconds, frames=frames, line_ids=[], line_starts_s=[])
    timing = Timing(fps=FPS, sample_rate_hz=config.sample_rate_hz, shots=[shot], duration_s=seconds)
    reading = BookReading(
        source="t",
        lang="en",
        pages=[PageReading(page=0, width=100, height=100, reading_direction="ltr", panels=[], texts=[])],
    )
    scenes = {0: PageScene(SceneChoice("neutral", None, "nothing places it"))}
    return bed_for(reading, timing, [], frames * config.sample_rate_hz // FPS, config, scenes=scenes)


def test_the_card_plays_the_neutral_bed_at_a_page_s_level() -> None:
    config = AudioConfig()
    rate = config.sample_rate_hz
    page = _steady_loudness(_page_bed(8, config), rate)
    card = _steady_loudness(card_sound(8 * FPS, FPS, config), rate)
    assert np.isfinite(page) and page < config.target_lufs - 20, "the page's bed is soft air, far under the voices"
    assert card == pytest.approx(page, abs=0.5)


def test_the_card_is_silent_without_the_sound_bed_and_as_long_as_its_frames() -> None:
    config = AudioConfig(sound_bed=False)
    silent = card_sound(5 * FPS, FPS, config)
    assert len(silent) == 5 * config.sample_rate_hz and not np.any(silent)
    assert len(card_sound(5 * FPS + 1, FPS, AudioConfig())) == (5 * FPS + 1) * config.sample_rate_hz // FPS
