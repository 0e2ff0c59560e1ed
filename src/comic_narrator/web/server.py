"""The review page's HTTP server: loopback only, every request carrying the session's random token, files served
only from the work folder, and every edit handed to the session, which checks it before anything is written."""

from __future__ import annotations

import hmac
import json
import logging
import mimetypes
import secrets
import threading
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Protocol
from urllib.parse import parse_qs, unquote, urlsplit

from comic_narrator.errors import ComicNarratorError
from comic_narrator.web.edits import MAX_BODY_BYTES

log = logging.getLogger("comic_narrator")
ASSETS = Path(__file__).resolve().parents[1] / "assets"
PAGE = ASSETS / "web" / "review"
STATIC = {
    "review.js": (PAGE, "text/javascript; charset=utf-8"),
    "review.css": (PAGE, "text/css; charset=utf-8"),
    "NarratorSansJP-Bold.ttf": (ASSETS / "fonts", "font/ttf"),  # Japanese lettering on machines without a JP font
}
TOKEN_HEADER = "X-Review-Token"


class Session(Protocol):
    work_dir: Path

    def book_json(self) -> str: ...

    def clip(self, raw: bytes) -> str: ...

    def save(self, raw: bytes) -> str: ...

    def render(self) -> str: ...


class ReviewServer(ThreadingHTTPServer):
    """Serves one session on 127.0.0.1 (by default) at a free port unless one is given."""

    daemon_threads = True

    def __init__(self, session: Session, host: str = "127.0.0.1", port: int = 0) -> None:
        self.session = session
        self.token = secrets.token_urlsafe(24)
        self.root = session.work_dir.resolve()
        super().__init__((host, port), _Handler)

    @property
    def url(self) -> str:
        host, port = self.server_address[:2]
        return f"http://{host!s}:{port}/?token={self.token}"

    def serve_in_thread(self) -> threading.Thread:
        thread = threading.Thread(target=self.serve_forever, name="review-server", daemon=True)
        thread.start()
        return thread


class _Handler(BaseHTTPRequestHandler):
    server: ReviewServer
    server_version = "comic-narrator-review"

    def log_message(self, format: str, *args: object) -> None:
        log.info("review: " + format, *args)

    def _authorised(self) -> bool:
        given = self.headers.get(TOKEN_HEADER) or parse_qs(urlsplit(self.path).query).get("token", [""])[0]
        return hmac.compare_digest(given.encode("utf-8"), self.server.token.encode("utf-8"))

    def _send(self, status: HTTPStatus, body: bytes, content_type: str) -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Cache-Control", "no-store")
        self.send_header("X-Content-Type-Options", "nosniff")
        self.send_header("Referrer-Policy", "no-referrer")  # the token stays out of any Referer
        self.send_header("X-Frame-Options", "DENY")  # no other site may frame the page and click on it
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    def _json(self, status: HTTPStatus, payload: object) -> None:
        self._send(status, json.dumps(payload).encode("utf-8"), "application/json")

    def _refuse(self, status: HTTPStatus, message: str) -> None:
        self._send(status, (message + "\n").encode("utf-8"), "text/plain; charset=utf-8")

    def _gate(self) -> str | None:
        """The request's path when it may go on; otherwise the refusal is already sent."""
        if not self._authorised():
            self._refuse(
                HTTPStatus.FORBIDDEN, "forbidden: open the address `comic-narrator review` printed (with its token)"
            )
            return None
        return unquote(urlsplit(self.path).path)

    def do_GET(self) -> None:
        path = self._gate()
        if path is None:
            return
        if path in ("/", "/index.html"):
            self._send(HTTPStatus.OK, (PAGE / "index.html").read_bytes(), "text/html; charset=utf-8")
        elif path.startswith("/static/") and path.removeprefix("/static/") in STATIC:
            folder, kind = STATIC[path.removeprefix("/static/")]
            self._send(HTTPStatus.OK, (folder / path.removeprefix("/static/")).read_bytes(), kind)
        elif path == "/api/book":
            self._send(HTTPStatus.OK, self.server.session.book_json().encode("utf-8"), "application/json")
        elif path.startswith("/files/"):
            self._file(path.removeprefix("/files/"))
        else:
            self._refuse(HTTPStatus.NOT_FOUND, "not found")

    do_HEAD = do_GET

    def _file(self, relative: str) -> None:
        """A file of the work folder; anything that resolves outside it (``..``, an absolute path, a link out) is
        refused the same way as a missing file."""
        root = self.server.root
        target = (root / relative).resolve() if "\0" not in relative else root
        if not target.is_relative_to(root) or target == root or not target.is_file():
            self._refuse(HTTPStatus.NOT_FOUND, "not found")
            return
        kind = mimetypes.guess_type(target.name)[0] or "application/octet-stream"
        self._send(HTTPStatus.OK, target.read_bytes(), kind)

    def do_POST(self) -> None:
        path = self._gate()
        if path is None:
            return
        try:
            length = int(self.headers.get("Content-Length", "0"))
        except ValueError:
            length = -1
        if not 0 <= length <= MAX_BODY_BYTES:
            self._json(HTTPStatus.REQUEST_ENTITY_TOO_LARGE, {"error": f"a request body is 0..{MAX_BODY_BYTES} bytes"})
            return
        raw = self.rfile.read(length)
        session = self.server.session
        try:
            if path == "/api/clip":
                self._json(HTTPStatus.OK, {"url": "/files/" + session.clip(raw)})
            elif path == "/api/save":
                self._json(HTTPStatus.OK, {"message": session.save(raw)})
            elif path == "/api/render":
                self._json(HTTPStatus.OK, {"message": session.render()})
            else:
                self._refuse(HTTPStatus.NOT_FOUND, "not found")
        except ComicNarratorError as exc:
            log.info("review: refused %s: %s", path, exc)
            self._json(HTTPStatus.BAD_REQUEST, {"error": str(exc)})
        except Exception as exc:  # the page shows one line; the traceback goes to the log
            log.exception("review: %s failed", path)
            self._json(HTTPStatus.INTERNAL_SERVER_ERROR, {"error": f"internal error: {exc.__class__.__name__}: {exc}"})
