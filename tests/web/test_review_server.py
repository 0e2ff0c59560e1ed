"""The review server's own rules (web/server.py), rule by rule over loopback HTTP: the token (header or query),
each route and its type, HEAD, the headers every answer carries, the body's length, how a refused and a failed
request are answered, and the work folder's files. The session behind it records what reaches it (this is the
server's logic, not the review); test_review.py runs the same server over a real narrated book."""

from __future__ import annotations

import http.client
import json
import socket
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from comic_narrator.errors import InputError
from comic_narrator.web.edits import MAX_BODY_BYTES
from comic_narrator.web.server import PAGE, ReviewServer

BOOK = {"pages": [{"image": "pages/p1.png"}]}


@dataclass
class _Session:
    """Answers as the review session does, and keeps each call it gets."""

    work_dir: Path
    calls: list[tuple[str, bytes]] = field(default_factory=list)

    def book_json(self) -> str:
        return json.dumps(BOOK)

    def clip(self, raw: bytes) -> str:
        self.calls.append(("clip", raw))
        if raw == b"no-such-voice":
            raise InputError("unknown voice 'no-such-voice'")
        return "clips/line.wav"

    def save(self, raw: bytes) -> str:
        self.calls.append(("save", raw))
        return f"saved {len(raw)} bytes"

    def render(self) -> str:
        self.calls.append(("render", b""))
        raise RuntimeError("the encoder went away")


@dataclass(frozen=True)
class _Answer:
    status: int
    body: bytes
    headers: dict[str, str]


@pytest.fixture
def served(tmp_path: Path) -> Iterator[tuple[ReviewServer, _Session]]:
    work = tmp_path / "book.mp4.work"
    (work / "pages").mkdir(parents=True)
    (work / "pages" / "p1.png").write_bytes(b"\x89PNG\r\n\x1a\nnot really")
    (work / "notes.zz-unknown").write_bytes(b"\x00\x01")
    (tmp_path / "secret.txt").write_text("not yours", encoding="utf-8")
    session = _Session(work)
    server = ReviewServer(session)
    server.serve_in_thread()
    try:
        yield server, session
    finally:
        server.shutdown()
        server.server_close()


def _ask(
    server: ReviewServer,
    method: str,
    path: str,
    *,
    token: str | None = None,
    body: bytes | None = None,
    headers: dict[str, str] | None = None,
) -> _Answer:
    """One request, its path sent as given; ``token`` goes in the header the page sends."""
    host, port = server.server_address[:2]
    connection = http.client.HTTPConnection(str(host), port, timeout=30)
    sent = dict(headers or {})
    if token is not None:
        sent["X-Review-Token"] = token
    connection.request(method, path, body=body, headers=sent)
    answer = connection.getresponse()
    data = answer.read()
    connection.close()
    return _Answer(answer.status, data, {k.lower(): v for k, v in answer.getheaders()})


def _post_without_length(server: ReviewServer, path: str) -> int:
    """The status of a POST that sends no Content-Length at all (http.client adds one to every POST it is asked
    for); a server waiting for a body it was not promised times the client out."""
    host, port = server.server_address[:2]
    connection = http.client.HTTPConnection(str(host), port, timeout=10)
    connection.putrequest("POST", path)
    connection.putheader("X-Review-Token", server.token)
    connection.endheaders()
    status = connection.getresponse().status
    connection.close()
    return status


def test_two_sessions_each_get_a_free_loopback_port_and_their_own_token(tmp_path: Path) -> None:
    first, second = ReviewServer(_Session(tmp_path)), ReviewServer(_Session(tmp_path))
    try:
        for server in (first, second):
            host, port = server.server_address[:2]
            assert host == "127.0.0.1" and port > 1024
            assert server.url == f"http://127.0.0.1:{port}/?token={server.token}"
        assert first.server_address[1] != second.server_address[1] and first.token != second.token
        assert len(first.token) >= 32, "192 random bits"
    finally:
        first.server_close()
        second.server_close()


def test_the_token_opens_every_route_from_the_header_or_the_query(served: tuple[ReviewServer, _Session]) -> None:
    server, _session = served
    for path in ("/", "/api/book", "/static/review.js", "/files/pages/p1.png"):
        assert _ask(server, "GET", path, token=server.token).status == 200, path
        assert _ask(server, "GET", f"{path}?token={server.token}").status == 200, path
        assert _ask(server, "GET", f"{path}?token={server.token[:-1]}").status == 403, path
        assert _ask(server, "GET", path, token=server.token + "x").status == 403, path
    refused = _ask(server, "GET", "/api/book")
    assert refused.status == 403 and b"token" in refused.body and b"pages" not in refused.body


def test_each_route_answers_with_its_content_and_type(served: tuple[ReviewServer, _Session]) -> None:
    server, _session = served
    page = (PAGE / "index.html").read_bytes()
    for path in ("/", "/index.html"):
        answer = _ask(server, "GET", path, token=server.token)
        assert (answer.status, answer.body) == (200, page)
        assert answer.headers["content-type"] == "text/html; charset=utf-8"
    script = _ask(server, "GET", "/static/review.js", token=server.token)
    assert script.body == (PAGE / "review.js").read_bytes()
    assert script.headers["content-type"].startswith("text/javascript")
    book = _ask(server, "GET", "/api/book", token=server.token)
    assert json.loads(book.body) == BOOK and book.headers["content-type"] == "application/json"
    image = _ask(server, "GET", "/files/pages/p1.png", token=server.token)
    assert image.body.startswith(b"\x89PNG") and image.headers["content-type"] == "image/png"
    unknown = _ask(server, "GET", "/files/notes.zz-unknown", token=server.token)
    assert unknown.body == b"\x00\x01" and unknown.headers["content-type"] == "application/octet-stream"
    for path in ("/static/", "/static/index.html", "/static/../server.py", "/review.js", "/api/books", "/files"):
        assert _ask(server, "GET", path, token=server.token).status == 404, path


def test_no_path_leaves_the_work_folder(served: tuple[ReviewServer, _Session]) -> None:
    server, _session = served
    for path in ("../secret.txt", "%2e%2e/secret.txt", "pages/../../secret.txt", "", "pages", "pages/p1.png%00"):
        answer = _ask(server, "GET", f"/files/{path}", token=server.token)
        assert answer.status == 404 and b"not yours" not in answer.body, path


def test_head_gives_the_headers_without_the_body(served: tuple[ReviewServer, _Session]) -> None:
    server, _session = served
    got = _ask(server, "GET", "/api/book", token=server.token)
    head = _ask(server, "HEAD", "/api/book", token=server.token)
    assert head.status == 200 and head.body == b""
    assert head.headers["content-length"] == got.headers["content-length"] == str(len(got.body))


def test_every_answer_keeps_the_page_its_own(served: tuple[ReviewServer, _Session]) -> None:
    """Not cached, not sniffed, not framed by another site, and no Referer carrying the token away: on pages,
    data, refusals and errors alike."""
    server, _session = served
    answers = [
        _ask(server, "GET", "/", token=server.token),
        _ask(server, "GET", "/api/book", token=server.token),
        _ask(server, "GET", "/"),
        _ask(server, "GET", "/nowhere", token=server.token),
        _ask(server, "POST", "/api/render", token=server.token, body=b""),
    ]
    assert [a.status for a in answers] == [200, 200, 403, 404, 500]
    for answer in answers:
        assert answer.headers["cache-control"] == "no-store"
        assert answer.headers["x-content-type-options"] == "nosniff"
        assert answer.headers["x-frame-options"] == "DENY"
        assert answer.headers["referrer-policy"] == "no-referrer"


def test_a_post_body_is_read_whole_and_only_when_its_length_is_sane(served: tuple[ReviewServer, _Session]) -> None:
    server, session = served
    answer = _ask(server, "POST", "/api/save", token=server.token, body=b'{"lines": []}')
    assert (answer.status, json.loads(answer.body)) == (200, {"message": "saved 13 bytes"})
    assert _post_without_length(server, "/api/save") == 200, "no length is an empty body"
    assert session.calls == [("save", b'{"lines": []}'), ("save", b"")]
    for length in ("-1", "twelve", str(MAX_BODY_BYTES + 1)):
        answer = _ask(server, "POST", "/api/save", token=server.token, headers={"Content-Length": length})
        assert answer.status == 413 and str(MAX_BODY_BYTES) in json.loads(answer.body)["error"], length
    assert len(session.calls) == 2, "a body of no sane length never reaches the session"
    largest = b"x" * MAX_BODY_BYTES
    assert _ask(server, "POST", "/api/save", token=server.token, body=largest).status == 200
    assert session.calls[-1] == ("save", largest)


def test_each_post_route_reaches_its_session_call_and_answers_its_way(served: tuple[ReviewServer, _Session]) -> None:
    server, session = served
    answer = _ask(server, "POST", "/api/clip", token=server.token, body=b"line")
    assert (answer.status, json.loads(answer.body)) == (200, {"url": "/files/clips/line.wav"})
    refused = _ask(server, "POST", "/api/clip", token=server.token, body=b"no-such-voice")
    assert (refused.status, json.loads(refused.body)) == (400, {"error": "unknown voice 'no-such-voice'"})
    failed = _ask(server, "POST", "/api/render", token=server.token)
    assert failed.status == 500
    assert json.loads(failed.body) == {"error": "internal error: RuntimeError: the encoder went away"}
    assert _ask(server, "POST", "/api/delete", token=server.token, body=b"x").status == 404
    assert _ask(server, "POST", "/api/save", body=b"x").status == 403
    assert session.calls == [("clip", b"line"), ("clip", b"no-such-voice"), ("render", b"")]


def test_a_refused_request_ends_with_its_refusal(
    served: tuple[ReviewServer, _Session], capsys: pytest.CaptureFixture[str]
) -> None:
    """One answer per request, and nothing after it: no second answer behind the 403, no traceback in the log."""
    server, session = served
    host, port = server.server_address[:2]
    for request in (b"GET /api/book HTTP/1.0\r\n\r\n", b"POST /api/save HTTP/1.0\r\nContent-Length: 2\r\n\r\n{}"):
        with socket.create_connection((str(host), port), timeout=10) as connection:
            connection.sendall(request)
            said = b""
            while chunk := connection.recv(65536):
                said += chunk
        assert said.startswith(b"HTTP/1.0 403") and said.count(b"HTTP/1.") == 1, said
    assert session.calls == []
    assert "Traceback" not in capsys.readouterr().err
