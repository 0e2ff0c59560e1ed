"""The bed's rules, on a constructed two-page timeline (no voices, so nothing is ducked): a page with no scene is
silent, a layered ambience and a library's music are heard, the book's own edges fade as their joins say, and a
page turn swishes only where one page follows another."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import soundfile

from comic_narrator.artifacts import BookReading, PageReading, Panel, ShotTiming, TextRegion, Timing
from comic_narrator.audio.bed import EDGE_FADE_S, PageScene, build_bed
from comic_narrator.audio.library import load_library
from comic_narrator.audio.scene import SceneChoice
from comic_narrator.config import AudioConfig

RATE = 16_000
FPS = 24


def _shot(page: int, panel: int, start_s: float, seconds: float) -> ShotTiming:
    return ShotTiming(
        page=page,
        panel=panel,
        start_s=start_s,
        duration_s=seconds,
        frames=round(seconds * FPS),
        line_ids=[],
        line_starts_s=[],
    )


def _book(*, turn_shot: bool = True) -> tuple[BookReading, Timing]:
    """Two pages of 4 s: an establishing shot (no panel) then a panel each; page 2 without its establishing shot
    when ``turn_shot`` is off. Page 1's sound word sits outside every panel."""
    pages = [
        PageReading(
            page=p,
            width=400,
            height=600,
            reading_direction="ltr",
            panels=[Panel(bbox=(0, 0, 400, 600))],
            texts=[TextRegion(bbox=(10, 10, 60, 30), kind="sound", text="BOOM!", panel=-1)] if p == 0 else [],
        )
        for p in range(2)
    ]
    shots = [_shot(0, -1, 0.0, 1.0), _shot(0, 0, 1.0, 3.0)]
    shots += [_shot(1, -1, 4.0, 1.0), _shot(1, 0, 5.0, 3.0)] if turn_shot else [_shot(1, 0, 4.0, 4.0)]
    return BookReading(source="t", lang="en", pages=pages), Timing(
        fps=FPS, sample_rate_hz=RATE, shots=shots, duration_s=8.0
    )


def _bed(scenes: dict[int, PageScene], turn_shot: bool = True, **kwargs: object) -> np.ndarray:
    reading, timing = _book(turn_shot=turn_shot)
    config = AudioConfig()
    return build_bed(
        reading,
        timing,
        8 * RATE,
        config,
        voice_lufs=-20.0,
        speech_s=[],
        scenes=scenes,
        **kwargs,  # type: ignore[arg-type]
    ).astype(np.float64)


def _wind(layer: str | None = None, mood: str | None = None) -> PageScene:
    return PageScene(SceneChoice(ambience="wind", layer=layer, reason="test"), mood=mood)  # type: ignore[arg-type]


def _rms(x: np.ndarray) -> float:
    return float(np.sqrt(np.mean(x**2)))


def test_a_page_without_a_scene_is_silent_and_no_sound_word_outside_the_panels_plays() -> None:
    bed = _bed({1: _wind()}, turn_shot=False)
    assert not np.any(bed[: 4 * RATE]), "page 1 has no scene, and its sound word is in no panel"
    assert _rms(bed[5 * RATE : 7 * RATE]) > 1e-3


def test_a_page_turn_swishes_where_one_page_follows_another() -> None:
    silent: dict[int, PageScene] = {}
    with_turn = _bed(silent)
    assert not np.any(with_turn[: 4 * RATE]), "the book's first shot turns no page"
    assert _rms(with_turn[4 * RATE : int(4.5 * RATE)]) > 1e-3
    without = _bed(silent, turn_shot=False)
    assert not np.any(without), "a page that opens on a panel turns in silence"


def test_a_layered_ambience_is_heard_beneath() -> None:
    plain, layered = _bed({0: _wind()}), _bed({0: _wind(layer="rain")})

    def hiss(x: np.ndarray) -> float:
        spectrum = np.abs(np.fft.rfft(x[int(1.5 * RATE) : int(3.5 * RATE)])) ** 2
        hz = np.fft.rfftfreq(int(2 * RATE), 1 / RATE)
        return float(spectrum[hz > 2500].sum() / spectrum.sum())

    assert hiss(layered) > 2 * hiss(plain)


def test_the_library_s_music_plays_instead_of_the_chords(tmp_path: Path) -> None:
    t = np.arange(3 * RATE) / RATE
    soundfile.write(tmp_path / "tense.wav", 0.5 * np.sin(2 * np.pi * 440.0 * t), RATE)
    (tmp_path / "sounds.toml").write_text('[music]\ntense = "tense.wav"\n', encoding="utf-8")
    library = load_library(tmp_path)

    def strongest_hz(x: np.ndarray) -> float:
        part = x[int(1.5 * RATE) : int(3.5 * RATE)]
        return float(np.fft.rfftfreq(len(part), 1 / RATE)[int(np.argmax(np.abs(np.fft.rfft(part))))])

    scenes = {0: _wind(mood="tense")}
    assert abs(strongest_hz(_bed(scenes, library=library)) - 440.0) < 2
    assert abs(strongest_hz(_bed(scenes)) - 440.0) > 20


def test_only_the_edges_that_join_the_same_ambience_skip_their_fade() -> None:
    scenes = {0: _wind(), 1: _wind()}
    opening = slice(int(0.035 * RATE), int(0.06 * RATE))  # past the 30 ms join fade, early in the edge fade
    steady = slice(int(1.5 * RATE), int(2.5 * RATE))
    faded, joined = _bed(scenes), _bed(scenes, joins=(True, False))
    assert _rms(faded[opening]) < 0.2 * _rms(faded[steady])
    assert _rms(joined[opening]) > 0.5 * _rms(joined[steady])
    # The turn between the two pages still dips, and the book's end still fades out: only the book's start joins.
    end = slice(8 * RATE - int(0.1 * EDGE_FADE_S * RATE), 8 * RATE)
    assert _rms(joined[end]) < 0.2 * _rms(joined[steady])
    turn = slice(4 * RATE - int(0.05 * EDGE_FADE_S * RATE), 4 * RATE + int(0.05 * EDGE_FADE_S * RATE))
    page_two = slice(int(6.5 * RATE), int(7.5 * RATE))
    assert _rms(joined[turn] - _bed({}, joins=(True, False))[turn]) < 0.5 * _rms(joined[page_two])


def test_a_book_that_goes_on_in_the_same_place_does_not_fade_out() -> None:
    scenes = {0: _wind(), 1: _wind()}
    closing = slice(8 * RATE - int(0.06 * RATE), 8 * RATE - int(0.035 * RATE))
    before_turn = slice(4 * RATE - int(0.06 * RATE), 4 * RATE - int(0.035 * RATE))
    steady = slice(int(6.0 * RATE), int(7.0 * RATE))
    faded, joined = _bed(scenes), _bed(scenes, joins=(False, True))
    assert _rms(faded[closing]) < 0.2 * _rms(faded[steady])
    assert _rms(joined[closing]) > 0.5 * _rms(joined[steady])
    assert _rms(joined[before_turn]) < 0.2 * _rms(joined[int(1.5 * RATE) : int(2.5 * RATE)]), "page 1 still fades"
