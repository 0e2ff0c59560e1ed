"""Fish Speech and OpenAI-compatible engines against real loopback HTTP servers, failure paths included."""

from __future__ import annotations

import argparse
import io
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest
import soundfile as sf

from comic_narrator.artifacts import Cast, CastMember, Script, ScriptLine
from comic_narrator.backends.fish_speech import FishSpeechEngine, ReferenceAudio
from comic_narrator.backends.openai_speech import OpenAISpeechEngine
from comic_narrator.backends.protocols import Delivery
from comic_narrator.config import VoiceConfig
from comic_narrator.dsp.voice_stats import voice_stats
from comic_narrator.errors import EngineError, ServerError
from comic_narrator.progress import SILENT
from comic_narrator.voice.synthesis import synthesize_script
from comic_narrator.voice.voicebank import open_voice_bank
from tests.backends.tts_servers import ServerState, closed_port_url, tone_wav, tts_server


def test_fish_lists_references_and_speaks() -> None:
    state = ServerState()
    with tts_server(state) as url:
        engine = FishSpeechEngine(url)
        assert [v.id for v in engine.voices()] == ["fish:hero"]
        speech = engine.synthesize("Hello there, friend.", "fish:hero", Delivery(temperature=0.6, top_p=0.7))
    assert speech.sample_rate_hz == 16_000 and speech.duration_s > 0.5
    request = state.requests[-1]
    assert request["path"] == "/v1/tts" and request["reference_id"] == "hero"
    assert request["format"] == "wav" and request["temperature"] == 0.6 and request["top_p"] == 0.7
    assert isinstance(request["seed"], int)


def test_fish_reference_management_and_inline_audio() -> None:
    state = ServerState()
    reference = ReferenceAudio(tone_wav("a sample", 200.0), "a sample")
    with tts_server(state) as url:
        engine = FishSpeechEngine(
            url,
            voice_specs=("hero:en:male:adult", "villain:en:male:old", "guest"),
            inline_references={"guest": reference},
        )
        engine.add_reference("villain", reference)
        assert engine.list_references() == ["hero", "villain"]
        by_id = {v.id: v for v in engine.voices()}
        assert by_id["fish:villain"].age == "old" and by_id["fish:hero"].narrator
        hero = engine.synthesize("Same words.", "fish:hero", Delivery())
        villain = engine.synthesize("Same words.", "fish:villain", Delivery())
        engine.synthesize("Inline voice.", "fish:guest", Delivery())
        assert state.requests[-1]["references"][0]["text"] == "a sample"
        engine.delete_reference("villain")
        assert engine.list_references() == ["hero"]
        with pytest.raises(ServerError, match="404"):
            engine.delete_reference("nobody")
    pitch = voice_stats(hero.samples, 16_000).pitch_distance_semitones(voice_stats(villain.samples, 16_000))
    assert pitch > 0.5


def test_delivery_pitch_and_speed_applied_after_fish() -> None:
    with tts_server(ServerState()) as url:
        engine = FishSpeechEngine(url)
        base = engine.synthesize("A steady line of words.", "fish:hero", Delivery())
        moved = engine.synthesize("A steady line of words.", "fish:hero", Delivery(speed=1.25, pitch_semitones=4))
    ratio = voice_stats(moved.samples, 16_000).f0_median_hz / voice_stats(base.samples, 16_000).f0_median_hz
    assert 1.18 < ratio < 1.36  # four semitones = x1.26
    assert abs(moved.duration_s - base.duration_s / 1.25) < 0.08 * base.duration_s


@pytest.mark.parametrize(
    ("mode", "message"),
    [
        ("500", "HTTP 500: CUDA out of memory"),
        ("garbage", "does not decode"),
        ("html", "text/html instead of audio"),
        ("silence", "answered silence"),
    ],
)
def test_fish_failures_are_one_clear_error(mode: str, message: str) -> None:
    with tts_server(ServerState(mode=mode)) as url:
        engine = FishSpeechEngine(url)
        with pytest.raises(ServerError, match=message):
            engine.synthesize("Hello.", "fish:hero", Delivery())


def test_server_down_says_what_to_start() -> None:
    url = closed_port_url()
    with pytest.raises(ServerError, match=r"not answering.*start Fish Speech's API server"):
        FishSpeechEngine(url).voices()
    with pytest.raises(ServerError, match="start an OpenAI-compatible speech server"):
        OpenAISpeechEngine(url).synthesize("Hi.", "openai:alloy", Delivery())
    with pytest.raises(ServerError, match="not answering"), open_voice_bank(VoiceConfig(tts_server=url)) as bank:
        bank.voices()


def test_unknown_reference_is_an_error() -> None:
    with tts_server(ServerState()) as url:
        engine = FishSpeechEngine(url, voice_specs=("ghost",))
        with pytest.raises(ServerError, match="Reference ghost not found"):
            engine.synthesize("Boo.", "fish:ghost", Delivery())
        with pytest.raises(EngineError, match="no voice"):
            engine.synthesize("Boo.", "fish:nobody", Delivery())


def test_openai_speech() -> None:
    state = ServerState()
    with tts_server(state) as url:
        engine = OpenAISpeechEngine(url, model="kokoro", voice_specs=("af_sky:en:female:young", "am_adam:en:male"))
        assert [v.id for v in engine.voices()] == ["openai:af_sky", "openai:am_adam"]
        speech = engine.synthesize("Good evening.", "openai:am_adam", Delivery(speed=1.2))
    request = state.requests[-1]
    assert request == {
        "path": "/v1/audio/speech",
        "model": "kokoro",
        "input": "Good evening.",
        "voice": "am_adam",
        "response_format": "wav",
        "speed": 1.2,
    }
    assert speech.duration_s > 0.3
    with tts_server(ServerState(mode="500")) as url, pytest.raises(ServerError, match="HTTP 500"):
        OpenAISpeechEngine(url).synthesize("Hi.", "openai:alloy", Delivery())


def test_requests_are_bounded() -> None:
    state = ServerState(mode="slow")
    with tts_server(state) as url:
        engine = FishSpeechEngine(url, concurrency=2)
        with ThreadPoolExecutor(max_workers=6) as pool:
            list(pool.map(lambda i: engine.synthesize(f"Line {i}.", "fish:hero", Delivery()), range(6)))
    assert state.max_in_flight == 2


def test_script_through_a_server_is_cached(tmp_path: Path) -> None:
    state = ServerState()
    script = Script(
        lang="en",
        lines=[
            ScriptLine(id=f"l{i}", page=0, panel=0, speaker="narrator", kind="speech", text=f"Line number {i}.")
            for i in range(4)
        ],
    )
    cast = Cast(members=[CastMember(character="narrator", voice="fish:hero")])
    with tts_server(state) as url:
        config = VoiceConfig(tts_server=url, tts_server_concurrency=3)
        with open_voice_bank(config) as bank:
            assert bank.default_narrator("en") == "fish:hero"
            assert {"fish:hero", "en-joe"} <= {v.id for v in bank.voices()}
        clips = synthesize_script(script, cast, config, tmp_path / "clips", SILENT)
        posted = len([r for r in state.requests if r["path"] == "/v1/tts"])
        again = synthesize_script(script, cast, config, tmp_path / "clips", SILENT)
    assert posted == 4 and len([r for r in state.requests if r["path"] == "/v1/tts"]) == 4
    assert again == clips
    samples, rate = sf.read(io.BytesIO((tmp_path / clips[0].audio_file).read_bytes()), dtype="float32")
    assert rate == 16_000 and float(np.abs(samples).max()) > 0.05


def test_a_failing_server_fails_the_stage_loudly(tmp_path: Path) -> None:
    script = Script(
        lang="en",
        lines=[
            ScriptLine(id=f"l{i}", page=0, panel=0, speaker="narrator", kind="speech", text=f"Line {i}.")
            for i in range(3)
        ],
    )
    cast = Cast(members=[CastMember(character="narrator", voice="fish:hero")])
    with tts_server(ServerState(mode="500")) as url, pytest.raises(ServerError, match="HTTP 500"):
        synthesize_script(script, cast, VoiceConfig(tts_server=url), tmp_path / "clips", SILENT)
    assert not list((tmp_path / "clips").glob("*"))


def test_reference_recordings_from_the_config_are_sent_inline(tmp_path: Path) -> None:
    wav = tmp_path / "captain.wav"
    wav.write_bytes(tone_wav("aye", 150.0))
    (tmp_path / "captain.txt").write_text("Aye, all hands on deck.\n", encoding="utf-8")
    state = ServerState()
    with tts_server(state) as url:
        config = VoiceConfig(tts_server=url, tts_server_references=(("captain:en:male:old", wav),))
        with open_voice_bank(config) as bank:
            info = bank.voice("fish:captain")
            assert (info.gender, info.age) == ("male", "old")
            assert "fish:hero" in {v.id for v in bank.voices()}  # the server's own voices stay
            before = bank.engine_version("fish:captain")
            bank.synthesize("Steady as she goes.", "fish:captain", Delivery())
        request = state.requests[-1]
        assert request["reference_id"] is None
        assert request["references"][0]["text"] == "Aye, all hands on deck."
        assert request["references"][0]["audio"]
        wav.write_bytes(tone_wav("aye", 180.0))  # a new recording re-voices the lines cast to it
        with open_voice_bank(config) as bank:
            assert bank.engine_version("fish:captain") != before


def test_the_openai_api_gives_the_bank_its_server_voices_beside_the_bundled_ones() -> None:
    config = VoiceConfig(tts_server=None, tts_server_api="openai", tts_server_voices=("am_adam:en:male",))
    with tts_server(ServerState()) as url, open_voice_bank(replace(config, tts_server=url)) as bank:
        ids = [v.id for v in bank.voices()]
        assert ids[0] == "openai:am_adam" and "en-joe" in ids
        assert bank.synthesize("Good evening.", "openai:am_adam", Delivery()).duration_s > 0.3
        # Lines go to the server as many at a time as it takes; a voice nobody offers is named with those that are.
        assert bank.parallelism() == config.tts_in_flight == 8  # the OpenAI API's own bound
        with pytest.raises(EngineError, match=r"unknown voice 'nobody'; available voices: .*en-joe.*openai:am_adam"):
            bank.synthesize("Hi.", "nobody", Delivery())
    with open_voice_bank(VoiceConfig()) as bundled:
        assert bundled.parallelism() == 0  # no server: one line per core, the caller's choice


def test_bad_reference_recordings_name_the_file(tmp_path: Path) -> None:
    from comic_narrator.cli.options import reference_arg
    from comic_narrator.errors import InputError
    from comic_narrator.voice.voicebank import load_references

    wav = tmp_path / "v.wav"
    with pytest.raises(InputError, match=r"v\.wav"):
        load_references((("v", wav),))
    wav.write_bytes(b"not audio at all")
    with pytest.raises(InputError, match="not a WAV"):
        load_references((("v", wav),))
    riff = tone_wav("x", 200.0)
    for other in (riff[:8] + b"AVI " + riff[12:], b"RIFX" + riff[4:]):  # a RIFF of video; a big-endian RIFX
        wav.write_bytes(other)
        with pytest.raises(InputError, match="not a WAV"):
            load_references((("v", wav),))
    wav.write_bytes(tone_wav("x", 200.0))
    with pytest.raises(InputError, match=r"v\.txt"):
        load_references((("v", wav),))
    (tmp_path / "v.txt").write_text(" \n", encoding="utf-8")
    with pytest.raises(InputError, match=r"v\.txt: the reference transcript is empty"):
        load_references((("v", wav),))
    (tmp_path / "v.txt").unlink()
    with pytest.raises(argparse.ArgumentTypeError, match=r"NAME=FILE\.wav"):
        reference_arg("no-equals-sign.wav")
    assert reference_arg("hero:en:male = a b.wav") == ("hero:en:male", Path("a b.wav"))
    (tmp_path / "v.txt").write_text("x", encoding="utf-8")
    with pytest.raises(EngineError, match="Fish Speech"):
        open_voice_bank(
            VoiceConfig(tts_server=closed_port_url(), tts_server_api="openai", tts_server_references=(("v", wav),))
        ).voices()


def test_a_fish_server_gets_four_requests_at_once_and_a_set_bound_wins() -> None:
    """A Fish Speech server queues what it cannot voice at once, and a queued request's wait counts against the
    timeout: it keeps the bound of 4 that the OpenAI API's 8 replaced; tts_server_concurrency sets either."""
    with tts_server(ServerState()) as url:
        with open_voice_bank(VoiceConfig(tts_server=url)) as fish:
            assert fish.parallelism() == 4
        with open_voice_bank(VoiceConfig(tts_server=url, tts_server_api="openai", tts_server_concurrency=2)) as bank:
            assert bank.parallelism() == 2
