"""The LLM reader against a real vLLM serving a vision model: pages per minute at several concurrencies, tokens
generated per page, the image tokens the engine counted, and whether every answer kept to its schema.

    # here: read the pages locally once (OCR, panels), keep each page's image and local reading
    python benchmarks/gpu_vlm_reader.py prepare OUT_DIR INPUT [INPUT...]
    # where vLLM runs (benchmarks/gpu_vlm_device.sh starts it): ask it about every page, 1, 4 and 16 at a time
    python benchmarks/gpu_vlm_reader.py run OUT_DIR --url http://127.0.0.1:8000/v1 --concurrency 1,4,16

Each concurrency level asks about every page once (or the first N of a fixed shuffle: --levels-pages); the
pages of a level differ from those of the others by one pixel, so neither vLLM's prefix cache nor its image
cache answers a page from an earlier level (the system prompt is still shared, as it is in a real run).
Requests are the reader's own (page_request: the JPEG image content part, the numbered OCR regions, the page's
bounded schema, max_tokens at that schema's bound) sent through the reader's client; answers are checked
against their schema here as well as by the engine. Prints a table and writes OUT_DIR/results.json.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import cv2
import numpy as np
import numpy.typing as npt

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "src"))

from comic_narrator.artifacts import PageReading  # noqa: E402
from comic_narrator.backends.openai_chat import OpenAIChatClient  # noqa: E402
from comic_narrator.config import LlmConfig  # noqa: E402
from comic_narrator.errors import ServerError  # noqa: E402
from comic_narrator.reading.llm_reader import answer_violations, merge_answer, page_request  # noqa: E402

MAX_SIDE_PX = LlmConfig.max_image_side_px


def prepare(out: Path, inputs: list[Path]) -> None:
    """Ingest and read each input locally; write NNN.jpg (the page at the reader's size) and NNN.json."""
    import tempfile

    from comic_narrator import pipeline
    from comic_narrator.config import IngestConfig, VisionConfig
    from comic_narrator.reading.stage import load_page_rgb, read_pages

    out.mkdir(parents=True, exist_ok=True)
    count = 0
    for source in inputs:
        with tempfile.TemporaryDirectory() as tmp:
            work = Path(tmp)
            book = pipeline.load_or_ingest(source, IngestConfig(), work)
            reading, _ = read_pages(book, VisionConfig(), work)
            for page, local in zip(book.pages, reading.pages, strict=True):
                if not [text for text in local.texts if text.kind != "furniture"]:
                    continue  # the reader sends no request for a page without story text
                rgb = load_page_rgb(work, page)
                scale = min(1.0, MAX_SIDE_PX / max(rgb.shape[:2]))
                if scale < 1.0:  # stored at the size the reader sends; the reading keeps its own coordinates
                    size = (round(rgb.shape[1] * scale), round(rgb.shape[0] * scale))
                    rgb = np.asarray(cv2.resize(rgb, size, interpolation=cv2.INTER_AREA), dtype=np.uint8)
                cv2.imwrite(str(out / f"{count:03d}.jpg"), cv2.cvtColor(rgb, cv2.COLOR_RGB2BGR))
                (out / f"{count:03d}.json").write_text(local.model_dump_json())
                print(f"{count:03d}: {source.name} page {page.index + 1}, {len(local.texts)} texts", flush=True)
                count += 1


@dataclass
class PageResult:
    page: int
    seconds: float
    prompt_tokens: int
    completion_tokens: int
    max_tokens: int
    finish_reason: str
    violations: int
    texts_answered: int
    error: str | None = None


def smart_resize_tokens(height: int, width: int, factor: int = 28, min_pixels: int = 3136) -> int:
    """Image tokens Qwen2-VL's processor gives a page (its smart_resize, then 2 x 2 merged 14 px patches)."""
    import math

    h = max(factor, round(height / factor) * factor)
    w = max(factor, round(width / factor) * factor)
    max_pixels = 28 * 28 * 16384
    if h * w > max_pixels:
        beta = math.sqrt(height * width / max_pixels)
        h, w = math.floor(height / beta / factor) * factor, math.floor(width / beta / factor) * factor
    elif h * w < min_pixels:
        beta = math.sqrt(min_pixels / (height * width))
        h, w = math.ceil(height * beta / factor) * factor, math.ceil(width * beta / factor) * factor
    return (h // factor) * (w // factor)


def load_pages(folder: Path) -> list[tuple[npt.NDArray[np.uint8], PageReading]]:
    pages = []
    for image_file in sorted(folder.glob("[0-9][0-9][0-9].jpg")):
        bgr = cv2.imread(str(image_file), cv2.IMREAD_COLOR)
        rgb = np.asarray(cv2.cvtColor(bgr, cv2.COLOR_BGR2RGB), dtype=np.uint8)
        reading = PageReading.model_validate_json(image_file.with_suffix(".json").read_text())
        pages.append((rgb, reading))
    return pages


def ask(client: OpenAIChatClient, number: int, rgb: npt.NDArray[np.uint8], local: PageReading) -> PageResult:
    request = page_request(rgb, local, MAX_SIDE_PX, client.config.max_tokens)
    start = time.monotonic()
    try:
        answer = client.chat_json_answer(request.messages, request.schema, "page_reading", request.max_tokens)
    except ServerError as exc:
        return PageResult(number, time.monotonic() - start, 0, 0, request.max_tokens, "error", 0, 0, str(exc))
    seconds = time.monotonic() - start
    merged = merge_answer(local, answer.content, client.resolve_model())
    changed = sum(1 for a, b in zip(local.texts, merged.texts, strict=True) if a != b)
    return PageResult(
        number,
        seconds,
        answer.prompt_tokens,
        answer.completion_tokens,
        request.max_tokens,
        answer.finish_reason,
        len(answer_violations(answer.content, request.schema)),
        changed,
    )


def image_tokens_probe(client: OpenAIChatClient, rgb: npt.NDArray[np.uint8], local: PageReading) -> dict[str, int]:
    """The engine's own count of a page's image tokens: the same request with and without the image part."""
    request = page_request(rgb, local, MAX_SIDE_PX, 1)
    text_only = [request.messages[0], {**request.messages[1], "content": request.messages[1]["content"][1:]}]
    schema = {"type": "object", "properties": {}, "additionalProperties": False, "required": []}
    with_image = client.chat_json_answer(request.messages, schema, "probe", 8).prompt_tokens
    without = client.chat_json_answer(text_only, schema, "probe", 8).prompt_tokens
    sent = cv2.imdecode(
        np.frombuffer(
            __import__("base64").b64decode(request.messages[1]["content"][0]["image_url"]["url"].split(",", 1)[1]),
            np.uint8,
        ),
        cv2.IMREAD_COLOR,
    )
    expected = smart_resize_tokens(*sent.shape[:2])
    # <|vision_start|> and <|vision_end|> frame the image's tokens in the chat template.
    return {
        "with_image": with_image,
        "without": without,
        "image_tokens": with_image - without - 2,
        "expected": expected,
    }


def run(folder: Path, url: str, levels: list[int], counts: list[int], max_tokens: int, timeout_s: float) -> None:
    pages = load_pages(folder)
    # A fixed shuffle, so that a level given fewer pages still gets a mix of the books.
    pages = [pages[i] for i in sorted(range(len(pages)), key=lambda i: (i * 7) % len(pages))]
    results: dict[str, Any] = {"pages": len(pages), "levels": {}}
    probe_client = OpenAIChatClient(LlmConfig(base_url=url, max_tokens=max_tokens, timeout_s=timeout_s))
    results["model"] = probe_client.resolve_model()
    results["image_tokens"] = []
    for rgb, local in pages[:3]:
        try:
            probe = image_tokens_probe(probe_client, rgb, local)
        except ServerError as exc:
            print(f"image tokens: the probe failed: {exc}", flush=True)
            continue
        results["image_tokens"].append(probe)
        print(f"image tokens: engine {probe['image_tokens']}, processor arithmetic {probe['expected']}", flush=True)
    for run_no, (level, count) in enumerate(zip(levels, counts, strict=True), start=1):
        client = OpenAIChatClient(
            LlmConfig(base_url=url, max_tokens=max_tokens, timeout_s=timeout_s, concurrency=level)
        )
        client.resolve_model()
        batch = []
        for rgb, local in pages[: count or len(pages)]:
            marked = rgb.copy()
            marked[0, 0, 0] = (int(marked[0, 0, 0]) + 37 * run_no) % 256  # a distinct page for the caches
            batch.append((marked, local))
        start = time.monotonic()
        with ThreadPoolExecutor(max_workers=level) as pool:
            done = list(pool.map(ask, [client] * len(batch), range(len(batch)), *zip(*batch, strict=True)))
        wall = time.monotonic() - start
        ok = [r for r in done if r.error is None]
        level_result = {
            "wall_s": wall,
            "pages_per_min": 60 * len(ok) / wall,
            "failed": len(done) - len(ok),
            "completion_tokens_per_page": sum(r.completion_tokens for r in ok) / max(1, len(ok)),
            "prompt_tokens_per_page": sum(r.prompt_tokens for r in ok) / max(1, len(ok)),
            "max_tokens_per_page": sum(r.max_tokens for r in done) / max(1, len(done)),
            "tokens_per_s": sum(r.completion_tokens for r in ok) / wall,
            "median_latency_s": sorted(r.seconds for r in ok)[len(ok) // 2] if ok else None,
            "schema_violations": sum(r.violations for r in ok),
            "finish_reasons": sorted({r.finish_reason for r in done}),
            "per_page": [asdict(r) for r in done],
        }
        results["levels"][str(level)] = level_result
        print(
            f"concurrency {level:2d}: {len(ok)}/{len(done)} pages in {wall:.1f} s = "
            f"{level_result['pages_per_min']:.1f} pages/min; {level_result['completion_tokens_per_page']:.0f} "
            f"tokens generated per page (cap {level_result['max_tokens_per_page']:.0f}), "
            f"{level_result['prompt_tokens_per_page']:.0f} prompt tokens; {level_result['tokens_per_s']:.0f} tok/s; "
            f"schema violations {level_result['schema_violations']}; finish {level_result['finish_reasons']}",
            flush=True,
        )
        for r in done:
            if r.error:
                print(f"  page {r.page}: {r.error}", flush=True)
    # A timeout as the reader reports it: a page that cannot be answered within 50 ms.
    hurried = OpenAIChatClient(LlmConfig(base_url=url, max_tokens=max_tokens, timeout_s=0.05))
    rgb, local = pages[0]
    try:
        page_result = ask(hurried, 0, rgb, local)
        results["timeout"] = page_result.error or "answered within 50 ms"
    except ServerError as exc:
        results["timeout"] = str(exc)
    print(f"timeout: {results['timeout']}", flush=True)
    (folder / "results.json").write_text(json.dumps(results, indent=1))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    prep = sub.add_parser("prepare")
    prep.add_argument("out", type=Path)
    prep.add_argument("inputs", type=Path, nargs="+")
    bench = sub.add_parser("run")
    bench.add_argument("folder", type=Path)
    bench.add_argument("--url", default=LlmConfig.base_url)
    bench.add_argument("--concurrency", default="1,4,16")
    bench.add_argument("--levels-pages", default="0,0,0", help="pages asked at each level (0: all)")
    bench.add_argument("--max-tokens", type=int, default=LlmConfig.max_tokens)
    bench.add_argument("--timeout", type=float, default=LlmConfig.timeout_s)
    args = parser.parse_args()
    if args.command == "prepare":
        prepare(args.out, args.inputs)
    else:
        levels = [int(level) for level in args.concurrency.split(",")]
        counts = [int(count) for count in args.levels_pages.split(",")]
        run(args.folder, args.url, levels, counts, args.max_tokens, args.timeout)


if __name__ == "__main__":
    main()
