"""Mixing: sample-exact length, the loudness target, and the sound bed placed on the timeline (real voices)."""

from __future__ import annotations

from pathlib import Path

import av
import numpy as np
import pyloudnorm
import pytest
from scipy.signal import resample_poly

from comic_narrator.artifacts import BookReading, PageReading, Panel, Script, ScriptLine, TextRegion
from comic_narrator.audio.mix import bed_for, mix_track
from comic_narrator.audio.soundbed import effect_for, synthesise_effect
from comic_narrator.audio.truepeak import PEAK_CEILING
from comic_narrator.config import AudioConfig, RenderConfig, VoiceConfig
from comic_narrator.progress import SILENT
from comic_narrator.timeline.timing import build_timing
from comic_narrator.video.encode import encode_mp4
from comic_narrator.voice.casting import cast_characters
from comic_narrator.voice.synthesis import synthesize_script
from comic_narrator.voice.voicebank import open_voice_bank


@pytest.mark.parametrize(
    ("word", "effect"),
    [
        ("BOOM!", "impact"),
        ("Crash", "impact"),
        ("BrrOoooOoo!!", "wind"),
        ("woooosh !", "whoosh"),
        ("ZZZT", "zap"),
        ("ドン", "impact"),
        ("plip", "soft"),
    ],
)
def test_sound_words_map_to_effect_families(word: str, effect: str) -> None:
    assert effect_for(word) == effect


def _centroid_hz(samples: np.ndarray, rate: int) -> float:
    spectrum = np.abs(np.fft.rfft(samples))
    freqs = np.fft.rfftfreq(len(samples), 1 / rate)
    return float((spectrum * freqs).sum() / spectrum.sum())


def test_effects_are_deterministic_and_distinct() -> None:
    rate = 48_000
    one = synthesise_effect("impact", rate, np.random.default_rng(3))
    two = synthesise_effect("impact", rate, np.random.default_rng(3))
    assert np.array_equal(one, two)
    assert float(np.abs(one).max()) == pytest.approx(1.0, abs=1e-6)
    whoosh = synthesise_effect("whoosh", rate, np.random.default_rng(3))
    assert _centroid_hz(one, rate) < 0.5 * _centroid_hz(whoosh, rate), "an impact is darker than a whoosh"


def test_each_effect_family_has_its_own_length_and_colour() -> None:
    """Impact 0.7 s, zap 0.45 s (a bright buzz), wind 2.2 s (low and howling: under half the zap's centroid),
    whoosh 0.6 s, the soft swish 0.4 s; every one peaks at 1.0."""
    rate = 48_000
    made = {
        e: synthesise_effect(e, rate, np.random.default_rng(5)) for e in ("impact", "zap", "wind", "whoosh", "soft")
    }
    lengths = {effect: round(len(audio) / rate, 2) for effect, audio in made.items()}
    assert lengths == {"impact": 0.7, "zap": 0.45, "wind": 2.2, "whoosh": 0.6, "soft": 0.4}
    assert all(float(np.abs(audio).max()) == pytest.approx(1.0, abs=1e-6) for audio in made.values())
    assert _centroid_hz(made["wind"], rate) < 0.5 * _centroid_hz(made["zap"], rate)


@pytest.fixture(scope="module")
def timeline(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, BookReading, Script, list]:
    work = tmp_path_factory.mktemp("mix")
    texts = [
        TextRegion(
            bbox=(10, 10, 80, 30), kind="speech", text="Hello there, how are you today?", speaker="char1", panel=0
        ),
        TextRegion(bbox=(10, 210, 80, 30), kind="sound", text="BOOM!", panel=1),
    ]
    page = PageReading(
        page=0,
        width=400,
        height=600,
        reading_direction="ltr",
        panels=[Panel(bbox=(0, 0, 400, 200)), Panel(bbox=(0, 200, 400, 200))],
        texts=texts,
    )
    reading = BookReading(source="test", lang="en", pages=[page])
    script = Script(
        lang="en",
        lines=[
            ScriptLine(
                id="p001-t01", page=0, panel=0, speaker="char1", kind="speech", text="Hello there, how are you today?"
            )
        ],
    )
    with open_voice_bank(VoiceConfig()) as bank:
        voices = bank.voices()
    cast = cast_characters(reading, voices, VoiceConfig(), "en")
    clips = synthesize_script(script, cast, VoiceConfig(jobs=1), work / "clips", SILENT)
    return work, reading, script, clips


def test_mix_is_sample_exact_and_at_the_loudness_target(timeline: tuple) -> None:
    work, reading, script, clips = timeline
    config = AudioConfig(sound_bed=False)
    timing = build_timing(reading, script, clips, config, fps=30)
    track = mix_track(work, timing, clips, config)
    assert len(track) == sum(s.frames for s in timing.shots) * config.sample_rate_hz // 30
    # The mono track is written to both AAC channels: the file is what meets the target (mono + 3.01 LU).
    loudness = pyloudnorm.Meter(config.sample_rate_hz).integrated_loudness(track.astype(np.float64))
    assert loudness + 10 * np.log10(2) == pytest.approx(config.target_lufs, abs=0.5)
    assert _true_peak(track) <= PEAK_CEILING + 1e-4


def _true_peak(samples: np.ndarray) -> float:
    """Largest magnitude of the 4x-oversampled waveform (ITU-R BS.1770 true peak), computed here independently of
    the limiter's own envelope."""
    return float(np.abs(resample_poly(samples.astype(np.float64), 4, 1)).max())


@pytest.mark.parametrize("target_lufs", [-16.0, -6.0])
def test_mix_and_its_decoded_mp4_stay_under_the_ceiling(timeline: tuple, target_lufs: float, tmp_path: Path) -> None:
    """The -0.5 dBFS ceiling on the real mix of real voices and the sound bed, and the true peak of the AAC that the
    real encoder (PyAV) writes, decoded back. -6 LUFS and a 0 dBFS effect stand in for a hot page: they drive the
    limiter 10 dB harder than the defaults so the ceiling is tested where it bites. The video is a stand-in (black
    64x64 frames); only its audio is measured."""
    work, reading, script, clips = timeline
    config = AudioConfig(target_lufs=target_lufs, effects_peak_dbfs=0.0 if target_lufs > -16 else -12.0)
    timing = build_timing(reading, script, clips, config, fps=30)
    track = mix_track(work, timing, clips, config, reading)
    assert float(np.abs(track).max()) > 0.9 * PEAK_CEILING, "the mix must reach the limiter for this to mean much"
    assert float(np.abs(track).max()) <= PEAK_CEILING + 1e-6  # float32 rounding of the ceiling itself
    assert _true_peak(track) <= PEAK_CEILING + 1e-4
    out = tmp_path / "peak.mp4"
    frames = (np.zeros((64, 64, 3), np.uint8) for _ in range(sum(s.frames for s in timing.shots)))
    encode_mp4(out, frames, track, config.sample_rate_hz, RenderConfig(width_px=64, height_px=64, preset="ultrafast"))
    with av.open(str(out)) as container:
        decoded = np.concatenate([frame.to_ndarray() for frame in container.decode(audio=0)], axis=1)
    assert decoded.shape[1] >= len(track)
    # AAC overshoots a little (measured +0.2 dB); the ceiling's 0.5 dB of headroom is there so the file never clips.
    assert max(_true_peak(channel) for channel in decoded) < 1.0


def test_sound_bed_puts_the_effect_at_its_panel(timeline: tuple) -> None:
    _work, reading, script, clips = timeline
    config = AudioConfig()
    timing = build_timing(reading, script, clips, config, fps=30)
    rate = config.sample_rate_hz
    total = sum(s.frames for s in timing.shots) * rate // 30
    bed = bed_for(reading, timing, clips, total, config)
    boom_shot = next(s for s in timing.shots if s.panel == 1)
    start = round(boom_shot.start_s * rate)
    assert float(np.abs(bed[start : start + rate // 2]).max()) > 0.1, "the BOOM panel opens with an effect"
    speech_shot = next(s for s in timing.shots if s.panel == 0)
    s0 = round(speech_shot.start_s * rate)
    assert float(np.abs(bed[s0 : s0 + rate // 2]).max()) < 0.02, (
        "only the ambience, ducked under the line, sits under a panel without effects"
    )


def test_the_mastered_mix_with_its_bed_reads_the_target_and_the_bed_fills_the_pauses(timeline: tuple) -> None:
    """The bed adds loudness and the limiter takes some off; the mastering measures again and makes it up, so the
    file reads the target within a tenth of a LU at the default target. The page's establishing shot, where nobody
    speaks, carries the bed; without it, silence."""
    work, reading, script, clips = timeline
    config = AudioConfig()
    timing = build_timing(reading, script, clips, config, fps=30)
    track = mix_track(work, timing, clips, config, reading)
    loudness = pyloudnorm.Meter(config.sample_rate_hz).integrated_loudness(track.astype(np.float64))
    assert loudness + 10 * np.log10(2) == pytest.approx(config.target_lufs, abs=0.1)
    hold = next(s for s in timing.shots if s.panel == -1)
    pause = slice(round((hold.start_s + 0.4) * config.sample_rate_hz), round(hold.duration_s * 0.8 * 48_000))
    assert 20 * np.log10(np.sqrt(np.mean(track[pause].astype(np.float64) ** 2))) > -60, "the bed under the hold"
    silent = mix_track(work, timing, clips, AudioConfig(sound_bed=False), reading)
    assert not np.any(silent[pause])
