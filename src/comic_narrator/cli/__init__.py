"""The command line: argv to configs, one module per command (app: narrate, read, inspect and the dispatch;
voices; eval; gpu), errors as one line plus the log path. No logic of the data path lives here."""

from comic_narrator.cli.app import main

__all__ = ["main"]
