"""The book's characters as the LLM reader shows them to each page: the book's characters artifact as of the pages
before it, decided in book order, so a character keeps one name while pages are read concurrently and a re-run
shows every page the same."""

from __future__ import annotations

import threading
from collections.abc import Sequence

from comic_narrator.artifacts import BookCharacters, Character, PageReading
from comic_narrator.reading.book_characters import CharacterBook, shown_characters

FIRST_NAMES_PAGES = 8
"""Book pages searched one after another for the first page that speaks (a speech or shout line) or names
somebody; a book with neither in them is read with every slot at once from then on."""
SPEAKING_KINDS = ("speech", "shout")
MAX_KNOWN_CHARACTERS = 16
"""Most characters shown with a page: those who speak most in the pages before it (ties: who came first)."""


def known_characters(readings: Sequence[PageReading]) -> list[Character]:
    """The characters named in ``readings`` (book order) as a page after them is shown them: each id once, in
    order of first appearance, with the first gender, age and nature any page gave; at most MAX_KNOWN_CHARACTERS,
    those with the most lines."""
    book = CharacterBook(link=False)
    for reading in readings:
        book.add_page(reading)
    return shown_characters(book.characters, MAX_KNOWN_CHARACTERS)


def describe_known(known: Sequence[Character]) -> str:
    """The prompt's line naming the characters already met ('' when there are none)."""
    if not known:
        return ""
    people = "; ".join(f"{c.name} ({c.gender}, {c.age}, {c.nature})" for c in known)
    return f"Characters already named in this book (use these names for them): {people}"


class ReadingAbandoned(RuntimeError):
    """An earlier page's reading failed, so the characters a later page would be shown cannot be known."""


class CharacterLedger:
    """What each page of a book is shown, for pages read concurrently: the book's characters artifact grown from
    the pages' readings in book order as they are recorded, kept as of each page. Page N (in book order) is shown
    the characters of pages 1..N-``lag_pages``, and of the pages after those up to the first one that spoke or
    named anybody when none of those did (within the book's first FIRST_NAMES_PAGES): a book's first speaking page
    is read before the pages after it, so every page after it starts from its names; past it, up to ``lag_pages``
    pages are read at once (the LLM's slots), also when it named nobody (a model that names no speaker on a page
    of dialogue is no likelier to on the next one, and waiting for it would read the book one page at a time). A
    page waits only for the pages it is shown; what it is shown depends on those pages' readings alone, never on
    timing. Pages are named by their place in the book (``PageImage.index``, 0 for the first), so a book can be
    read while the rest of it is still being ingested."""

    def __init__(self, lag_pages: int) -> None:
        self.lag_pages = max(1, lag_pages)
        self._read: dict[int, PageReading | None] = {}
        """Recorded readings not yet folded (a page ahead of one still being read)."""
        self._book = CharacterBook(link=False)
        self._shown: list[list[Character]] = [[]]
        self._spoke: list[bool] = [False]
        """Whether any of the first N pages had a speech or shout line."""
        """What the artifact as of the first N pages shows a page (a few characters a page, not the artifact:
        its sources grow with the book)."""
        self._abandoned = False
        self._changed = threading.Condition()

    @property
    def characters(self) -> BookCharacters:
        """The book's characters as of the pages folded so far (every page, once all are recorded)."""
        with self._changed:
            return self._book.characters

    def record(self, page: int, reading: PageReading | None) -> None:
        """Page ``page`` is read (None: it was not, e.g. its local reading failed: it names nobody)."""
        with self._changed:
            self._read[page] = reading
            while self._book.characters.pages in self._read:
                done = self._read.pop(self._book.characters.pages)
                if done is None:
                    self._book.skip_page()
                else:
                    self._book.add_page(done)
                self._shown.append(shown_characters(self._book.characters, MAX_KNOWN_CHARACTERS))
                spoke = done is not None and any(text.kind in SPEAKING_KINDS for text in done.texts)
                self._spoke.append(self._spoke[-1] or spoke)
            self._changed.notify_all()

    def abandon(self) -> None:
        """A page's reading raised: the run stops, and pages waiting on it stop too."""
        with self._changed:
            self._abandoned = True
            self._changed.notify_all()

    def _folded(self, pages: int) -> bool:
        return self._book.characters.pages >= pages or self._abandoned

    def _as_of_pages(self, pages: int) -> tuple[list[Character], bool]:
        """What the book's characters as of its first ``pages`` pages show, and whether any of those pages spoke,
        once those are read."""
        with self._changed:
            self._changed.wait_for(lambda: self._folded(pages))
            if self._book.characters.pages < pages:
                raise ReadingAbandoned(f"page {self._book.characters.pages + 1} of the book was not read")
            return self._shown[pages], self._spoke[pages]

    def shown_to(self, page: int) -> list[Character]:
        """The characters page ``page`` is shown, once the pages they come from are read."""
        pages = max(0, page - self.lag_pages + 1)  # the pages before these are always shown
        while pages < page:
            named, spoke = self._as_of_pages(pages)
            if pages > page - self.lag_pages and (named or spoke or pages >= FIRST_NAMES_PAGES):
                break
            pages += 1
        return self._as_of_pages(pages)[0]
