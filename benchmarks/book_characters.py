"""What keeping who-is-who in one book-level artifact costs as the book grows: the fold of each page into the book's
characters (reading/book_characters.py), its lines counted, the LLM ledger's record and the list a page is shown
(reading/known_characters.py), and the size of characters.json (the page stream rewrites it when somebody joins
the book or gets a voice or a name, and at the end).

    python benchmarks/book_characters.py [--pages 100 1000] [--characters 30] [--balloons 8]

Synthetic readings (no reader runs): each page gives ``--balloons`` balloons to characters drawn from a cast of
``--characters`` with a few leads speaking most, each named as an LLM reader's page names them.
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from pathlib import Path

from comic_narrator.artifacts import PageReading, ScriptLine
from comic_narrator.reading.book_characters import CharacterBook
from comic_narrator.reading.known_characters import CharacterLedger

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the tests' page maker
from tests.llm.test_known_characters import _reading


def _pages(count: int, characters: int, balloons: int, seed: int = 7) -> list[PageReading]:
    rng = random.Random(seed)
    weights = [1.0 / (rank + 1) for rank in range(characters)]  # a few leads, many extras
    return [
        _reading(page, *(f"Name{n}" for n in rng.choices(range(characters), weights, k=balloons)))
        for page in range(count)
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--pages", type=int, nargs="+", default=[100, 1000])
    parser.add_argument("--characters", type=int, default=30)
    parser.add_argument("--balloons", type=int, default=8)
    args = parser.parse_args()
    print(
        f"{'pages':>6} {'fold ms/page':>13} {'its last 10%':>13} {'ledger ms/page':>15} {'json ms':>8} {'json KiB':>9}"
    )
    for count in args.pages:
        pages = _pages(count, args.characters, args.balloons)
        book = CharacterBook(link=False)
        each: list[float] = []
        for reading in pages:
            lines = [
                ScriptLine(
                    id=f"p{reading.page + 1:03d}-t{n:02d}",
                    page=reading.page,
                    panel=0,
                    speaker=t.speaker or "x",
                    kind="speech",
                    text=t.text,
                )
                for n, t in enumerate(reading.texts, start=1)
            ]
            started = time.perf_counter()
            book.add_page(reading)
            book.add_lines(lines, reading=reading)
            each.append(time.perf_counter() - started)
        started = time.perf_counter()
        text = book.characters.model_dump_json(indent=2)  # characters.json of the whole book, but the disk
        json_s = time.perf_counter() - started
        ledger = CharacterLedger(lag_pages=4)
        started = time.perf_counter()
        for reading in pages:
            ledger.shown_to(reading.page)
            ledger.record(reading.page, reading)
        ledger_s = time.perf_counter() - started
        tail = each[-max(1, count // 10) :]
        print(
            f"{count:>6} {1000 * sum(each) / count:>13.2f} {1000 * sum(tail) / len(tail):>13.2f} "
            f"{1000 * ledger_s / count:>15.2f} {1000 * json_s:>8.1f} {len(text) / 1024:>9.0f}"
        )


if __name__ == "__main__":
    main()
