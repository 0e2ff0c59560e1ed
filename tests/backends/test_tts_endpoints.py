"""Several TTS servers of one engine (``--tts-server A,B,...``): lines spread by load, each server within its own
concurrency, a server that refuses connections passed over. Real: the engines, the voice bank, the synthesis
stage and HTTP on loopback. Stand-ins: the loopback Fish/OpenAI servers of tests/backends/tts_servers.py."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import ExitStack, contextmanager
from pathlib import Path

import pytest

from comic_narrator.artifacts import Cast, CastMember, Script, ScriptLine
from comic_narrator.backends.fish_speech import FishSpeechEngine, ReferenceAudio
from comic_narrator.backends.openai_speech import OpenAISpeechEngine
from comic_narrator.backends.protocols import Delivery
from comic_narrator.cli.voices import main as voices_main
from comic_narrator.config import VoiceConfig
from comic_narrator.errors import ServerError
from comic_narrator.progress import SILENT
from comic_narrator.voice.synthesis import synthesize_script
from comic_narrator.voice.voicebank import open_voice_bank
from tests.backends.tts_servers import ServerState, closed_port_url, tone_wav, tts_server


@contextmanager
def servers(*states: ServerState) -> Iterator[list[str]]:
    with ExitStack() as stack:
        yield [stack.enter_context(tts_server(state)) for state in states]


def _script(lines: int) -> tuple[Script, Cast]:
    script = Script(
        lang="en",
        lines=[
            ScriptLine(id=f"l{i}", page=0, panel=0, speaker="narrator", kind="speech", text=f"Line number {i}.")
            for i in range(lines)
        ],
    )
    return script, Cast(members=[CastMember(character="narrator", voice="fish:hero")])


def _wait_until(condition: Callable[[], bool], what: str) -> None:
    """Wait (not a timing assertion: a generous deadline so a broken run fails instead of hanging)."""
    deadline = time.monotonic() + 60
    while not condition():
        assert time.monotonic() < deadline, f"gave up waiting for {what}"
        time.sleep(0.01)


def test_concurrent_lines_go_to_the_least_busy_server() -> None:
    """Six lines at once over three servers with four slots each: the fewest-in-flight rule gives two to each
    (filling the first server's slots before moving on would give 4, 2, 0). Each server holds its requests until
    all six have arrived, so all six are in flight together."""
    barrier = threading.Barrier(6, timeout=60)
    states = [ServerState(hold=barrier.wait) for _ in range(3)]
    with servers(*states) as urls:
        engine = FishSpeechEngine(",".join(urls), concurrency=4)
        assert engine.concurrency == 12
        with ThreadPoolExecutor(max_workers=6) as pool:
            speeches = list(pool.map(lambda i: engine.synthesize(f"Line {i}.", "fish:hero", Delivery()), range(6)))
    assert [state.spoken for state in states] == [2, 2, 2]
    assert all(speech.duration_s > 0.3 for speech in speeches)


def test_a_busy_server_gets_no_more_than_its_slots_while_the_others_take_the_rest() -> None:
    """The first server holds its lines until released; the other two answer at once. The first gets at most
    its two slots' worth; the other lines, eight or more, are spread over the two free servers."""
    gate = threading.Event()
    busy, free_a, free_b = ServerState(hold=lambda: gate.wait(60)), ServerState(), ServerState()
    with servers(busy, free_a, free_b) as urls:
        engine = OpenAISpeechEngine(",".join(urls), concurrency=2)
        with ThreadPoolExecutor(max_workers=4) as pool:
            futures = [pool.submit(engine.synthesize, f"Line {i}.", "openai:alloy", Delivery()) for i in range(10)]
            _wait_until(lambda: sum(s.spoken for s in (busy, free_a, free_b)) == 10, "every line to be sent")
            assert 1 <= busy.spoken <= 2 and busy.in_flight == busy.spoken
            gate.set()
            assert all(future.result().duration_s > 0.3 for future in futures)
    assert free_a.spoken + free_b.spoken >= 8 and min(free_a.spoken, free_b.spoken) >= 2
    assert max(s.max_in_flight for s in (busy, free_a, free_b)) <= 2


def test_the_script_is_voiced_across_servers_each_within_its_concurrency(tmp_path: Path) -> None:
    states = [ServerState(mode="slow"), ServerState(mode="slow")]
    script, cast = _script(12)
    with servers(*states) as urls:
        config = VoiceConfig(tts_server=",".join(urls), tts_server_concurrency=2)
        clips = synthesize_script(script, cast, config, tmp_path / "clips", SILENT)
        with open_voice_bank(VoiceConfig(tts_server=urls[0])) as alone, open_voice_bank(config) as both:
            # The voices and their clip keys are the first server's: adding a server re-voices nothing.
            assert alone.engine_version("fish:hero") == both.engine_version("fish:hero")
            assert [v.id for v in alone.voices()] == [v.id for v in both.voices()]
    assert len(clips) == 12
    assert sum(state.spoken for state in states) == 12
    assert all(state.spoken > 0 and state.max_in_flight <= 2 for state in states)


def test_a_server_that_refuses_connections_is_skipped(tmp_path: Path) -> None:
    state = ServerState()
    script, cast = _script(4)
    with tts_server(state) as url:
        dead = closed_port_url()
        config = VoiceConfig(tts_server=f"{dead},{url}")
        with open_voice_bank(config) as bank:
            assert "fish:hero" in {v.id for v in bank.voices()}
        clips = synthesize_script(script, cast, config, tmp_path / "clips", SILENT)
    assert len(clips) == 4 and state.spoken == 4


def test_when_no_server_answers_the_error_names_each() -> None:
    first, second = closed_port_url(), closed_port_url()
    with pytest.raises(ServerError, match="not answering") as caught:
        FishSpeechEngine(f"{first},{second}").voices()
    assert first in str(caught.value) and second in str(caught.value) and "Fish Speech" in str(caught.value)


def test_a_voice_registered_through_the_cli_reaches_every_server(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    reference = tmp_path / "ref.wav"
    reference.write_bytes(tone_wav("a sample line", 190.0))
    states = [ServerState(), ServerState()]
    with servers(*states) as urls:
        argv = ["--tts-server", ",".join(urls), "--register", "villain", "--reference", str(reference)]
        assert voices_main([*argv, "--transcript", "a sample line"]) == 0
        assert "fish:villain" in capsys.readouterr().out
        assert [state.references.get("villain") for state in states] == ["a sample line"] * 2
        engine = FishSpeechEngine(",".join(urls))
        engine.delete_reference("villain")
        assert all("villain" not in state.references for state in states)
        engine.add_reference("villain", ReferenceAudio(reference.read_bytes(), "again"))
        assert [state.references.get("villain") for state in states] == ["again"] * 2


def test_one_server_behaves_as_before() -> None:
    state = ServerState(mode="slow")
    with tts_server(state) as url:
        engine = FishSpeechEngine(url + "/", concurrency=3)
        assert engine.concurrency == 3 and engine.version.startswith(f"fish-speech@{url};")
        with ThreadPoolExecutor(max_workers=6) as pool:
            list(pool.map(lambda i: engine.synthesize(f"Line {i}.", "fish:hero", Delivery()), range(6)))
    assert state.max_in_flight == 3 and state.spoken == 6
