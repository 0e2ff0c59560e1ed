"""The living bed: which ambience a page gets, its ducking under the voices, the user's own sounds and the music,
on the sample page's real reading, timeline and voices (and the decoded MP4 where the choice must be heard)."""

from __future__ import annotations

import json
import shutil
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest
import soundfile

from comic_narrator.artifacts import BookReading, ClipList, PageReading, TextRegion, Timing
from comic_narrator.audio.ambience import synthesise_ambience
from comic_narrator.audio.duck import duck_gain
from comic_narrator.audio.library import load_library, looped, read_sound
from comic_narrator.audio.mix import bed_for, scenes_for, speech_spans
from comic_narrator.audio.music import page_mood
from comic_narrator.audio.scene import SceneChoice, choose_scene, page_colours
from comic_narrator.cli import main
from comic_narrator.config import AudioConfig
from comic_narrator.errors import InputError
from tests.audio.conftest import work_of
from tests.audio.measure import decoded_audio
from tests.conftest import SAMPLE_PAGE, corpus_path

pytestmark = pytest.mark.slow

RATE_HZ = 48_000


def _artifacts(output: Path) -> tuple[BookReading, Timing, list]:
    work = work_of(output)
    reading = BookReading.model_validate_json((work / "reading.json").read_text())
    timing = Timing.model_validate_json((work / "timing.json").read_text())
    clips = ClipList.model_validate_json((work / "clips.json").read_text()).clips
    return reading, timing, clips


def _samples(timing: Timing) -> int:
    return round(sum(shot.frames for shot in timing.shots) * timing.sample_rate_hz / timing.fps)


def _rms_db(samples: np.ndarray) -> float:
    return float(10 * np.log10(np.mean(np.square(samples.astype(np.float64)))))


def _page(texts: list[tuple[str, str]], scene: list | None = None) -> PageReading:
    regions = [
        TextRegion(bbox=(0, 40 * i, 100, 30), kind=kind, text=text, panel=0) for i, (kind, text) in enumerate(texts)
    ]
    return PageReading(
        page=0, width=400, height=600, reading_direction="ltr", panels=[], texts=regions, scene=scene or []
    )


# --------------------------------------------------------------------------------------------- choosing


def test_the_sample_page_s_sound_word_and_lines_choose_wind(narrated: Path) -> None:
    reading, _, _ = _artifacts(narrated)
    choice = choose_scene(reading.pages[0], page_colours(SAMPLE_PAGE))
    assert choice.ambience == "wind" and "sound 'Brr" in choice.reason


def test_scene_cues_in_the_reading_come_first(narrated: Path) -> None:
    reading, _, _ = _artifacts(narrated)
    page = reading.pages[0].model_copy(update={"scene": ["sea", "night"]})
    assert choose_scene(page, page_colours(SAMPLE_PAGE)) == SceneChoice("sea", "night", "the reading's scene cues")


@pytest.mark.parametrize(
    ("texts", "ambience"),
    [
        ([("caption", "Deep in the forest, at dawn.")], "forest"),
        ([("sound", "ザーザー")], "rain"),
        ([("sound", "パチパチ"), ("speech", "Keep the fire going.")], "fire"),
        ([("caption", "The city never sleeps."), ("speech", "Taxi!")], "city"),
        ([("speech", "Hello there.")], "neutral"),
        # Black Jack ni Yoroshiku p. 9 and 10 as read: "3 months after graduating", "the national exam"
        ([("caption", "永禄大学医学部卒業から3力月"), ("caption", "医師国家試験に合格しなければいけない")], "neutral"),
        ([("caption", "夜の病室")], "night"),
    ],
)
def test_the_lettering_places_a_page(texts: list[tuple[str, str]], ambience: str) -> None:
    assert choose_scene(_page(texts), None).ambience == ambience


def test_a_jungle_page_s_colours_choose_forest_and_a_grey_one_tells_nothing() -> None:
    jungle = page_colours(corpus_path("peppercarrot-ep17", "page3.jpg"))
    grey = page_colours(corpus_path("wikipe-tan", "page1.ja.jpg"))
    assert jungle is not None and grey is not None
    assert choose_scene(_page([]), jungle).ambience == "forest"
    assert choose_scene(_page([]), grey).ambience == "neutral"


# --------------------------------------------------------------------------------------------- the bed itself


def test_the_bed_ducks_under_speech_smoothly(narrated: Path) -> None:
    """Measured on the real page's bed: 10 dB lower in the middle of its lines than in its pauses, already down
    when a line starts, and never a step: the gain moves at most by the raised cosine's steepest slope."""
    reading, timing, clips = _artifacts(narrated)
    config = AudioConfig()
    bed = bed_for(reading, timing, clips, _samples(timing), config)
    spans = speech_spans(timing, clips)
    under = np.concatenate(
        [bed[round((a + 0.5) * RATE_HZ) : round((b - 0.3) * RATE_HZ)] for a, b in spans if b - a > 1]
    )
    pause = np.ones(len(bed), dtype=bool)
    for a, b in spans:
        pause[max(0, round((a - 1.2) * RATE_HZ)) : round((b + 1.2) * RATE_HZ)] = False
    assert pause.sum() > RATE_HZ, "the page has pauses to measure"
    assert _rms_db(bed[pause]) - _rms_db(under) == pytest.approx(config.duck_db, abs=2.0)
    gain_db = 20 * np.log10(
        duck_gain(len(bed), RATE_HZ, spans, config.duck_db, config.duck_attack_s, config.duck_release_s)
    )
    first = round(spans[0][0] * RATE_HZ)
    assert gain_db[first] == pytest.approx(-config.duck_db, abs=0.01)
    assert -config.duck_db + 1 < gain_db[first - round(config.duck_attack_s / 2 * RATE_HZ)] < -1
    steepest = np.pi / 2 * config.duck_db / (config.duck_attack_s * RATE_HZ)
    assert np.abs(np.diff(gain_db)).max() <= steepest * 1.05


def test_the_bed_is_the_same_on_every_run(narrated: Path) -> None:
    reading, timing, clips = _artifacts(narrated)
    one = bed_for(reading, timing, clips, _samples(timing), AudioConfig())
    assert np.array_equal(one, bed_for(reading, timing, clips, _samples(timing), AudioConfig()))


def test_music_is_off_by_default_and_sits_under_the_ambience_when_on(narrated: Path) -> None:
    reading, timing, clips = _artifacts(narrated)
    assert page_mood(reading.pages[0], None) == "tense", "two of its four lines are shouted"
    assert scenes_for(reading, {}, AudioConfig())[0].mood is None
    on = replace(AudioConfig(), music=True)
    scenes = scenes_for(reading, {}, on)
    assert scenes[0].mood == "tense"
    n = _samples(timing)
    music = bed_for(reading, timing, clips, n, on, scenes=scenes) - bed_for(reading, timing, clips, n, AudioConfig())
    opening = slice(round(0.5 * RATE_HZ), round(2.5 * RATE_HZ))  # the establishing shot, before the first line
    ambience = bed_for(reading, timing, clips, n, AudioConfig())[opening]
    assert -45 < _rms_db(music[opening]) < _rms_db(ambience)


# --------------------------------------------------------------------------------------------- your own sounds


def _tone_file(path: Path, hz: float, seconds: float = 3.0) -> Path:
    t = np.arange(round(seconds * RATE_HZ)) / RATE_HZ
    soundfile.write(str(path), (0.3 * np.sin(2 * np.pi * hz * t)).astype(np.float32), RATE_HZ)
    return path


def _rerun(narrated: Path, tmp_path: Path, *options: str) -> Path:
    """The finished sample run again in a copy of its work folder, with ``options``: its voices and picture are
    reused, the sound is made again."""
    out = tmp_path / narrated.name
    shutil.copy(narrated, out)
    shutil.copytree(work_of(narrated), work_of(out))
    command = [str(SAMPLE_PAGE), "-o", str(out), "--voice-quality", "fast", "--draft", *options, "-q"]
    assert main(command) == 0
    return out


def _tone_db(audio: np.ndarray, start_s: float, end_s: float, hz: float = 50.0) -> float:
    """The level of one frequency in a stretch of the decoded file (a windowed single-bin DFT)."""
    part = audio[round(start_s * RATE_HZ) : round(end_s * RATE_HZ)]
    window = np.hanning(len(part))
    bin_ = (part * window * np.exp(-2j * np.pi * hz * np.arange(len(part)) / RATE_HZ)).sum()
    return float(20 * np.log10(2 * abs(bin_) / window.sum()))


def test_a_sounds_folder_s_recording_plays_and_ducks_in_the_file(narrated: Path, tmp_path: Path) -> None:
    """A 50 Hz tone mapped over the page's ambience (wind) is heard in the decoded file in its place, where the
    voices have no energy of their own: 10 dB lower in the middle of each line than in the opening pause, already
    going down before the first line starts (the dip starts 0.3 s ahead), untouched 0.5 s before it."""
    sounds = tmp_path / "sounds"
    sounds.mkdir()
    _tone_file(sounds / "tone.wav", 50.0, seconds=20.0)  # longer than the page: no loop seam to measure
    (sounds / "sounds.toml").write_text('[ambience]\nwind = "tone.wav"\n')
    out = _rerun(narrated, tmp_path, "--sounds", str(sounds))
    audio = decoded_audio(out)[0][0]
    _, timing, clips = _artifacts(out)
    spans = speech_spans(timing, clips)
    pause = _tone_db(audio, 0.5, spans[0][0] - 0.5)
    assert pause > -40, "the tone plays in the opening pause"
    for start_s, end_s in (span for span in spans if span[1] - span[0] > 1):
        assert pause - _tone_db(audio, start_s + 0.5, end_s - 0.3) == pytest.approx(10.0, abs=2.0)
    first = spans[0][0]
    assert pause - _tone_db(audio, first - 0.15, first) > 5.0
    assert abs(pause - _tone_db(audio, first - 0.8, first - 0.4)) < 1.0


@pytest.mark.parametrize(
    ("mapping", "problem"),
    [
        ('[ambience]\nwindy = "hum.wav"\n', "windy: unknown"),
        ('[noises]\nwind = "hum.wav"\n', "unknown section [noises]"),
        ('[ambience]\nwind = "absent.wav"\n', "absent.wav is missing or not audio"),
        ("[ambience\n", "cannot be read as TOML"),
        ('ambience = "hum.wav"\n', "[ambience] must be a table"),
        ("[ambience]\nwind = 3\n", "wind: the value must be a file name in quotes"),
    ],
)
def test_a_bad_mapping_file_is_one_clear_line(tmp_path: Path, mapping: str, problem: str) -> None:
    _tone_file(tmp_path / "hum.wav", 220.0)
    (tmp_path / "sounds.toml").write_text(mapping)
    with pytest.raises(InputError, match=problem.replace("[", r"\[").replace("]", r"\]")) as raised:
        load_library(tmp_path)
    assert "sounds.toml" in str(raised.value)


def test_a_sounds_file_given_for_the_folder_is_named_as_such(tmp_path: Path) -> None:
    sounds = _tone_file(tmp_path / "hum.wav", 220.0)
    with pytest.raises(InputError, match="is not a folder") as raised:
        load_library(sounds)
    assert "hum.wav" in str(raised.value)


def test_a_recording_at_another_rate_in_stereo_is_read_as_mono_at_the_run_s_rate(tmp_path: Path) -> None:
    """A 2 s stereo recording at 22.05 kHz, a 441 Hz tone on the left and silence on the right: 2 s at the run's
    rate, the tone still at 441 Hz, at half its level (the channels averaged)."""
    t = np.arange(2 * 22_050) / 22_050
    tone = 0.4 * np.sin(2 * np.pi * 441 * t)
    soundfile.write(str(tmp_path / "s.wav"), np.stack([tone, np.zeros_like(tone)], axis=1).astype(np.float32), 22_050)
    mono = read_sound(tmp_path / "s.wav", RATE_HZ)
    assert len(mono) == 2 * RATE_HZ
    spectrum = np.abs(np.fft.rfft(mono * np.hanning(len(mono))))
    assert np.fft.rfftfreq(len(mono), 1 / RATE_HZ)[int(np.argmax(spectrum))] == pytest.approx(441, abs=1)
    middle = mono[RATE_HZ // 2 : 3 * RATE_HZ // 2]
    assert np.sqrt(np.mean(np.square(middle))) == pytest.approx(0.2 / np.sqrt(2), rel=0.03)


def test_the_run_refuses_a_bad_sounds_folder_before_any_work(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "x.mp4"
    assert main([str(SAMPLE_PAGE), "-o", str(out), "--sounds", str(tmp_path), "-q"]) != 0
    error = capsys.readouterr().err.strip()
    assert len(error.splitlines()) == 1 and "no sounds.toml" in error
    assert not (work_of(out) / "book.json").exists()


# --------------------------------------------------------------------------------------------- heard in the file


def _high_share(path: Path) -> float:
    """The share of the opening pause's energy above 4 kHz in the decoded file."""
    audio, rate_hz = decoded_audio(path)
    opening = audio[0, round(0.5 * rate_hz) : round(2.5 * rate_hz)]
    power = np.abs(np.fft.rfft(opening)) ** 2
    return float(power[np.fft.rfftfreq(len(opening), 1 / rate_hz) > 4000].sum() / power.sum())


def test_a_scene_cue_in_an_edited_reading_is_heard_in_the_file(narrated: Path, tmp_path: Path) -> None:
    """The finished run again, with the scene cue 'rain' added to its reading (its lettering says wind): the
    voices and picture are reused but the file is made again, and its opening pause turns from low gusts to
    bright hiss; the log says why."""
    reading = json.loads((work_of(narrated) / "reading.json").read_text())
    reading["pages"][0]["scene"] = ["rain"]
    edited = tmp_path / "rain.json"
    edited.write_text(json.dumps(reading))
    out = _rerun(narrated, tmp_path, "--reading", str(edited))
    assert "page 1: rain bed (the reading's scene cues)" in (work_of(out) / "comic-narrator.log").read_text()
    wind, rain = _high_share(narrated), _high_share(out)
    assert rain > 0.5 > 0.1 > wind, (wind, rain)


def test_a_page_that_goes_on_in_the_same_place_barely_dips_at_the_turn(narrated: Path) -> None:
    """The opening 0.3 s of the page's bed: faded in from silence after a page set elsewhere (a raised cosine
    keeps 3/8 of the power: -4.3 dB), left whole but for its first 30 ms after a page with the same ambience."""
    reading, timing, clips = _artifacts(narrated)
    n = _samples(timing)
    fresh = bed_for(reading, timing, clips, n, AudioConfig())
    joined = bed_for(reading, timing, clips, n, AudioConfig(), joins=(True, False))
    head = slice(0, round(0.3 * RATE_HZ))
    assert _rms_db(joined[head]) - _rms_db(fresh[head]) > 3.5
    assert np.array_equal(fresh[round(0.3 * RATE_HZ) :], joined[round(0.3 * RATE_HZ) :])


def test_a_loop_of_nothing_is_silence_and_a_tiny_one_starts_at_its_offset() -> None:
    assert np.array_equal(looped(np.zeros(0, np.float32), 5, RATE_HZ), np.zeros(5, np.float32))
    assert len(looped(np.ones(100, np.float32), 0, RATE_HZ)) == 0
    tiny = np.array([0.1, 0.2], dtype=np.float32)  # too short to crossfade: repeated as it is, from the offset
    assert np.allclose(looped(tiny, 5, RATE_HZ, offset=1), [0.2, 0.1, 0.2, 0.1, 0.2])


def test_a_short_recording_loops_without_a_seam() -> None:
    """3 s of soft air looped to 20 s: its level holds (each 250 ms within 1.5 dB of the whole) and no sample jumps
    further than the recording itself ever does."""
    sound = synthesise_ambience("neutral", 3 * RATE_HZ, RATE_HZ, np.random.default_rng(4))
    out = looped(sound, 20 * RATE_HZ, RATE_HZ, offset=12_345)
    quarters = out.reshape(80, -1)
    levels = 10 * np.log10(np.mean(np.square(quarters.astype(np.float64)), axis=1))
    assert np.abs(levels - _rms_db(out)).max() < 1.5
    assert np.abs(np.diff(out)).max() <= 1.05 * np.abs(np.diff(sound)).max()
