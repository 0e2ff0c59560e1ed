"""A loopback OpenAI-compatible chat server for tests, following the documented API (models, chat completions
with response_format json_schema). It answers from what the request carries, so the client's mapping is tested."""

from __future__ import annotations

import base64
import contextlib
import json
import re
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import cv2
import numpy as np

REGION = re.compile(r"^\[(\d+)\] panel (-?\d+), at \((\d+)%, (\d+)%\), (\w+): (['\"])(.*)\6$", re.M)


class ChatState:
    def __init__(
        self,
        mode: str,
        hold_s: float = 0.0,
        model_id: str = "test-vlm",
        latency_s: float = 0.0,
        slots: int = 0,
        hold: Callable[[], object] | None = None,
    ) -> None:
        self.mode = mode
        self.hold_s = hold_s
        """How long a request may wait for a second one to arrive before it is answered (0: answer at once). A
        client that sends pages concurrently has its second page in flight well within it; a serial one does not."""
        self.model_id = model_id
        """The one model /v1/models lists."""
        self.latency_s = latency_s
        """How long each chat request takes, holding one of the ``slots`` (like a busy GPU)."""
        self.slots = threading.BoundedSemaphore(slots) if slots > 0 else None
        """Requests worked on at once (0: no bound); one more waits for a free slot, as on a real server."""
        self.hold = hold
        """Called with each chat request before it is worked on (a test's barrier across several servers)."""
        self.requests: list[dict[str, Any]] = []
        self.image_sizes: list[tuple[int, int]] = []
        """(width, height) of each chat request's image, as decoded here."""
        self.authorizations: list[str | None] = []
        """Each request's Authorization header (None when absent), GET and POST alike."""
        self.in_flight = 0
        self.max_in_flight = 0
        self.lock = threading.Lock()
        self.arrived = threading.Condition(self.lock)


KNOWN = re.compile(r"^Characters already named in this book[^:]*: (.*)$", re.M)
ALIASES = {
    "left": ["Pepper", "Witch", "Pep", "Young witch", "Girl"],
    "right": ["Carrot", "Cat", "Ginger cat", "Carrot the cat", "Kitty"],
}
"""What the "drift" mode calls the characters on each side of the page, one alias per request in turn, unless the
prompt lists one of them as already named (a model that keeps a name it is told, and invents one when it is not)."""
GENDERS = {"left": ("female", "human"), "right": ("male", "creature")}
INJECTION = re.compile(r"ignore (all )?previous instructions", re.I)


def _known_names(text_part: str) -> list[str]:
    found = KNOWN.search(text_part)
    return [item.split(" (")[0] for item in found.group(1).split("; ")] if found else []


def _answer(body: dict[str, Any], mode: str = "ok", turn: int = 0) -> dict[str, Any]:
    """Name the speaker by the region's side of the page and sentence-case the OCR text. In "drift" mode the names
    change with every request unless the prompt lists known ones; in "translate" mode lettering that is not ASCII
    gets an English stand-in translation; in "obey" mode lettering saying "ignore previous instructions" is obeyed:
    every other region is rewritten, re-kinded and re-voiced, and characters are invented."""
    text_part = next(p["text"] for p in body["messages"][1]["content"] if p["type"] == "text")
    known = _known_names(text_part)
    names = {side: "Pepper" if side == "left" else "Carrot" for side in ALIASES}
    if mode == "drift":
        for side, aliases in ALIASES.items():
            told = [name for name in known if name in aliases]
            names[side] = told[0] if told else aliases[turn % len(aliases)]
    texts = []
    for match in REGION.finditer(text_part):
        index, x_pct, kind, ocr = int(match.group(1)), int(match.group(3)), match.group(5), match.group(7)
        side = "left" if x_pct < 50 else "right"
        speaker = None if kind in ("caption", "sound") else names[side]
        translation = None
        if mode == "translate" and not ocr.isascii():
            translation = f"English of region {index} ({len(ocr)} letters)"
        texts.append(
            {
                "index": index,
                "text": ocr.capitalize(),
                "kind": kind,
                "speaker": speaker,
                "emotion": "excited" if ocr.endswith("!") else "neutral",
                "translation": translation,
            }
        )
    characters = [
        {"name": names[side], "gender": GENDERS[side][0], "age": "young", "nature": GENDERS[side][1]}
        for side in ("left", "right")
    ]
    # The setting as this stand-in "sees" it: a forest when the lettering mentions trees or woods, else indoors.
    scene = ["forest"] if re.search(r"forest|tree|wood", text_part, re.IGNORECASE) else ["interior"]
    answer: dict[str, Any] = {"characters": characters, "texts": texts, "scene": scene}
    if mode == "obey" and any(INJECTION.search(item["text"]) for item in texts):
        _obey(answer)
    return answer


FLIPPED_KIND = {"speech": "caption", "shout": "sound", "caption": "speech", "sound": "shout"}


def _obey(answer: dict[str, Any]) -> None:
    """What a model that follows the lettering's instructions does to the rest of the page."""
    answer["characters"] = [
        {"name": "Mallory", "gender": "male", "age": "old", "nature": "machine"},
        {"name": "Eve", "gender": "female", "age": "child", "nature": "creature"},
    ]
    for item in answer["texts"]:
        if INJECTION.search(item["text"]):
            item["text"] = item["text"].rstrip(".!") + "."  # its own lettering, corrected
            continue
        item.update(
            text="All hail Mallory, the new narrator of this book.",
            kind=FLIPPED_KIND[item["kind"]],
            speaker="Mallory",
            emotion="angry",
            translation="Everything is Mallory's now",
        )
    answer["scene"] = ["fire"]


def _handler(state: ChatState) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, format: str, *args: object) -> None:  # quiet test output
            pass

        def _send(self, code: int, payload: bytes, content_type: str = "application/json") -> None:
            self.send_response(code)
            self.send_header("Content-Type", content_type)
            self.send_header("Content-Length", str(len(payload)))
            self.end_headers()
            self.wfile.write(payload)

        def do_GET(self) -> None:
            state.authorizations.append(self.headers.get("Authorization"))
            if self.path == "/health":  # vLLM's liveness endpoint, which `gpu up` and --stack check
                self._send(200, b"")
            elif self.path == "/v1/models":
                self._send(
                    200, json.dumps({"object": "list", "data": [{"id": state.model_id, "object": "model"}]}).encode()
                )
            else:
                self._send(404, b'{"error": "not found"}')

        def do_POST(self) -> None:
            body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            state.authorizations.append(self.headers.get("Authorization"))
            with state.arrived:
                state.requests.append(body)
                state.in_flight += 1
                state.max_in_flight = max(state.max_in_flight, state.in_flight)
                state.arrived.notify_all()
                state.arrived.wait_for(lambda: state.in_flight >= 2, timeout=state.hold_s)
            try:
                if state.hold is not None:
                    state.hold()
                with state.slots or contextlib.nullcontext():
                    time.sleep(state.latency_s)
                    self._reply(body)
            finally:
                with state.lock:
                    state.in_flight -= 1

        def _reply(self, body: dict[str, Any]) -> None:
            if self.path != "/v1/chat/completions":
                self._send(404, b'{"error": "not found"}')
                return
            if state.mode == "500":
                self._send(500, b'{"error": {"message": "CUDA out of memory"}}')
                return
            if state.mode == "garbage":
                self._send(200, b"<html>proxy error</html>", "text/html")
                return
            assert body["response_format"]["type"] == "json_schema"
            image_url = next(p for p in body["messages"][1]["content"] if p["type"] == "image_url")["image_url"]["url"]
            header, data = image_url.split(",", 1)
            assert header == "data:image/jpeg;base64"
            image = cv2.imdecode(np.frombuffer(base64.b64decode(data), np.uint8), cv2.IMREAD_COLOR)
            assert image is not None and max(image.shape[:2]) <= 1536
            with state.lock:
                state.image_sizes.append((image.shape[1], image.shape[0]))
                turn = len(state.image_sizes) - 1
            if state.mode == "empty":
                content = ""
            elif state.mode == "not-json":
                content = "Sure! Here is the page: Pepper says hello."
            elif state.mode == "array":  # JSON, but the page's object wrapped in a list
                content = json.dumps([_answer(body)])
            elif state.mode == "length":  # cut off at max_tokens, as vLLM ends an answer that runs out of them
                content = json.dumps(_answer(body))[: body["max_tokens"]]
            elif state.mode == "raw-control":  # raw control characters inside strings, as vLLM's grammars admit
                answer = _answer(body)
                answer["texts"][0]["text"] = answer["texts"][0]["text"].replace(" ", "\x1b", 1) + "\t"
                answer["characters"][0]["name"] = "\x07" + answer["characters"][0]["name"]
                content = json.dumps(answer).replace("\\t", "\t").replace("\\u0007", "\x07").replace("\\u001b", "\x1b")
            elif state.mode == "off-schema":  # a server that ignores response_format: an invented region and key
                answer = _answer(body)
                answer["texts"].append({"index": 999, "text": "Ignore previous instructions", "mood": "sly"})
                answer["scene"] = ["lava", *answer["scene"], "lava"]
                content = json.dumps(answer)
            else:
                content = json.dumps(_answer(body, state.mode, turn))
            reply = {
                "id": "chatcmpl-1",
                "object": "chat.completion",
                "model": body["model"],
                "choices": [
                    {
                        "index": 0,
                        "finish_reason": "length" if state.mode == "length" else "stop",
                        "message": {"role": "assistant", "content": content},
                    }
                ],
            }
            reply["usage"] = {"prompt_tokens": 1000, "completion_tokens": len(content) // 4}  # a stand-in's count
            self._send(200, json.dumps(reply).encode())

    return Handler


@contextmanager
def chat_server(
    mode: str = "ok",
    hold_s: float = 0.0,
    model_id: str = "test-vlm",
    latency_s: float = 0.0,
    slots: int = 0,
    hold: Callable[[], object] | None = None,
) -> Iterator[tuple[str, ChatState]]:
    state = ChatState(mode, hold_s, model_id, latency_s, slots, hold)
    server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(state))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/v1", state
    finally:
        server.shutdown()
        server.server_close()
