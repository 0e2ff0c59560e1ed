"""The sound bed under one piece of the book: each page's ambience (and music) ducked under the voices, the
sound-word effects at their panels, a swish at each page turn. Sample-aligned with the timeline, deterministic."""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from comic_narrator.artifacts import BookReading, Timing
from comic_narrator.audio.ambience import Ambience, synthesise_ambience
from comic_narrator.audio.duck import duck_gain
from comic_narrator.audio.library import SoundLibrary, looped, read_sound
from comic_narrator.audio.music import Mood, synthesise_music
from comic_narrator.audio.scene import SceneChoice
from comic_narrator.audio.soundbed import Effect, effect_for, synthesise_effect
from comic_narrator.audio.synth import Audio, at_loudness, fades, peak
from comic_narrator.config import AudioConfig

log = logging.getLogger("comic_narrator")

LAYER_UNDER_DB = 6.0
"""A second setting the page also tells of plays this much under the first."""
EDGE_FADE_S = 0.3
"""A page's ambience fades in and out over this at the page's edges (under the page-turn swish)."""
JOIN_FADE_S = 0.03
"""The same, where the page before or after plays the same ambience: a dip too short to hear as a gap, long
enough that the two pages' noise does not meet in a click."""
EFFECTS_PER_PANEL = 3
"""A cluttered panel gets its first three effects."""


@dataclass(frozen=True)
class PageScene:
    """What a page sounds like: its ambience (and why), and its music's mood when the music bed is on."""

    choice: SceneChoice
    mood: Mood | None = None


def _db(dbfs: float) -> np.float32:
    return np.float32(10 ** (dbfs / 20))


def _ambience(
    kind: Ambience, n: int, rate: int, rng: np.random.Generator, library: SoundLibrary | None, offset: int
) -> Audio:
    recording = library.file_for("ambience", kind) if library is not None else None
    if recording is not None:
        return looped(read_sound(recording, rate), n, rate, offset)
    return synthesise_ambience(kind, n, rate, rng)


def _effect(
    effect: Effect, rate: int, rng: np.random.Generator, library: SoundLibrary | None, page_turn: bool = False
) -> Audio:
    section, key = ("page", "turn") if page_turn else ("effects", effect)
    recording = library.file_for(section, key) if library is not None else None
    return peak(read_sound(recording, rate)) if recording is not None else synthesise_effect(effect, rate, rng)


def _music(mood: Mood, start: int, n: int, rate: int, library: SoundLibrary | None) -> Audio:
    recording = library.file_for("music", mood) if library is not None else None
    if recording is not None:
        return looped(read_sound(recording, rate), n, rate, start)
    return synthesise_music(mood, start, n, rate)


def build_bed(
    reading: BookReading,
    timing: Timing,
    total_samples: int,
    config: AudioConfig,
    *,
    voice_lufs: float,
    speech_s: Sequence[tuple[float, float]],
    scenes: dict[int, PageScene],
    start_sample: int = 0,
    library: SoundLibrary | None = None,
    joins: tuple[bool, bool] = (False, False),
    seed: int = 17,
) -> Audio:
    """The bed under ``timing`` (``total_samples`` long). Each page of ``scenes`` spans its shots; its ambience (and
    music) is set by loudness, the configured distance under ``voice_lufs`` (the voices' mono loudness), and ducked
    under ``speech_s`` (seconds on this timeline); effects and page turns go on top, not ducked. ``start_sample``
    places the piece in the book, so the music and looped recordings carry on across pieces; ``joins`` says
    whether the same ambience plays just before and just after the piece (it then barely dips at that edge)."""
    rate = timing.sample_rate_hz
    rng = np.random.default_rng(seed)
    beds = np.zeros(total_samples, dtype=np.float32)
    spans: dict[int, list[int]] = {}
    for shot in timing.shots:
        start = round(shot.start_s * rate)
        end = min(total_samples, start + shot.frames * rate // timing.fps)
        span = spans.setdefault(shot.page, [start, end])
        span[0], span[1] = min(span[0], start), max(span[1], end)
    pages = sorted(spans)
    for page, (lo, hi) in sorted(spans.items()):
        scene = scenes.get(page)
        if scene is None or hi <= lo:
            continue
        under = config.ambience_under_voice_lu if scene.choice.ambience != "neutral" else config.neutral_under_voice_lu
        level = voice_lufs - under
        sound = at_loudness(
            _ambience(scene.choice.ambience, hi - lo, rate, rng, library, start_sample + lo), rate, level
        )
        if scene.choice.layer is not None:
            layer = _ambience(scene.choice.layer, hi - lo, rate, rng, library, start_sample + lo)
            sound += at_loudness(layer, rate, level - LAYER_UNDER_DB)
        if scene.mood is not None:
            music = _music(scene.mood, start_sample + lo, hi - lo, rate, library)
            sound += at_loudness(music, rate, voice_lufs - config.music_under_voice_lu)
        fade_in = JOIN_FADE_S if page == pages[0] and joins[0] else EDGE_FADE_S
        fade_out = JOIN_FADE_S if page == pages[-1] and joins[1] else EDGE_FADE_S
        beds[lo:hi] += fades(sound, rate, fade_in, fade_out)
    beds *= duck_gain(total_samples, rate, speech_s, config.duck_db, config.duck_attack_s, config.duck_release_s)
    return beds + _effects(reading, timing, total_samples, config, rng, library)


def _effects(
    reading: BookReading,
    timing: Timing,
    total_samples: int,
    config: AudioConfig,
    rng: np.random.Generator,
    library: SoundLibrary | None,
) -> Audio:
    """Sound-word effects at the start of their panels, a swish at each page turn; neither spills into the next
    shot."""
    rate = timing.sample_rate_hz
    out = np.zeros(total_samples, dtype=np.float32)
    pages = {page.page: page for page in reading.pages}
    previous_page: int | None = None
    for shot in timing.shots:
        start = round(shot.start_s * rate)
        end = min(total_samples, start + shot.frames * rate // timing.fps)
        layers: list[tuple[int, Audio]] = []
        if shot.panel < 0 and previous_page is not None and shot.page != previous_page:
            turn = _effect("soft", rate, rng, library, page_turn=True)
            layers.append((start, turn * _db(config.page_turn_peak_dbfs)))
        previous_page = shot.page
        page = pages.get(shot.page)
        if page is not None and shot.panel >= 0:
            words = [t.text for t in page.texts if t.kind == "sound" and t.panel == shot.panel]
            for number, word in enumerate(words[:EFFECTS_PER_PANEL]):
                offset = start + int((0.05 + 0.35 * number) * rate)
                sound = _effect(effect_for(word), rate, rng, library) * _db(config.effects_peak_dbfs)
                layers.append((offset, sound))
        for offset, sound in layers:
            stop = min(end, offset + len(sound))
            if stop > offset:
                out[offset:stop] += sound[: stop - offset]
    return out
