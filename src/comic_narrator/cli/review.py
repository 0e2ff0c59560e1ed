"""``comic-narrator review INPUT [-o OUT.mp4]``: narrate the book (or reuse what a run already made), then serve
the review page on 127.0.0.1 behind a random token until Ctrl-C. Saving on the page writes the edited script and
the chosen voices into the work folder, where the next run of the same command uses them; the page can also
render at once."""

from __future__ import annotations

import sys
from collections.abc import Sequence
from dataclasses import replace
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from comic_narrator.config import RunConfig
    from comic_narrator.pipeline import RunResult


def main(argv: Sequence[str]) -> int:
    from comic_narrator import pipeline
    from comic_narrator.cli.app import _narrate_parser, run_config_from_args
    from comic_narrator.cli.audiobook import write_audiobook
    from comic_narrator.cli.readalong import write_read_along
    from comic_narrator.progress import Progress
    from comic_narrator.voice.voicebank import open_voice_bank
    from comic_narrator.web.edits import review_cast_file
    from comic_narrator.web.panel_edits import review_reading_file
    from comic_narrator.web.review import ReviewSession
    from comic_narrator.web.server import ReviewServer
    from comic_narrator.workdir import ensure_writable_output

    parser = _narrate_parser()
    parser.prog = "comic-narrator review"
    parser.description = (
        "Narrate the book (or reuse the last run), then fix its script in the browser: pages with numbered panels "
        "and text boxes, each line's speaker, voice, emotion and text, a play button per line; save, then render."
    )
    parser.add_argument("--port", type=int, default=0, help="the port on 127.0.0.1 (default: a free one)")
    parser.add_argument("--no-browser", action="store_true", help="print the address; do not open a browser")
    args = parser.parse_args(list(argv))
    if args.vision_only:
        parser.error("--vision-only stops before the script and the voices, which the review page shows")
    config = run_config_from_args(args)
    ensure_writable_output(config.output_path)
    progress = Progress(quiet=args.quiet, as_json=args.json_progress)

    def narrate(run: RunConfig) -> RunResult:
        """A run and the outputs asked for beside the video."""
        result = pipeline.run(run, progress)
        if args.read_along is not None:
            write_read_along(run.work_dir, args.read_along)
        if args.audiobook and result.output is not None:
            write_audiobook(result.output, run.work_dir)
        return result

    result = narrate(config)
    print(f"narrated {result.output} ({result.duration_s:.1f} s); work: {result.work_dir}", flush=True)

    def render() -> str:
        """The page's "Save and render": the same run again, with the voices and reading the review saved."""
        cast_file = args.cast or review_cast_file(config.work_dir)
        reading_file = args.reading or review_reading_file(config.work_dir)
        again = narrate(replace(config, voice=replace(config.voice, cast_file=cast_file), reading_file=reading_file))
        return f"wrote {again.output} ({again.duration_s:.1f} s of video)"

    with open_voice_bank(config.voice) as bank:
        server = ReviewServer(ReviewSession(config.work_dir, bank, config.voice, render), port=args.port)
        print(f"review: {server.url}", flush=True)
        print("Ctrl-C stops the server; the saved script and voices stay in the work folder.", flush=True)
        if not args.no_browser:
            import webbrowser

            webbrowser.open(server.url)
        try:
            server.serve_forever()
        except KeyboardInterrupt:
            print("review stopped", file=sys.stderr)
        finally:
            server.server_close()
    return 0
