"""How long the browser side takes on a narrated book: the read-along export, and the review server's answers
(the book, a line voiced on demand and then from the cache, a save).

    python benchmarks/web_review.py [WORK] [--repeat 3]

WORK is the work folder of a finished run (default: the bundled sample page narrated into a temporary folder with
``--voice-quality fast --draft`` first). The server is the real one on loopback, its session on the run's voice
bank at the same quality; each figure is the median of ``--repeat`` tries, wall-clock seconds.
"""

from __future__ import annotations

import argparse
import http.client
import json
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from comic_narrator.artifacts import Script
from comic_narrator.cli import main
from comic_narrator.config import VoiceConfig
from comic_narrator.voice.voicebank import open_voice_bank
from comic_narrator.web.readalong import export_read_along
from comic_narrator.web.review import ReviewSession
from comic_narrator.web.server import ReviewServer

REPO = Path(__file__).resolve().parents[1]
SAMPLE = REPO / "samples" / "peppercarrot-ep17-page2.jpg"


def median_s(action: Callable[[], object], repeat: int) -> float:
    times = []
    for _ in range(repeat):
        started = time.perf_counter()
        action()
        times.append(time.perf_counter() - started)
    return statistics.median(times)


def main_() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("work", type=Path, nargs="?")
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    scratch = Path(tempfile.mkdtemp(prefix="web-review-"))
    work = args.work
    if work is None:
        out = scratch / "sample.mp4"
        assert main([str(SAMPLE), "-o", str(out), "-q", "--voice-quality", "fast", "--draft"]) == 0
        work = out.with_name("sample.mp4.work")
    export_s = median_s(lambda: export_read_along(work, scratch / "read-along"), args.repeat)
    size = sum(p.stat().st_size for p in (scratch / "read-along").rglob("*") if p.is_file())
    print(f"read-along export: {export_s:.3f} s, {size / 1e6:.2f} MB")
    voice = VoiceConfig(quality="fast")
    with open_voice_bank(voice) as bank:
        server = ReviewServer(ReviewSession(work, bank, voice))
        server.serve_in_thread()
        host, port = server.server_address[:2]

        def ask(method: str, path: str, body: bytes | None = None) -> bytes:
            connection = http.client.HTTPConnection(str(host), port, timeout=300)
            connection.request(method, path, body=body, headers={"X-Review-Token": server.token})
            answer = connection.getresponse()
            data = answer.read()
            assert answer.status == 200, (path, answer.status, data[:200])
            return data

        print(f"GET /api/book: {median_s(lambda: ask('GET', '/api/book'), args.repeat):.3f} s")
        script = Script.model_validate_json((work / "script.json").read_bytes())
        line = script.lines[0].model_dump()
        voice_id = json.loads(ask("GET", "/api/book"))["voices"].get(line["speaker"], "en-joe")
        counter = iter(range(1_000_000))

        def fresh_clip() -> bytes:
            text = f"A line never voiced before, number {next(counter)}, in {time.time_ns()}."
            return ask("POST", "/api/clip", json.dumps({"line": {**line, "text": text}, "voice": voice_id}).encode())

        cached = json.dumps({"line": line, "voice": voice_id}).encode()
        ask("POST", "/api/clip", cached)
        print(f"POST /api/clip, a new line ({voice_id}): {median_s(fresh_clip, args.repeat):.3f} s")
        print(
            f"POST /api/clip, the cached clip: {median_s(lambda: ask('POST', '/api/clip', cached), args.repeat):.3f} s"
        )
        edit = json.dumps({"lines": [ln.model_dump() for ln in script.lines], "voices": {}}).encode()
        save_s = median_s(lambda: ask("POST", "/api/save", edit), args.repeat)
        print(f"POST /api/save (the whole script, unchanged): {save_s:.3f} s")
        server.shutdown()
        server.server_close()


if __name__ == "__main__":
    main_()
