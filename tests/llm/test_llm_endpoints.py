"""Several LLM servers (``--llm-url A,B,...``): pages spread by load, a server that refuses connections passed
over, one model across all. Real: the CLI, the reader, the client and HTTP on loopback. Stand-in: the loopback
chat server (tests/llm/chat_server.py)."""

from __future__ import annotations

import argparse
import json
import threading
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path

import pytest

from comic_narrator.backends.openai_chat import OpenAIChatClient
from comic_narrator.cli import main
from comic_narrator.cli.options import url_list_arg
from comic_narrator.config import LlmConfig
from comic_narrator.errors import ServerError
from tests.backends.tts_servers import closed_port_url
from tests.conftest import SAMPLE_PAGE
from tests.llm.chat_server import ChatState, chat_server


@contextmanager
def servers(count: int, hold: Callable[[], object]) -> Iterator[list[tuple[str, ChatState]]]:
    with ExitStack() as stack:
        yield [stack.enter_context(chat_server(hold=hold)) for _ in range(count)]


def _chats(state: ChatState) -> int:
    return len(state.requests)


def _held_in_groups(size: int) -> Callable[[], None]:
    """A server hold that lets the first request through (the book's first speaking page is read alone) and
    holds every later one until ``size`` of them have arrived."""
    barrier = threading.Barrier(size, timeout=120)
    arrived = [0]
    lock = threading.Lock()

    def hold() -> None:
        with lock:
            arrived[0] += 1
            first = arrived[0] == 1
        if not first:
            barrier.wait()

    return hold


def _book(tmp_path: Path, pages: int) -> Path:
    folder = tmp_path / "book"
    folder.mkdir()
    for n in range(pages):
        (folder / f"p{n}.jpg").write_bytes(SAMPLE_PAGE.read_bytes())
    return folder


def test_pages_read_at_once_are_spread_over_the_servers(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Four pages in flight together over two servers: two each (the fewest-in-flight rule; the first server
    alone could have taken all four, its concurrency is 4). The book's first speaking page is read alone (the
    pages after it are shown its characters: reading/known_characters.py); the servers then hold each of the next
    four pages until all four arrived."""
    book = _book(tmp_path, 5)
    with servers(2, hold=_held_in_groups(4)) as pair:
        urls = ",".join(url for url, _ in pair)
        argv = ["read", str(book), "--vision", "llm", "--llm-url", urls, "-q", "--work-dir", str(tmp_path / "w")]
        assert main(argv) == 0, capsys.readouterr().err
        assert sorted(_chats(state) for _, state in pair) == [2, 3]
        assert [state.max_in_flight for _, state in pair] == [2, 2]


def test_a_server_that_refuses_connections_is_skipped(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    book = _book(tmp_path, 3)
    dead = closed_port_url() + "/v1"
    with chat_server() as (url, state):
        argv = ["read", str(book), "--json", "--vision", "llm", "--llm-url", f"{dead},{url}", "--work-dir"]
        assert main([*argv, str(tmp_path / "w")]) == 0, capsys.readouterr().err
        pages = json.loads(capsys.readouterr().out)["pages"]
    assert [page["vision"] for page in pages] == ["llm:test-vlm"] * 3
    assert _chats(state) == 3


def test_when_no_server_answers_the_error_is_one_line_naming_each(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    first, second = closed_port_url() + "/v1", closed_port_url() + "/v1"
    argv = ["read", str(SAMPLE_PAGE), "--vision", "llm", "--llm-url", f"{first},{second}", "-q", "--work-dir"]
    assert main([*argv, str(tmp_path)]) != 0
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1
    assert "cannot reach any of the LLM servers" in err and "gpu up" in err and first in err and second in err


def test_servers_must_serve_one_model(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with chat_server() as (same_url, _same), chat_server(model_id="other-vlm") as (other_url, other):
        client = OpenAIChatClient(LlmConfig(base_url=f"{same_url},{other_url}"))
        with pytest.raises(ServerError, match="other-vlm") as caught:
            client.resolve_model()
        message = str(caught.value)
        assert message.startswith(other_url) and same_url in message and "test-vlm" in message
        argv = ["read", str(SAMPLE_PAGE), "--vision", "llm", "--llm-url", f"{same_url},{other_url}", "-q"]
        assert main([*argv, "--work-dir", str(tmp_path)]) != 0
        assert "same model" in capsys.readouterr().err
        assert _chats(other) == 0
        # Naming the model asks no server which one it serves.
        assert OpenAIChatClient(LlmConfig(base_url=f"{same_url},{other_url}", model="m")).resolve_model() == "m"


def test_one_server_behaves_as_before() -> None:
    with chat_server() as (url, state):
        client = OpenAIChatClient(LlmConfig(base_url=url + "/"))
        assert client.base_urls == (url,) and client.slots == LlmConfig.concurrency
        assert client.resolve_model() == "test-vlm"
        assert len(state.authorizations) == 1  # one GET /models
    assert LlmConfig(base_url="http://a/v1, http://b/v1").slots == 2 * LlmConfig.concurrency


def test_the_url_option_takes_a_tidy_list() -> None:
    assert url_list_arg(" http://a:1/v1/ ,http://b:2/v1,") == "http://a:1/v1,http://b:2/v1"
    for bad in ("", " , ", "a:1/v1", "http://a/v1,b/v1"):
        with pytest.raises(argparse.ArgumentTypeError, match="wants http"):
            url_list_arg(bad)


@pytest.mark.parametrize(("concurrency", "pages"), [(2, 5), (6, 7)])
def test_llm_concurrency_sets_the_pages_in_flight(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], concurrency: int, pages: int
) -> None:
    """``--llm-concurrency N`` puts N pages in flight on the server, no more (two at once only while the server
    holds pairs) and no fewer (six held until all six arrived; the default four would never make the sixth)."""
    book = _book(tmp_path, pages)
    with servers(1, hold=_held_in_groups(concurrency)) as [(url, state)]:
        argv = ["read", str(book), "--vision", "llm", "--llm-url", url, "--llm-concurrency", str(concurrency)]
        assert main([*argv, "-q", "--work-dir", str(tmp_path / "w")]) == 0, capsys.readouterr().err
        assert _chats(state) == pages
        assert state.max_in_flight == concurrency


def test_llm_concurrency_below_one_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as caught:
        main(["read", str(SAMPLE_PAGE), "--vision", "llm", "--llm-concurrency", "0"])
    assert caught.value.code == 2
    assert "--llm-concurrency: 0 is below the smallest allowed value, 1" in capsys.readouterr().err
