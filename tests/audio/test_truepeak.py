"""True-peak measurement: oversampling only where the waveform can reach a floor gives the same envelope there
as oversampling everything, on the sample page's real mastered mix."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import soundfile

from comic_narrator.audio.truepeak import PEAK_CEILING, block_true_peaks, true_peak_envelope
from tests.audio.conftest import work_of

pytestmark = pytest.mark.slow


@pytest.mark.parametrize("gain", [1.0, 1.6])
def test_the_floor_skips_only_what_cannot_reach_it(narrated: Path, gain: float) -> None:
    track, _ = soundfile.read(work_of(narrated) / "audio.wav", dtype="float32")
    track = track * np.float32(gain)  # 1.6: driven over the ceiling, as the limiter sees a loud page
    full = true_peak_envelope(track)
    fast = true_peak_envelope(track, PEAK_CEILING * 0.9)
    reached = full >= PEAK_CEILING * 0.9
    assert reached.any() and not reached.all()
    assert np.array_equal(full[reached], fast[reached])
    assert (fast[~reached] < PEAK_CEILING * 0.9).all()
    assert full.max() > np.abs(track).max(), "the page has intersample peaks"
    chunks = np.array_split(track, 7)
    blocks = np.fromiter(block_true_peaks(chunks, 1024, PEAK_CEILING * 0.9), float)
    whole = np.array([full[i : i + 1024].max() for i in range(0, len(full), 1024)])
    loud = whole >= PEAK_CEILING * 0.9
    assert np.allclose(blocks[loud], whole[loud], rtol=1e-9)
