"""``comic-narrator review INPUT [-o OUT.mp4]``: narrate the book (or reuse what a run already made), then serve
the review page on 127.0.0.1 behind a random token until Ctrl-C. Saving on the page writes the edited script and
the chosen voices into the work folder, where the next run of the same command uses them; the page can also
render at once."""

from __future__ import annotations

import sys
from collections.abc import Sequence
from dataclasses import replace


def main(argv: Sequence[str]) -> int:
    from comic_narrator import pipeline
    from comic_narrator.cli.app import _narrate_parser, run_config_from_args
    from comic_narrator.cli.audiobook import write_audiobook
    from comic_narrator.cli.readalong import write_read_along
    from comic_narrator.progress import Progress
    from comic_narrator.voice.voicebank import open_voice_bank
    from comic_narrator.web.edits import review_cast_file
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
    config = run_config_from_args(args)
    ensure_writable_output(config.output_path)
    progress = Progress(quiet=args.quiet, as_json=args.json_progress)
    result = pipeline.run(config, progress)
    print(f"narrated {result.output} ({result.duration_s:.1f} s); work: {result.work_dir}", flush=True)

    def render() -> str:
        cast_file = args.cast or review_cast_file(config.work_dir)
        again = pipeline.run(replace(config, voice=replace(config.voice, cast_file=cast_file)), progress)
        if args.read_along is not None:
            write_read_along(config.work_dir, args.read_along)
        if args.audiobook and again.output is not None:
            write_audiobook(again.output, config.work_dir)
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
