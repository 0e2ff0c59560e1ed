"""The review session's own rules (web/review.py) one by one, through the review server on loopback over a copy of
a real narrated book (the sample page twice, tests/web/conftest.py): what the page starts from (title, voices of
the book's language, whether it may render), which lines it will voice, and when a save keeps the panels."""

from __future__ import annotations

import json

import pytest
import soundfile

from tests.web.conftest import Served

pytestmark = pytest.mark.slow


def _clip(served: Served, line: dict[str, object], voice: str) -> tuple[int, str]:
    """POST one line to voice; the status and the clip's path or the error."""
    status, answer = served.ask("POST", "/api/clip", json.dumps({"line": line, "voice": voice}).encode("utf-8"))
    return status, str(answer.get("url", answer.get("error")))


def _voice(served: Served) -> str:
    return str(served.ask("GET", "/api/book")[1]["bank"][0]["id"])


def test_the_page_starts_from_the_books_name_and_voices_of_its_language_only(served: Served) -> None:
    status, book = served.ask("GET", "/api/book")
    assert status == 200
    assert book["title"] == "book", "the folder the pages came from (tests/web/conftest.py names it)"
    assert book["lang"] == "en" and book["bank"], "the English voices are offered"
    assert {voice["language"] for voice in book["bank"]} == {"en"}


def test_a_review_started_without_an_output_neither_offers_nor_runs_a_render(served: Served) -> None:
    assert served.ask("GET", "/api/book")[1]["can_render"] is False
    status, answer = served.ask("POST", "/api/render", b"")
    assert status == 400 and answer["error"] == "this review was started without an output to render"


def test_a_line_is_voiced_only_with_a_known_voice_a_speaker_id_and_some_text(served: Served) -> None:
    line = served.script().lines[0].model_dump()
    voice = _voice(served)
    assert _clip(served, line, "no-such-voice") == (
        400,
        "unknown voice 'no-such-voice' (`comic-narrator voices` lists them)",
    )
    refusal = "a line to play needs a speaker id and some text"
    assert _clip(served, {**line, "speaker": "Mr Smith!"}, voice) == (400, refusal)
    assert _clip(served, {**line, "text": "  \n "}, voice) == (400, refusal)
    status, answer = served.ask("POST", "/api/clip", json.dumps({"line": line}).encode("utf-8"))
    assert (status, answer["error"]) == (400, "not a valid line to play: Field required")
    assert not (served.work / "clips" / "preview").exists()


def test_a_speaker_not_in_the_cast_is_voiced_in_the_voice_chosen(served: Served) -> None:
    line = served.script().lines[0].model_dump()
    cast = json.loads((served.work / "cast.json").read_text(encoding="utf-8"))
    assert "char99" not in {member["character"] for member in cast["members"]}
    status, url = _clip(
        served, {**line, "id": "", "speaker": "char99", "text": "Nobody in the cast says this."}, _voice(served)
    )
    assert status == 200 and url.startswith("/files/clips/") and url.endswith(".wav"), url
    assert (served.work / url.removeprefix("/files/")).read_bytes()[:4] == b"RIFF"


def test_panels_saved_once_are_kept_by_every_later_save_and_only_then(served: Served) -> None:
    lines = [line.model_dump() for line in served.script().lines]
    status, message = served.save({"lines": lines})
    assert status == 200 and message.endswith("voice(s): script.json, review-cast.yaml"), message
    assert not (served.work / "review-reading.json").exists()
    page = served.reading().pages[0]
    panels = [{"bbox": list(panel.bbox), "was": i} for i, panel in enumerate(page.panels)][::-1]
    moved = {i: len(page.panels) - 1 - i for i in range(len(page.panels))}
    for line in lines:
        if line["page"] == 0 and line["panel"] != -1:
            line["panel"] = moved[int(line["panel"])]  # type: ignore[call-overload]
    status, message = served.save({"lines": lines, "panels": {"0": panels}})
    assert status == 200 and message.endswith("and the panels: script.json, review-cast.yaml, review-reading.json")
    status, message = served.save({"lines": lines})
    assert status == 200 and message.endswith("and the panels: script.json, review-cast.yaml, review-reading.json")
    status, book = served.ask("GET", "/api/book")
    assert [tuple(p) for p in book["pages"][0]["panels"]] == [page.panels[i].bbox for i in range(len(page.panels))][
        ::-1
    ]


def test_a_line_is_previewed_at_its_own_speakers_pinned_speed(served: Served) -> None:
    cast_file = served.work / "cast.json"
    cast = json.loads(cast_file.read_text(encoding="utf-8"))
    speakers = [member["character"] for member in cast["members"]]
    assert speakers[0] == "narrator" and "char1" in speakers
    for member in cast["members"]:
        member["speed"] = 1.4 if member["character"] == "char1" else 1.0
    cast_file.write_text(json.dumps(cast), encoding="utf-8")
    served.session.reload()
    line = {**served.script().lines[0].model_dump(), "text": "The same words, said by two people."}
    voice = _voice(served)
    urls = {}
    for speaker in ("char1", "narrator"):
        status, urls[speaker] = _clip(served, {**line, "speaker": speaker}, voice)
        assert status == 200, urls[speaker]
    seconds = {s: soundfile.info(str(served.work / url.removeprefix("/files/"))).duration for s, url in urls.items()}
    assert seconds["char1"] < seconds["narrator"] * 0.9, seconds
