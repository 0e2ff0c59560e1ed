"""The book's characters' smaller rules: which page-local id a linked balloon is recorded from, and lines taken
back that link nothing."""

from __future__ import annotations

from comic_narrator.artifacts import (
    BookCharacter,
    BookCharacters,
    Character,
    CharacterSource,
    PageReading,
    Panel,
    ScriptLine,
    TextRegion,
)
from comic_narrator.reading.book_characters import CharacterBook, book_characters_of, with_page, with_reattributed


def _page(*speakers: str | None, kind: str = "speech") -> PageReading:
    texts = [
        TextRegion(bbox=(0, 40 * n, 30, 30), kind=kind, text="はい", panel=0, speaker=s, lang="ja")  # type: ignore[arg-type]
        for n, s in enumerate(speakers)
    ]
    return PageReading(
        page=0, width=99, height=400, reading_direction="rtl", panels=[Panel(bbox=(0, 0, 99, 400))], texts=texts
    )


def test_a_linked_balloon_is_recorded_from_its_page_local_id() -> None:
    local = _page("char1", None, kind="speech")
    linked = _page("char3", "char3")
    added = with_page(BookCharacters(), local, linked)
    (character,) = added.characters
    # The page's own id where it had one; the book's where the page had none (a caption the linker made speech).
    assert character.id == "char3" and character.sources == [
        CharacterSource(page=0, speaker="char1", regions=1),
        CharacterSource(page=0, speaker="char3", regions=1),
    ]


def test_lines_taken_back_link_no_balloon() -> None:
    book = CharacterBook(link=False)
    page = _page("char1", "char2")
    book.add_page(page)
    moved = ScriptLine(id="p001-t02", page=0, panel=0, speaker="char1", kind="speech", text="はい")
    before = book.characters.get("char1").sources  # type: ignore[union-attr]
    book.add_lines([moved], removed=True, reading=page)
    assert book.characters.get("char1").sources == before  # type: ignore[union-attr]
    book.add_lines([moved], reading=page)  # counted: the second balloon is now linked to char1 too
    assert book.characters.get("char1").sources == [  # type: ignore[union-attr]
        *before,
        CharacterSource(page=0, speaker="char2", regions=1),
    ]


def test_a_character_keeps_the_first_attributes_any_page_gave() -> None:
    book = CharacterBook(link=False)
    first = _page("pepper").model_copy(
        update={"characters": [Character(id="pepper", name="Pepper", gender="female", nature="human")]}
    )
    book.add_page(first)
    later = _page("pepper").model_copy(
        update={
            "page": 1,
            "characters": [Character(id="pepper", name="Peppa", gender="male", age="young", nature="unknown")],
        }
    )
    book.add_page(later)
    pepper = book.characters.get("pepper")
    assert pepper is not None
    # Name, gender and nature as the first page gave them (a later "unknown" erases nothing); the age, which the
    # first page did not give, from the later one.
    assert (pepper.name, pepper.gender, pepper.age, pepper.nature) == ("Pepper", "female", "young", "human")


def test_a_moved_line_links_its_own_page_s_balloon_by_this_page_s_id() -> None:
    book = CharacterBook(link=False)
    first = _page("char1", "char2")
    book.add_page(first)
    second = _page("char1", "char2").model_copy(update={"page": 1})
    book.add_page(second)
    # char2's balloon of page 2 given to char1 by an edited script: linked as page 2's own id for it.
    moved = ScriptLine(id="p002-t02", page=1, panel=0, speaker="char1", kind="speech", text="はい")
    book.add_lines([moved], reading=second)
    char1 = book.characters.get("char1")
    assert char1 is not None and char1.sources[-1] == CharacterSource(page=1, speaker="char2", regions=1)
    # A line of another page, and a line added by hand (no balloon of its own), link nothing here.
    before = char1.sources
    other_page = moved.model_copy(update={"id": "p001-t02", "page": 0})
    by_hand = moved.model_copy(update={"id": "p002-n01"})
    book.add_lines([other_page, by_hand], reading=second)
    assert book.characters.get("char1").sources == before  # type: ignore[union-attr]


def test_readings_without_lines_give_each_speaker_the_gender_their_balloons_mark() -> None:
    page = _page("char1", "char2")
    texts = [
        page.texts[0].model_copy(update={"text": "俺が行く"}),
        page.texts[1].model_copy(update={"text": "そうなのよ", "kind": "caption"}),  # narration says nothing
    ]
    characters = book_characters_of([page.model_copy(update={"texts": texts})])
    assert [(c.id, c.gender, c.lines) for c in characters.characters] == [
        ("char1", "male", 1),
        ("char2", "unknown", 1),
    ]


def test_a_moved_balloon_is_named_by_the_id_its_own_page_gave_it() -> None:
    # char2 was "x" on page 1 and "y" on page 2 (an LLM's names, linked to one book id).
    characters = BookCharacters(
        characters=[
            BookCharacter(id="char1", first_page=0, sources=[CharacterSource(page=0, speaker="z", regions=1)]),
            BookCharacter(
                id="char2",
                first_page=0,
                sources=[
                    CharacterSource(page=0, speaker="x", regions=1),
                    CharacterSource(page=1, speaker="y", regions=1),
                ],
            ),
        ]
    )
    second = _page("char1", "char2").model_copy(update={"page": 1})
    moved = ScriptLine(id="p002-t02", page=1, panel=0, speaker="char1", kind="speech", text="はい")
    char1 = with_reattributed(characters, [moved], second).get("char1")
    assert char1 is not None and char1.sources[-1] == CharacterSource(page=1, speaker="y", regions=1)


def test_a_script_s_lines_are_counted_page_by_page_in_book_order() -> None:
    pages = [_page("char1", "char1"), _page("char1").model_copy(update={"page": 1})]
    lines = [
        ScriptLine(id="p002-t01", page=1, panel=0, speaker="char1", kind="speech", text="俺だ"),
        ScriptLine(id="p001-t01", page=0, panel=0, speaker="char1", kind="speech", text="そうかしら"),
    ]
    characters = book_characters_of(pages, lines)
    (char1,) = characters.characters
    # The script's two lines, not the readings' three balloons; the gender of page 1's line, the first page.
    assert (char1.lines, char1.gender) == (2, "female")
