"""The book's characters as the LLM reader shows them to each page: who the pages before it named, decided in book
order, so a character keeps one name while pages are read concurrently and a re-run shows every page the same."""

from __future__ import annotations

import functools
import threading
from collections import Counter
from collections.abc import Sequence

from comic_narrator.artifacts import Character, PageReading

FIRST_NAMES_PAGES = 8
"""Book pages searched one after another for the first page that names somebody; a book that names nobody in
them is read with every slot at once from then on."""
MAX_KNOWN_CHARACTERS = 16
"""Most characters shown with a page: those who speak most in the pages before it (ties: who came first)."""


def known_characters(readings: Sequence[PageReading]) -> list[Character]:
    """The characters named in ``readings`` (book order), in order of first appearance: each id once, with the
    first gender, age and nature any page gave; at most MAX_KNOWN_CHARACTERS, those with the most lines."""
    found: dict[str, Character] = {}
    lines: Counter[str] = Counter()
    for reading in readings:
        for character in reading.characters:
            known = found.get(character.id)
            if known is None:
                found[character.id] = character
                continue
            update = {
                field: getattr(character, field)
                for field in ("gender", "age", "nature")
                if getattr(known, field) == "unknown" and getattr(character, field) != "unknown"
            }
            if update:
                found[character.id] = known.model_copy(update=update)
        lines.update(text.speaker for text in reading.texts if text.speaker is not None and text.speaker in found)
    order = list(found)
    kept = set(sorted(order, key=lambda cid: (-lines[cid], order.index(cid)))[:MAX_KNOWN_CHARACTERS])
    return [found[cid] for cid in order if cid in kept]


def describe_known(known: Sequence[Character]) -> str:
    """The prompt's line naming the characters already met ('' when there are none)."""
    if not known:
        return ""
    people = "; ".join(f"{c.name} ({c.gender}, {c.age}, {c.nature})" for c in known)
    return f"Characters already named in this book (use these names for them): {people}"


class ReadingAbandoned(RuntimeError):
    """An earlier page's reading failed, so the characters a later page would be shown cannot be known."""


class CharacterLedger:
    """What each page of a book is shown, for pages read concurrently. Page N (in book order) is shown the
    characters of pages 1..N-``lag_pages``, and of the pages after those up to the first one that named anybody
    when none of those did (within the book's first FIRST_NAMES_PAGES): a book's first speaking page is read
    before the pages after it, so every page after it starts from its names; past it, up to ``lag_pages`` pages
    are read at once (the LLM's slots). A page waits only for the pages it is shown; what it is shown depends on
    those pages' readings alone, never on timing."""

    def __init__(self, pages_in_order: Sequence[int], lag_pages: int) -> None:
        self.lag_pages = max(1, lag_pages)
        self._position = {page: n for n, page in enumerate(pages_in_order)}
        self._read: dict[int, PageReading | None] = {}
        self._abandoned = False
        self._changed = threading.Condition()

    def record(self, page: int, reading: PageReading | None) -> None:
        """Page ``page`` is read (None: it was not, e.g. its local reading failed: it names nobody)."""
        with self._changed:
            self._read[self._position[page]] = reading
            self._changed.notify_all()

    def abandon(self) -> None:
        """A page's reading raised: the run stops, and pages waiting on it stop too."""
        with self._changed:
            self._abandoned = True
            self._changed.notify_all()

    def _settled(self, position: int) -> bool:
        return position in self._read or self._abandoned

    def shown_to(self, page: int) -> list[Character]:
        """The characters page ``page`` is shown, once the pages they come from are read."""
        position = self._position[page]
        before: list[PageReading] = []
        for earlier in range(position):
            named = any(reading.characters for reading in before)
            if earlier > position - self.lag_pages and (named or earlier >= FIRST_NAMES_PAGES):
                break
            with self._changed:
                self._changed.wait_for(functools.partial(self._settled, earlier))
                if earlier not in self._read:
                    raise ReadingAbandoned(f"page {earlier + 1} of the book was not read")
                reading = self._read[earlier]
            if reading is not None:
                before.append(reading)
        return known_characters(before)
