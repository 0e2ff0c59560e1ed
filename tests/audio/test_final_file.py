"""The file people play: the sample page narrated end to end (fast voices, draft picture), its MP4 decoded back
and measured as a player's meter would (stereo BS.1770 loudness, 4x-oversampled true peak)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

from comic_narrator.audio.truepeak import limit_peaks
from comic_narrator.config import AudioConfig
from comic_narrator.errors import EngineError
from comic_narrator.video import mux
from comic_narrator.video.mux import TRUE_PEAK_LIMIT_DBTP, encode_aac
from tests.audio.measure import decoded_audio, longest_quiet_s, loudness_lufs, true_peak_dbtp

pytestmark = pytest.mark.slow


def test_the_decoded_file_reads_the_loudness_target_as_stereo(narrated: Path) -> None:
    audio, rate_hz = decoded_audio(narrated)
    assert audio.shape[0] == 2
    loudness = loudness_lufs(audio, rate_hz)
    assert abs(loudness - AudioConfig.target_lufs) <= 1.0, f"{loudness:.2f} LUFS"


def test_the_decoded_file_stays_under_minus_one_dbtp(narrated: Path) -> None:
    audio, _ = decoded_audio(narrated)
    assert true_peak_dbtp(audio) <= TRUE_PEAK_LIMIT_DBTP


def test_no_dead_air_longer_than_three_seconds(narrated: Path) -> None:
    """The bed fills every pause: nowhere does the decoded file stay under -50 dBFS (50 ms RMS) for 3 s."""
    audio, rate_hz = decoded_audio(narrated)
    assert longest_quiet_s(audio, rate_hz) < 3.0


def test_the_encoder_s_own_overshoot_is_taken_back(tmp_path: Path) -> None:
    """A 180 Hz square wave driven 10 dB into the limiter: the densest peaks tried, on which the AAC encoder
    overshoots the limiter's ceiling by 2.2 dB (measured). The file written must still read <= -1 dBTP, and only
    the frames that needed it are lowered: its loudness stays within 1 LU of the limited track's."""
    rate_hz = 48_000
    t = np.arange(5 * rate_hz) / rate_hz
    square = np.sign(np.sin(2 * np.pi * 180 * t)).astype(np.float32) * np.float32(3.0)
    limited = limit_peaks(square, rate_hz)
    out = tmp_path / "square.m4a"
    encode_aac(out, [limited[: rate_hz // 3], limited[rate_hz // 3 :]], rate_hz)
    audio, _ = decoded_audio(out)
    assert true_peak_dbtp(audio) <= TRUE_PEAK_LIMIT_DBTP
    assert abs(loudness_lufs(audio[:1, : len(limited)], rate_hz) - loudness_lufs(limited[None, :], rate_hz)) < 1.0
    unguarded = tmp_path / "unguarded.m4a"
    encode_aac(unguarded, limited, rate_hz, true_peak_limit_dbtp=None)
    assert true_peak_dbtp(decoded_audio(unguarded)[0]) > TRUE_PEAK_LIMIT_DBTP, "the case must need the guard"


def test_the_peaks_measured_while_encoding_are_the_finished_file_s(narrated: Path, tmp_path: Path) -> None:
    """The true-peak check reads the first encode's packets as they are made (so the run waits only for the last
    frames): the narrated sample's sound, encoded again in uneven pieces and cut short of a whole AAC frame, gives
    every frame the same true peak as decoding the finished file does, priming and end padding dropped alike."""
    audio, rate_hz = decoded_audio(narrated)
    track = np.ascontiguousarray(audio[0, : rate_hz * 9 + 333], dtype=np.float32)
    floor = 0.97 * 10 ** (TRUE_PEAK_LIMIT_DBTP / 20)
    out = tmp_path / "again.m4a"
    measured = mux._StreamedPeaks(floor)
    mux._encode_once(out, [track[:7_000], track[7_000:150_001], track[150_001:]], rate_hz, measured.heard)
    streamed = measured.finish(len(track))
    from_file = mux._frame_true_peaks(out, floor)
    assert len(streamed) == len(from_file) == -(-len(track) // mux.AAC_FRAME_SAMPLES)
    np.testing.assert_array_equal(streamed, from_file)
    assert streamed.max() > floor / 4, "the sample's speech is measured, not silence"


def test_the_encode_aside_writes_what_the_encode_at_home_writes(narrated: Path, tmp_path: Path) -> None:
    """The run encodes the book's AAC in a process of its own (PyAV takes the GIL back after every codec call): fed
    the narrated sample's sound in uneven pieces through the pipe, it writes the same bytes as the encode in this
    process, true-peak guard and all."""
    audio, rate_hz = decoded_audio(narrated)
    track = np.ascontiguousarray(audio[0], dtype=np.float32)
    pieces = [track[:7_000], track[7_000:150_001], track[150_001:]]
    home, aside = tmp_path / "home.m4a", tmp_path / "aside.m4a"
    encode_aac(home, pieces, rate_hz)
    mux.encode_aac_aside(aside, iter(pieces), rate_hz)
    assert aside.read_bytes() == home.read_bytes()
    assert decoded_audio(aside)[0].shape[1] >= len(track)


def test_an_encode_aside_abandoned_leaves_no_file_and_its_failure_names_the_file(
    narrated: Path, tmp_path: Path
) -> None:
    audio, rate_hz = decoded_audio(narrated)
    track = np.ascontiguousarray(audio[0, : rate_hz * 3], dtype=np.float32)

    def stopped() -> Iterator[np.ndarray]:
        yield track
        raise KeyboardInterrupt  # the run stopped mid-book

    out = tmp_path / "stopped.m4a"
    with pytest.raises(KeyboardInterrupt):
        mux.encode_aac_aside(out, stopped(), rate_hz)
    assert sorted(p.name for p in tmp_path.iterdir()) == [], "no file, no temp file, no spool"
    missing = tmp_path / "no such folder" / "book.m4a"
    with pytest.raises(EngineError, match=r"no such folder/book\.m4a: audio encoding failed"):
        mux.encode_aac_aside(missing, iter([track, track]), rate_hz)
