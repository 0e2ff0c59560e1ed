"""The book's characters (``characters.json``) grown page by page in book order: who each page's speakers are
book-wide, what is known of them, how many lines they speak and which voice they keep.

Every reader of who-is-who folds pages through here in book order: the page stream (``flow/stream.py``), the
``read`` command (``reading/stage.py``) and the LLM reader's ledger (``reading/known_characters.py``), so the same
pages give the same artifact whichever page finished first, and each page's own reading stays page-local (its
cache key never holds another page's ids)."""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence

from comic_narrator.artifacts import (
    BookCharacter,
    BookCharacters,
    Character,
    CharacterSource,
    PageReading,
    ScriptLine,
)
from comic_narrator.reading.speakers import SpeakerLinker
from comic_narrator.reading.speech_cues import speaker_gender

NARRATOR = "narrator"
"""The script's speaker for captions and sound words: the narrator is cast, but is no character of the book."""
ATTRIBUTES = ("gender", "age", "nature")


class CharacterBook:
    """Pages added in book order, each page's speakers linked to book-wide ids (the local reader's appearance
    and register linking when ``link``; an LLM reader's or an edited reading's ids are book-wide already) and
    folded into :attr:`characters`."""

    def __init__(self, link: bool) -> None:
        self._linker = SpeakerLinker() if link else None
        self.characters = BookCharacters()

    def add_page(self, reading: PageReading) -> PageReading:
        """The page with its speakers' book-wide ids; the book's characters now hold it."""
        linked = self._linker.add_page(reading) if self._linker is not None else reading
        self.characters = with_page(self.characters, reading, linked)
        return linked

    def skip_page(self) -> None:
        """A page that was not read (its reading failed): it names nobody, but it counts as read."""
        self.characters = self.characters.model_copy(update={"pages": self.characters.pages + 1})

    def add_lines(
        self, lines: Sequence[ScriptLine], removed: bool = False, reading: PageReading | None = None
    ) -> BookCharacters:
        """The page's script lines counted (``removed``: taken back, when the page could not be voiced); with
        the page's ``reading``, a line given to somebody else than its balloon's speaker links that balloon's
        page-local id to them."""
        self.characters = with_lines(self.characters, lines, removed)
        if reading is not None and not removed:
            self.characters = with_reattributed(self.characters, lines, reading)
        return self.characters


def with_page(characters: BookCharacters, local: PageReading, linked: PageReading) -> BookCharacters:
    """``characters`` with one more page: ``local`` is the page's own reading, ``linked`` the same reading with
    book-wide speaker ids. The page's named characters (an LLM's) come first in the order it listed them, then its
    other speakers in reading order; a character keeps the first name, gender, age and nature any page gave (a
    gender also from what its balloons' Japanese marks, when the page names none: :func:`with_said_genders`)."""
    page = linked.page
    regions: Counter[tuple[str, str]] = Counter()
    for own, book in zip(local.texts, linked.texts, strict=True):
        if book.speaker is not None and book.speaker != NARRATOR:
            regions[(book.speaker, own.speaker or book.speaker)] += 1
    named = {character.id: character for character in linked.characters}
    met = list(dict.fromkeys([*named, *(book_id for book_id, _ in regions)]))
    found = {c.id: n for n, c in enumerate(characters.characters)}
    updated = list(characters.characters)
    for book_id in met:
        sources = [
            CharacterSource(page=page, speaker=own, regions=count)
            for (speaker, own), count in regions.items()
            if speaker == book_id
        ] or [CharacterSource(page=page, speaker=book_id)]
        known = updated[found[book_id]] if book_id in found else BookCharacter(id=book_id, first_page=page)
        change: dict[str, object] = {"sources": [*known.sources, *sources]}
        given = named.get(book_id)
        if given is not None:
            if known.name is None:
                change["name"] = given.name
            change.update(
                {
                    field: getattr(given, field)
                    for field in ATTRIBUTES
                    if getattr(known, field) == "unknown" and getattr(given, field) != "unknown"
                }
            )
        if book_id in found:
            updated[found[book_id]] = known.model_copy(update=change)
        else:
            found[book_id] = len(updated)
            updated.append(known.model_copy(update=change))
    added = characters.model_copy(update={"pages": characters.pages + 1, "characters": updated})
    spoken = [(t.speaker, t.text) for t in linked.texts if t.speaker is not None and t.kind in ("speech", "shout")]
    return with_said_genders(added, spoken)


def with_lines(characters: BookCharacters, lines: Sequence[ScriptLine], removed: bool = False) -> BookCharacters:
    """``characters`` with ``lines`` counted (``removed``: taken back): each speaker but the narrator speaks one
    more line. A speaker the readings never met (a user's edited script renamed a character or gave a line to
    somebody new) joins the book on the page of its first line. A speaker whose gender nobody gave takes the one
    its lines here say more often (Japanese speech marks it: :func:`speaker_gender`), so that casting, which
    reads it, gives a man a man's voice though no LLM named him."""
    counts: Counter[str] = Counter(line.speaker for line in lines if line.speaker != NARRATOR)
    if removed:
        counts = Counter({speaker: -count for speaker, count in counts.items()})
    first_page: dict[str, int] = {}
    for line in lines:
        first_page.setdefault(line.speaker, line.page)
    found = {c.id: n for n, c in enumerate(characters.characters)}
    updated = list(characters.characters)
    for speaker, count in counts.items():
        if speaker in found:
            known = updated[found[speaker]]
            updated[found[speaker]] = known.model_copy(update={"lines": max(0, known.lines + count)})
        elif count > 0:
            found[speaker] = len(updated)
            updated.append(BookCharacter(id=speaker, first_page=first_page[speaker], lines=count))
    characters = characters.model_copy(update={"characters": updated})
    return characters if removed else with_said_genders(characters, [(line.speaker, line.text) for line in lines])


def with_said_genders(characters: BookCharacters, said: Sequence[tuple[str, str]]) -> BookCharacters:
    """``characters`` where each speaker of ``said`` (speaker, words) whose gender nobody gave takes the one their
    words mark more often (:func:`speaker_gender`; the narrator aside, a tie says nothing)."""
    votes: dict[str, Counter[str]] = {}
    for speaker, text in said:
        gender = speaker_gender(text) if speaker != NARRATOR else None
        if gender is not None:
            votes.setdefault(speaker, Counter())[gender] += 1
    updated = list(characters.characters)
    for n, character in enumerate(updated):
        tally = votes.get(character.id)
        if character.gender == "unknown" and tally is not None and tally["male"] != tally["female"]:
            updated[n] = character.model_copy(update={"gender": max(tally, key=lambda g: tally[g])})
    return characters.model_copy(update={"characters": updated})


WRITTEN_LINE = re.compile(r"p(\d+)-t(\d+)")
"""The id the script writer gives a line: its page and its balloon's place in the page's texts, from 1."""


def with_reattributed(characters: BookCharacters, lines: Sequence[ScriptLine], reading: PageReading) -> BookCharacters:
    """``characters`` where a line of ``reading``'s page whose speaker an edited script changed (a review renamed
    a character, or gave a balloon to another) links its balloon's page-local id to the line's speaker."""
    found = {c.id: n for n, c in enumerate(characters.characters)}
    updated = list(characters.characters)
    moved: Counter[tuple[str, str]] = Counter()
    for line in lines:
        written = WRITTEN_LINE.fullmatch(line.id)
        if written is None or int(written.group(1)) != reading.page + 1 or line.speaker not in found:
            continue
        number = int(written.group(2))
        balloon = reading.texts[number - 1].speaker if 0 < number <= len(reading.texts) else None
        if balloon is None or balloon == line.speaker or balloon not in found:
            continue
        own = [s.speaker for s in characters.characters[found[balloon]].sources if s.page == reading.page]
        moved[(line.speaker, own[0] if own else balloon)] += 1
    for (speaker, local_id), count in moved.items():
        known = updated[found[speaker]]
        source = CharacterSource(page=reading.page, speaker=local_id, regions=count)
        updated[found[speaker]] = known.model_copy(update={"sources": [*known.sources, source]})
    return characters.model_copy(update={"characters": updated})


def book_characters_of(readings: Sequence[PageReading], lines: Sequence[ScriptLine] | None = None) -> BookCharacters:
    """The artifact of readings whose ids are book-wide already, with ``lines`` counted; without lines, each
    character speaks as many lines as the readings give it balloons."""
    book = CharacterBook(link=False)
    for reading in readings:
        book.add_page(reading)
    if lines is not None:
        # page by page, as the page stream counts them: a gender is the one the first page that marks it says
        for page in sorted({line.page for line in lines}):
            book.add_lines([line for line in lines if line.page == page])
        return book.characters
    counted = [c.model_copy(update={"lines": c.regions}) for c in book.characters.characters]
    return book.characters.model_copy(update={"characters": counted})


def shown_characters(characters: BookCharacters, limit: int) -> list[Character]:
    """The named characters as the LLM reader is shown them: in order of first appearance, at most ``limit``,
    those the readings give the most balloons (ties: who came first)."""
    named = [c for c in characters.characters if c.name is not None]
    order = {c.id: n for n, c in enumerate(named)}
    kept = {c.id for c in sorted(named, key=lambda c: (-c.regions, order[c.id]))[:limit]}
    return [
        Character(id=c.id, name=c.name or c.id, gender=c.gender, age=c.age, nature=c.nature)
        for c in named
        if c.id in kept
    ]
