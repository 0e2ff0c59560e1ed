"""Command line: argv -> config objects -> pipeline calls; errors become one line plus the log path."""

from __future__ import annotations

import argparse
import logging
import sys
import tempfile
from collections.abc import Callable, Sequence
from pathlib import Path

from comic_narrator import __version__
from comic_narrator.cli.audiobook import add_audiobook_option, write_audiobook
from comic_narrator.cli.options import add_tts_reference_option, url_list_arg
from comic_narrator.cli.readalong import add_read_along_option, write_read_along
from comic_narrator.config import (
    ASPECT_SIZE_PX,
    AudioConfig,
    IngestConfig,
    LlmConfig,
    RenderConfig,
    RunConfig,
    VisionConfig,
    VoiceConfig,
)
from comic_narrator.errors import ComicNarratorError
from comic_narrator.progress import Progress

SUBCOMMANDS = ("narrate", "read", "inspect", "eval", "voices", "gpu", "review", "export")
LOG_NAME = "comic-narrator.log"

log = logging.getLogger("comic_narrator")


def _int_at_least(low: int) -> Callable[[str], int]:
    """An argparse type: a whole number no smaller than ``low`` (anything else is a one-line usage error)."""

    def parse(value: str) -> int:
        try:
            number = int(value)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{value!r} is not a whole number") from None
        if number < low:
            raise argparse.ArgumentTypeError(f"{number} is below the smallest allowed value, {low}")
        return number

    return parse


def _speed(value: str) -> float:
    """--speed: a multiplier inside the range delivery can honour (0.5-2.0)."""
    try:
        number = float(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{value!r} is not a number") from None
    if not 0.5 <= number <= 2.0:
        raise argparse.ArgumentTypeError(f"{number:g} is outside 0.5-2.0")
    return number


def _chapter_pages(value: str) -> tuple[int, ...]:
    """--chapters: increasing 1-based input page numbers."""
    from comic_narrator.timeline.chapters import parse_chapter_pages

    try:
        return parse_chapter_pages(value)
    except ComicNarratorError as exc:
        raise argparse.ArgumentTypeError(str(exc).removeprefix("--chapters: ")) from None


def _credit_lines(value: str) -> tuple[str, ...]:
    """--credits: a file's lines, or the text's."""
    from comic_narrator.video.endcard import given_credit_lines

    try:
        return given_credit_lines(value)
    except ComicNarratorError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def _add_input_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("input", type=Path, help="PDF, CBZ/ZIP, image folder, or a single image")
    parser.add_argument(
        "--layout",
        choices=["auto", "manga", "western", "webtoon"],
        default="auto",
        help="reading direction: auto (ComicInfo.xml, else language and page shape), "
        "manga (right to left), western (left to right), webtoon (top to bottom, sliced)",
    )
    parser.add_argument("--lang", choices=["auto", "en", "ja"], default="auto", help="the book's language")
    parser.add_argument("--pages", help="pages to use, 1-based and inclusive: '3-7', '1,4,9-'")
    parser.add_argument(
        "--dpi", type=_int_at_least(18), default=None, help="PDF render resolution (default: long side ~2000 px)"
    )
    parser.add_argument(
        "--max-pixels",
        type=_int_at_least(1),
        default=IngestConfig.max_image_pixels,
        help="refuse images larger than this many pixels",
    )
    parser.add_argument(
        "--vision",
        choices=["local", "llm"],
        default="local",
        help="page reader: local = OpenCV panels + bundled OCR (no GPU, no network); llm = the local reading "
        "corrected by a multimodal LLM on an OpenAI-compatible server (vLLM), which also names the speakers",
    )
    parser.add_argument(
        "--panels",
        choices=["auto", "model", "classical"],
        default=VisionConfig.panels,
        help="panel finder: auto = the bundled segmenter on page-shaped pages (on colour pages weighed against "
        "OpenCV's panels), a window at a time on painted wide strips, OpenCV on line-art strips and webtoon slices "
        "(default); model = the segmenter on every page-shaped page and wide strip; classical = OpenCV only",
    )
    parser.add_argument(
        "--llm-url",
        default=LlmConfig.base_url,
        type=url_list_arg,
        metavar="URL[,URL...]",
        help="the LLM server's /v1 base URL, or several serving the same model (each page goes to the least busy)",
    )
    parser.add_argument("--llm-model", help="model name (default: the first one the server lists)")
    parser.add_argument(
        "--llm-concurrency",
        type=_int_at_least(1),
        default=LlmConfig.concurrency,
        metavar="N",
        help=f"pages in flight at once on each LLM server (default {LlmConfig.concurrency}); more keeps a large GPU "
        "busier, and the book's characters shown with each page then lag that many pages behind it",
    )
    parser.add_argument(
        "--llm-granularity",
        choices=["page", "panel"],
        default=LlmConfig.granularity,
        help="what one LLM request shows: the whole page, or one panel's crop and its lettering (more, smaller "
        "requests, for models with small image budgets)",
    )
    parser.add_argument(
        "--work-dir",
        type=Path,
        help="where artifacts are kept (default: OUTPUT.work/ when narrating; the user cache folder for read/inspect)",
    )
    parser.add_argument("-q", "--quiet", action="store_true", help="no progress lines")
    parser.add_argument(
        "--json-progress",
        action="store_true",
        help="progress and the final summary as JSON lines on stderr, for scripts",
    )


def _narrate_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="comic-narrator",
        description="Turn a comic or manga into a narrated, voice-acted, camera-animated MP4. "
        f"Other commands: {', '.join(SUBCOMMANDS[1:])} (comic-narrator COMMAND --help).",
    )
    _add_input_options(parser)
    parser.add_argument("-o", "--output", type=Path, help="the MP4 to write (default: INPUT-NAME.mp4 here)")
    parser.add_argument("--vision-only", action="store_true", help="stop after reading the pages")
    parser.add_argument(
        "--executor",
        choices=("local", "ray"),
        default="local",
        help="where page work runs: local pools, or a Ray cluster (reading actors, render tasks; needs the ray "
        "extra; the work folder must be visible to every worker)",
    )
    parser.add_argument(
        "--ray-address", default=None, help="Ray cluster to join (e.g. ray://head:10001); default: a local instance"
    )
    parser.add_argument(
        "--keep-going",
        action="store_true",
        help="a page that cannot be decoded, read or voiced is recorded in failures.json and shown silent while "
        "the other pages go on (the exit code is still 3); without it the first such page stops the run",
    )
    parser.add_argument("--reading", type=Path, help="start from an edited reading JSON (read --json output)")
    parser.add_argument("--script", type=Path, help="start from an edited script JSON (WORK/script.json)")
    parser.add_argument(
        "--stack",
        type=Path,
        help="use the GPU stack `comic-narrator gpu up STACK.yaml` started (its vLLM reads, its TTS voices)",
    )
    parser.add_argument("--cast", type=Path, help="YAML file pinning characters to voices, speeds, pitches")
    parser.add_argument("--narrator-voice", help="voice id for the narrator (see `comic-narrator voices`)")
    parser.add_argument(
        "--voice-quality",
        choices=["fast", "natural"],
        default=VoiceConfig.quality,
        help="natural (default): Kokoro's own English and Japanese speakers for narrator and leads (about 0.4 CPU s "
        "per audio s); fast: only voices within real time on one core (joe, Mei and their variants, about 5x cheaper)",
    )
    parser.add_argument("--speed", type=_speed, default=1.0, help="global speaking-rate multiplier (0.5-2.0)")
    parser.add_argument("--read-sfx", action="store_true", help="have the narrator speak sound effects too")
    parser.add_argument("--no-captions", action="store_true", help="do not read caption boxes aloud")
    parser.add_argument(
        "--no-sound-bed", action="store_true", help="voices only: no ambience, sound-word effects or page swishes"
    )
    parser.add_argument(
        "--sounds",
        type=Path,
        metavar="DIR",
        help="a folder whose sounds.toml maps your recordings over the synthesised ambiences, effects and music "
        "(docs/sound.md)",
    )
    parser.add_argument(
        "--music", action="store_true", help="add a music bed: synthesised chords in a mood chosen from each page"
    )
    parser.add_argument("--fps", type=int, default=RenderConfig.fps, choices=[24, 25, 30, 60])
    parser.add_argument(
        "--preset",
        default=RenderConfig.preset,
        choices=["ultrafast", "superfast", "veryfast", "faster", "fast", "medium", "slow"],
        help="libx264 speed/size trade-off (default: veryfast with a cheaper motion search, about 40%% less "
        "encoder time at the same quality; see README, Performance)",
    )
    parser.add_argument(
        "--aspect",
        choices=list(ASPECT_SIZE_PX),
        default="wide",
        help="the frame: wide 1920x1080, vertical 1080x1920 (wide panels are panned across), square 1080x1080",
    )
    parser.add_argument(
        "--draft",
        action="store_true",
        help="a fast low-resolution preview: short side 480 px or less, 12 fps (overrides --fps), CRF 28",
    )
    parser.add_argument(
        "--burn-subtitles",
        nargs="?",
        const="book",
        default="",
        choices=["book", "en"],
        help="draw the subtitles into the picture with the bundled font: the book's language (the default), or "
        "'en' for the English translation where the reading carries one",
    )
    parser.add_argument(
        "--transition",
        choices=["slide", "fade", "cut"],
        default=RenderConfig.transition,
        help="how each page takes over from the one before: slide in the reading direction (from the right for "
        "western comics, from the left for manga, from below for webtoons), fade, or cut",
    )
    parser.add_argument(
        "--no-highlight",
        action="store_true",
        help="do not outline the balloon of the line being spoken, nor swell sound words as their effects play",
    )
    parser.add_argument(
        "--credits",
        metavar="TEXT|FILE",
        type=_credit_lines,
        default=(),
        help="lines for the end card, shown before what ComicInfo.xml or the PDF says and the credit lines found "
        "on the pages: a text file (a line each) or the text itself ('\\n' between lines)",
    )
    parser.add_argument(
        "--no-end-card", action="store_true", help="no closing card of the title, credits and licence notes"
    )
    parser.add_argument(
        "--chapters",
        type=_chapter_pages,
        metavar="PAGES",
        help="chapter markers at these input pages, e.g. '1,13,25' (default: ComicInfo.xml bookmarks or the PDF "
        "outline, if any)",
    )
    parser.add_argument(
        "--split-chapters",
        action="store_true",
        help="also write one MP4 per chapter (OUT-01.mp4, ...), each with its own subtitle files",
    )
    parser.add_argument(
        "--jobs", type=_int_at_least(0), default=0, help="parallel synthesis and render workers (0 = one per core)"
    )
    parser.add_argument(
        "--tts-server",
        type=url_list_arg,
        metavar="URL[,URL...]",
        help="base URL of a GPU TTS server, or several of one engine serving the same voices (each line goes to "
        "the least busy); default: only the offline voices",
    )
    parser.add_argument(
        "--tts-api",
        choices=["fish", "openai"],
        default="fish",
        help="the TTS server's API: Fish Speech /v1/tts or OpenAI-compatible /v1/audio/speech",
    )
    parser.add_argument("--tts-voices", help="comma-separated server voices for casting (default: as listed)")
    add_tts_reference_option(parser)
    add_read_along_option(parser)
    add_audiobook_option(parser)
    parser.add_argument("--version", action="version", version=f"comic-narrator {__version__}")
    return parser


def _ingest_config(args: argparse.Namespace) -> IngestConfig:
    return IngestConfig(
        pdf_dpi=args.dpi,
        pages=args.pages,
        max_image_pixels=args.max_pixels,
        layout=args.layout,
        keep_going=bool(getattr(args, "keep_going", False)),
    )


def _llm_config(args: argparse.Namespace) -> LlmConfig:
    return LlmConfig(
        base_url=args.llm_url,
        model=args.llm_model,
        granularity=args.llm_granularity,
        concurrency=args.llm_concurrency,
    )


def _vision_config(args: argparse.Namespace) -> VisionConfig:
    return VisionConfig(vision=args.vision, layout=args.layout, lang=args.lang, panels=args.panels)


def _default_work_dir(anchor: Path) -> Path:
    return anchor.with_name(anchor.name + ".work")


def _reader_work_dir(input_path: Path) -> Path:
    """Where `read` and `inspect` keep their artifacts unless --work-dir says: the user's cache folder, one
    subfolder per input (named and hashed by its absolute path), never a folder left beside the user's files."""
    import hashlib
    import os

    root = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "comic-narrator" / "work"
    absolute = str(input_path.expanduser().resolve())
    return root / f"{input_path.name}-{hashlib.sha256(absolute.encode('utf-8')).hexdigest()[:12]}"


def _render_config(args: argparse.Namespace) -> RenderConfig:
    width_px, height_px = ASPECT_SIZE_PX[args.aspect]
    render = RenderConfig(
        width_px=width_px,
        height_px=height_px,
        fps=args.fps,
        preset=args.preset,
        # the default's motion-search tuning would override what another preset chose
        x264_params=RenderConfig.x264_params if args.preset == RenderConfig.preset else "",
        jobs=args.jobs,
        burn_subtitles=args.burn_subtitles,
        transition=args.transition,
        highlight=not args.no_highlight,
        end_card=not args.no_end_card,
        credits=args.credits,
        chapters=args.chapters or (),
        split_chapters=args.split_chapters,
    )
    return render.draft() if args.draft else render


def run_config_from_args(args: argparse.Namespace) -> RunConfig:
    output = args.output or Path(args.input.name).with_suffix(".mp4")
    if output.suffix.lower() != ".mp4":
        output = output.with_name(output.name + ".mp4")
    from comic_narrator.web.edits import review_cast_file
    from comic_narrator.web.panel_edits import review_reading_file

    work_dir = args.work_dir or _default_work_dir(output)
    return RunConfig(
        input_path=args.input,
        output_path=output,
        work_dir=work_dir,
        ingest=_ingest_config(args),
        vision=_vision_config(args),
        voice=VoiceConfig(
            narrator_voice=args.narrator_voice,
            quality=args.voice_quality,
            cast_file=args.cast or review_cast_file(work_dir),  # the voices `review` saved, unless --cast
            speed=args.speed,
            jobs=args.jobs,
            read_captions=not args.no_captions,
            read_sound_effects=args.read_sfx,
            tts_server=args.tts_server,
            tts_server_api=args.tts_api,
            tts_server_references=tuple(args.tts_reference),
            tts_server_voices=tuple(v.strip() for v in args.tts_voices.split(",") if v.strip())
            if args.tts_voices
            else (),
        ),
        llm=_llm_config(args),
        audio=AudioConfig(sound_bed=not args.no_sound_bed, music=args.music, sounds_dir=args.sounds),
        render=_render_config(args),
        vision_only=args.vision_only,
        keep_going=args.keep_going,
        executor=args.executor,
        ray_address=args.ray_address,
        reading_file=args.reading or review_reading_file(work_dir),  # the reading `review` saved, unless --reading
        script_file=args.script,
        stack_file=args.stack,
    )


def _setup_log(work_dir: Path | None) -> Path:
    """Log everything (tracebacks included) to a file; the terminal gets one line per error."""
    folder = work_dir if work_dir is not None else Path(tempfile.gettempdir())
    try:
        folder.mkdir(parents=True, exist_ok=True)
        path = folder / LOG_NAME
        handler: logging.Handler = logging.FileHandler(path, encoding="utf-8")
    except OSError:
        path = Path(tempfile.gettempdir()) / LOG_NAME
        handler = logging.FileHandler(path, encoding="utf-8")
    handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    root = logging.getLogger()
    root.handlers = [handler]
    root.setLevel(logging.INFO)
    return path


def _guarded(action: Callable[[], int], log_path: Path) -> int:
    try:
        return action()
    except ComicNarratorError as exc:
        log.error("%s", exc, exc_info=True)
        print(f"error: {exc}  (log: {log_path})", file=sys.stderr)
        return exc.exit_code
    except KeyboardInterrupt:
        print(
            f"interrupted: finished work is kept; re-run the same command to resume  (log: {log_path})",
            file=sys.stderr,
        )
        return 130
    except Exception as exc:  # the user gets one line; the traceback goes to the log
        log.exception("internal error")
        print(f"error: internal error: {exc.__class__.__name__}: {exc}  (log: {log_path})", file=sys.stderr)
        return 1


PAGES_FAILED_EXIT = 3
"""The run finished (with --keep-going) but some pages failed; failures.json lists them."""


def narrate_main(argv: Sequence[str]) -> int:
    args = _narrate_parser().parse_args(list(argv))  # --help and bad options answer before the pipeline's imports
    config = run_config_from_args(args)

    from comic_narrator import pipeline
    from comic_narrator.workdir import ensure_writable_output

    def action() -> int:
        import time

        ensure_writable_output(config.output_path)
        progress = Progress(quiet=args.quiet, as_json=args.json_progress)
        started_s = time.monotonic()
        result = pipeline.run(config, progress)
        wall_s = time.monotonic() - started_s
        for failure in result.failures:
            print(f"warning: {failure}", file=sys.stderr)
        progress.event(
            {
                "event": "summary",
                "pages": result.pages,
                "video_s": round(result.duration_s, 2),
                "wall_s": round(wall_s, 2),
                "failures": result.failures,
                "work_dir": str(result.work_dir),
                "output": None if result.output is None else str(result.output),
                "reading": None if result.reading_file is None else str(result.reading_file),
                "stage_s": result.stage_seconds,
            }
        )
        if config.vision_only:
            print(f"reading written to {result.reading_file}")
        else:
            ratio = f", {wall_s / result.duration_s:.2f}x real time" if result.duration_s > 0 else ""
            print(
                f"wrote {result.output} ({result.duration_s:.1f} s of video from {result.pages} page(s) in "
                f"{wall_s:.1f} s{ratio}; {len(result.failures)} failure(s)), {result.subtitles}; "
                f"work: {result.work_dir}"
            )
            if args.read_along is not None:
                write_read_along(config.work_dir, args.read_along)
            if args.audiobook and result.output is not None:
                write_audiobook(result.output, config.work_dir)
        return PAGES_FAILED_EXIT if result.failures else 0

    log_path = _setup_log(config.work_dir if config.output_path.parent.exists() else None)
    return _guarded(action, log_path)


def _reader_parser(prog: str, description: str) -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog=f"comic-narrator {prog}", description=description)
    _add_input_options(parser)
    return parser


def read_main(argv: Sequence[str]) -> int:
    from comic_narrator import pipeline
    from comic_narrator.reading.stage import read_pages

    parser = _reader_parser("read", "Read the pages and print what was found (panels, texts, speakers).")
    parser.add_argument("--json", action="store_true", help="print the reading JSON (the stored artifact)")
    args = parser.parse_args(list(argv))
    work_dir = args.work_dir or _reader_work_dir(args.input)

    def action() -> int:
        progress = Progress(quiet=args.quiet or args.json, as_json=args.json_progress)
        book = pipeline.load_or_ingest(args.input, _ingest_config(args), work_dir, progress)
        reading, failures = read_pages(book, _vision_config(args), work_dir, progress, _llm_config(args))
        for failure in failures:
            print(f"warning: {failure}", file=sys.stderr)
        if args.json:
            print(reading.model_dump_json(indent=2))
            return 0
        for page in reading.pages:
            print(f"page {page.page + 1} [{page.page_kind}, {page.reading_direction}]: {len(page.panels)} panels")
            for text in page.texts:
                print(f"  panel {text.panel + 1:>2} {text.kind:<7} {text.speaker or '-':<8} {text.text}")
        return 0

    return _guarded(action, _setup_log(work_dir))


def inspect_main(argv: Sequence[str]) -> int:
    from comic_narrator import pipeline
    from comic_narrator.reading.stage import load_page_rgb, read_pages

    parser = _reader_parser("inspect", "Write overlay PNGs showing the panels and texts that were read.")
    parser.add_argument("-o", "--output", type=Path, help="folder for the PNGs (default: INPUT-NAME.inspect/)")
    args = parser.parse_args(list(argv))
    work_dir = args.work_dir or _reader_work_dir(args.input)
    out_dir: Path = args.output or Path(args.input.name + ".inspect")

    def action() -> int:
        import cv2

        from comic_narrator.reading.overlay import draw_overlay
        from comic_narrator.workdir import atomic_write_bytes, make_folder

        progress = Progress(quiet=args.quiet, as_json=args.json_progress)
        book = pipeline.load_or_ingest(args.input, _ingest_config(args), work_dir, progress)
        make_folder(out_dir, "overlay folder")  # before the pages are read, not after
        reading, _ = read_pages(book, _vision_config(args), work_dir, progress, _llm_config(args))
        for page, page_reading in zip(book.pages, reading.pages, strict=True):
            overlay = draw_overlay(load_page_rgb(work_dir, page), page_reading)
            ok, buf = cv2.imencode(".png", cv2.cvtColor(overlay, cv2.COLOR_RGB2BGR))
            target = out_dir / f"page-{page.index + 1:04d}.png"
            if ok:
                atomic_write_bytes(target, buf.tobytes())
                print(target)
        return 0

    return _guarded(action, _setup_log(work_dir))


def _delegate(module: str, argv: Sequence[str]) -> int:
    import importlib

    entry: Callable[[list[str]], int] = importlib.import_module(module).main
    return _guarded(lambda: entry(list(argv)), _setup_log(None))


def main(argv: Sequence[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    command = args[0] if args else ""
    rest = args[1:]
    if command == "read":
        return read_main(rest)
    if command == "inspect":
        return inspect_main(rest)
    if command == "eval":
        return _delegate("comic_narrator.cli.eval", rest)
    if command == "voices":
        return _delegate("comic_narrator.cli.voices", rest)
    if command == "gpu":
        return _delegate("comic_narrator.cli.gpu", rest)
    if command == "review":
        return _delegate("comic_narrator.cli.review", rest)
    if command == "export":
        return _delegate("comic_narrator.cli.readalong", rest)
    if command == "narrate":
        return narrate_main(rest)
    return narrate_main(args)


if __name__ == "__main__":
    sys.exit(main())
