"""The review's edit rules (web/edits.py) one by one, each through the review server on loopback over a copy of a
real narrated book (the sample page twice, tests/web/conftest.py): what a save accepts and writes, the order it
puts the lines in, the ids it gives new lines, the limits it holds a line to, the voices it pins and reads back,
and a reading that does not match the book."""

from __future__ import annotations

import json

import pytest
import yaml

from comic_narrator.artifacts import ScriptLine
from comic_narrator.web.edits import EditError, parse_edit
from tests.web.conftest import Served

pytestmark = pytest.mark.slow
MIB = 1024 * 1024


def _lines(served: Served) -> list[dict[str, object]]:
    """The run's script lines as the page sends them."""
    return [line.model_dump() for line in served.script().lines]


def test_the_script_as_it_stands_is_saved_with_the_cast_file_and_nothing_else(served: Served) -> None:
    before = served.script()
    assert len({line.page for line in before.lines}) == 2, "lines on both pages of the book"
    status, message = served.save({"lines": _lines(served), "voices": {}})
    assert status == 200, message
    assert message == f"saved {len(before.lines)} line(s), 0 voice(s): script.json, review-cast.yaml"
    assert served.script() == before
    assert yaml.safe_load((served.work / "review-cast.yaml").read_text(encoding="utf-8")) == {}
    assert not (served.work / "review-reading.json").exists(), "no panels fixed: no reading of the review's own"


def test_the_voices_saved_are_what_the_page_gets_back(served: Served) -> None:
    status, book = served.ask("GET", "/api/book")
    assert status == 200
    cast = json.loads((served.work / "cast.json").read_text(encoding="utf-8"))
    assert book["voices"] == {m["character"]: m["voice"] for m in cast["members"]}, "no review saved yet: the cast's"
    bank = [voice["id"] for voice in book["bank"]]
    speaker = served.script().lines[0].speaker
    chosen = {speaker: next(v for v in bank if v != book["voices"][speaker]), "narrator": bank[-1]}
    status, message = served.save({"lines": _lines(served), "voices": chosen})
    assert status == 200 and message.startswith(f"saved {len(served.script().lines)} line(s), 2 voice(s)"), message
    assert yaml.safe_load((served.work / "review-cast.yaml").read_text(encoding="utf-8")) == chosen
    assert served.ask("GET", "/api/book")[1]["voices"] == {**book["voices"], **chosen}
    status, message = served.save({"lines": _lines(served), "voices": {speaker: "no-such-voice"}})
    assert status == 400 and message == f"{speaker}: unknown voice 'no-such-voice' (`comic-narrator voices` lists them)"
    assert yaml.safe_load((served.work / "review-cast.yaml").read_text(encoding="utf-8")) == chosen


def test_a_voice_for_a_speaker_with_no_line_left_is_not_pinned(served: Served) -> None:
    lines = _lines(served)
    speaker = str(lines[0]["speaker"])
    # The review gives the second page's lines to somebody else and drops what is left of the first speaker's.
    kept = [{**line, "speaker": "char9"} if line["page"] == 1 else line for line in lines]
    kept = [line for line in kept if line["speaker"] != speaker]
    assert kept and len(kept) < len(lines)
    voice = served.ask("GET", "/api/book")[1]["bank"][0]["id"]
    status, message = served.save({"lines": kept, "voices": {speaker: voice, "narrator": voice}})
    assert status == 200, message
    assert yaml.safe_load((served.work / "review-cast.yaml").read_text(encoding="utf-8")) == {"narrator": voice}
    # Nor is a voice the bank lacks refused for such a speaker: there is nothing to voice with it.
    status, message = served.save({"lines": kept, "voices": {speaker: "no-such-voice"}})
    assert status == 200, message


def test_lines_are_said_page_by_page_and_panel_by_panel_and_in_the_order_sent_within_a_panel(served: Served) -> None:
    lines = _lines(served)
    status, message = served.save({"lines": lines[::-1]})
    assert status == 200, message
    saved = [line.id for line in served.script().lines]
    by_place = sorted(lines[::-1], key=lambda line: (line["page"], line["panel"]))
    assert saved == [line["id"] for line in by_place] != [line["id"] for line in lines]


def test_a_line_may_be_over_the_whole_page_or_on_the_last_panel_and_nowhere_else(served: Served) -> None:
    lines = _lines(served)
    panels = len(served.reading().pages[0].panels)
    first = {**lines[0], "page": 0}
    for panel in (-1, panels - 1):
        status, message = served.save({"lines": [{**first, "panel": panel}]})
        assert status == 200, (panel, message)
        assert served.script().lines[0].panel == panel
    for panel in (-2, panels):
        status, message = served.save({"lines": [{**first, "panel": panel}]})
        assert status == 400 and message == (
            f"line 1: page 1 has panels 1..{panels} (0 = the whole page); got {panel + 1}"
        ), message


def test_new_lines_get_the_first_free_id_of_their_page(served: Served) -> None:
    lines = _lines(served)
    second_page = [line for line in lines if line["page"] == 1]
    renamed = {**second_page[0], "id": "p002-n01"}  # a kept line already holds the first new id of page 2
    added = {"page": 1, "panel": second_page[0]["panel"], "speaker": "narrator", "text": "Meanwhile, far below."}
    edit = [renamed, {**added, "id": ""}, added, {**added, "page": 0, "panel": -1}]
    status, message = served.save({"lines": edit})
    assert status == 200, message
    ids = {(line.page, line.text, line.id) for line in served.script().lines}
    assert {(1, "Meanwhile, far below.", "p002-n02"), (1, "Meanwhile, far below.", "p002-n03")} < ids
    assert (0, "Meanwhile, far below.", "p001-n01") in ids
    assert (1, second_page[0]["text"], "p002-n01") in ids


def test_a_line_sent_without_a_pause_gets_the_scripts_own_and_a_pause_is_0_to_5_seconds(served: Served) -> None:
    first = {key: value for key, value in _lines(served)[0].items() if key != "pause_after_s"}
    assert served.save({"lines": [first]})[0] == 200
    assert served.script().lines[0].pause_after_s == ScriptLine.model_fields["pause_after_s"].default
    for pause in (0.0, 5.0):
        assert served.save({"lines": [{**first, "pause_after_s": pause}]})[0] == 200
        assert served.script().lines[0].pause_after_s == pause
    for pause in (-0.01, 5.01):
        status, message = served.save({"lines": [{**first, "pause_after_s": pause}]})
        assert status == 400 and "first at lines.0.pause_after_s" in message, (pause, message)


def test_the_text_is_tidied_and_at_most_2000_characters(served: Served) -> None:
    first = _lines(served)[0]
    status, message = served.save({"lines": [{**first, "text": "  Off\n\twe   go!  "}]})
    assert status == 200, message
    assert served.script().lines[0].text == "Off we go!"
    longest = "a" * 1999 + "!"
    assert served.save({"lines": [{**first, "text": f"  {longest}\n"}]})[0] == 200
    assert served.script().lines[0].text == longest
    status, message = served.save({"lines": [{**first, "text": longest + "!"}]})
    assert status == 400 and message == "line 1: the text has 2001 characters; at most 2000", message


def test_a_body_that_is_no_edit_at_all_is_placed_at_the_top_level(served: Served) -> None:
    for body in (b"{not json", b"[]"):
        status, answer = served.ask("POST", "/api/save", body)
        assert status == 400 and "first at (top level)" in str(answer["error"]), (body, answer)


def test_an_edit_of_4_mib_is_saved_and_one_byte_more_is_refused_before_it_is_read(served: Served) -> None:
    edit = json.dumps({"lines": _lines(served)}).encode("utf-8")
    padded = edit + b" " * (4 * MIB - len(edit))
    assert parse_edit(padded).lines == parse_edit(edit).lines
    with pytest.raises(EditError, match=f"the edit is {4 * MIB + 1} bytes; at most {4 * MIB} are accepted"):
        parse_edit(padded + b" ")
    status, answer = served.ask("POST", "/api/save", padded)
    assert status == 200 and str(answer["message"]).startswith(f"saved {len(served.script().lines)} line(s)"), answer


def test_panels_fixed_over_a_reading_short_of_the_book_are_refused_and_nothing_is_written(served: Served) -> None:
    reading = json.loads((served.work / "reading.json").read_text(encoding="utf-8"))
    assert len(reading["pages"]) == 2
    reading["pages"] = reading["pages"][:1]
    (served.work / "reading.json").write_text(json.dumps(reading), encoding="utf-8")
    served.session.reload()
    before = {p.name: p.read_bytes() for p in served.work.iterdir() if p.is_file()}
    page = served.reading().pages[0]
    panels = [{"bbox": list(panel.bbox), "was": i} for i, panel in enumerate(page.panels)]
    lines = [line for line in _lines(served) if line["page"] == 0]
    status, message = served.save({"lines": lines, "panels": {"0": panels}})
    assert status == 400 and message == "the reading holds 1 page(s) but the book has 2", message
    assert {p.name: p.read_bytes() for p in served.work.iterdir() if p.is_file()} == before


def test_a_speaker_id_is_up_to_40_letters_digits_or_marks(served: Served) -> None:
    first = _lines(served)[0]
    longest = "Shichimi_2." + "x" * 29
    assert served.save({"lines": [{**first, "speaker": longest}]})[0] == 200
    assert served.script().lines[0].speaker == longest
    for speaker in (longest + "x", "-shichimi", "", "Shichimi Sensei"):
        status, message = served.save({"lines": [{**first, "speaker": speaker}]})
        assert status == 400 and message.startswith(f"line 1: speaker {speaker!r} is not an id"), (speaker, message)
