"""The ducking curve's rules, read off the gain itself: down by the depth under speech, already down when a line
starts, back up over the release after it, a short pause bridged, a long one let up. tests/audio/test_bed.py
hears the same curve in a real mix."""

from __future__ import annotations

import numpy as np
import pytest

from comic_narrator.audio.duck import duck_gain

RATE = 48_000
DEPTH_DB = 10.0
ATTACK_S = 0.3
RELEASE_S = 0.8
DOWN = 10 ** (-DEPTH_DB / 20)


def _gain(speech_s: list[tuple[float, float]], seconds: float = 10.0) -> np.ndarray:
    return duck_gain(round(seconds * RATE), RATE, speech_s, DEPTH_DB, ATTACK_S, RELEASE_S)


def _at(gain: np.ndarray, seconds: float) -> float:
    return float(gain[round(seconds * RATE)])


def test_nothing_said_or_no_depth_leaves_the_bed_alone() -> None:
    assert np.array_equal(_gain([]), np.ones(10 * RATE, dtype=np.float32))
    flat = duck_gain(RATE, RATE, [(0.2, 0.6)], 0.0, ATTACK_S, RELEASE_S)
    assert np.array_equal(flat, np.ones(RATE, dtype=np.float32))
    assert len(duck_gain(0, RATE, [(0.2, 0.6)], DEPTH_DB, ATTACK_S, RELEASE_S)) == 0


def test_the_bed_is_down_by_the_depth_while_a_line_is_said_and_eases_around_it() -> None:
    gain = _gain([(3.0, 5.0)])
    assert len(gain) == 10 * RATE and gain.dtype == np.float32
    said = gain[3 * RATE : 5 * RATE]
    assert np.allclose(said, DOWN, rtol=1e-4), "down by the depth for the whole line, from its first sample"
    assert _at(gain, 1.0) == pytest.approx(1.0) and _at(gain, 9.0) == pytest.approx(1.0)
    # The attack: starts attack_s before the line, halfway (in dB) half-way through, monotonic.
    assert _at(gain, 3.0 - ATTACK_S - 0.01) == pytest.approx(1.0, abs=1e-4)
    assert 20 * np.log10(_at(gain, 3.0 - ATTACK_S / 2)) == pytest.approx(-DEPTH_DB / 2, abs=0.3)
    attack = gain[round((3.0 - ATTACK_S) * RATE) : 3 * RATE]
    assert np.all(np.diff(attack) <= 1e-6)
    # The release: back over release_s after the line, halfway in dB at its middle, monotonic.
    assert 20 * np.log10(_at(gain, 5.0 + RELEASE_S / 2)) == pytest.approx(-DEPTH_DB / 2, abs=0.3)
    assert _at(gain, 5.0 + RELEASE_S + 0.02) == pytest.approx(1.0, abs=1e-4)
    assert _at(gain, 5.0 + RELEASE_S - 0.1) < 0.99, "still coming back up, not there early"
    release = gain[5 * RATE : round((5.0 + RELEASE_S) * RATE)]
    assert np.all(np.diff(release) >= -1e-6)


def test_a_pause_too_short_to_come_back_up_in_stays_down_and_a_long_one_lets_the_bed_up() -> None:
    short = ATTACK_S + RELEASE_S - 0.2
    gain = _gain([(2.0, 3.0), (3.0 + short, 4.0 + short)])
    assert np.allclose(gain[2 * RATE : round((4.0 + short) * RATE)], DOWN, rtol=1e-4), "no pumping"
    long = ATTACK_S + RELEASE_S + 1.0
    gain = _gain([(2.0, 3.0), (3.0 + long, 4.0 + long)])
    assert _at(gain, 3.0 + RELEASE_S + 0.5) == pytest.approx(1.0, abs=1e-4)


def test_lines_given_out_of_order_or_past_the_end_duck_the_same() -> None:
    in_order = _gain([(1.0, 2.0), (6.0, 7.0)])
    assert np.array_equal(_gain([(6.0, 7.0), (1.0, 2.0)]), in_order)
    past_end = _gain([(8.0, 12.0)])
    assert np.allclose(past_end[8 * RATE :], DOWN, rtol=1e-4)


def test_a_line_from_the_first_sample_is_ducked_from_it_and_a_shallow_depth_still_dips() -> None:
    gain = _gain([(0.0, 1.0)])
    assert gain[0] == pytest.approx(DOWN, rel=1e-4)
    shallow = duck_gain(2 * RATE, RATE, [(0.5, 1.0)], 0.5, ATTACK_S, RELEASE_S)
    assert float(shallow.min()) == pytest.approx(10 ** (-0.5 / 20), rel=1e-5)
