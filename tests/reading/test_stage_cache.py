"""The reading stage's page cache as a user's work folder meets it: a stored page damaged after the ingest."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from comic_narrator.cli import main
from tests.conftest import SAMPLE_PAGE


def test_a_damaged_stored_page_is_named_with_what_to_do(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    work = tmp_path / "w"
    assert main(["read", str(SAMPLE_PAGE), "-q", "--work-dir", str(work)]) == 0
    stored = work / "pages" / "page-0001.png"
    assert stored.is_file()
    # The reading is cached: a second read never opens the stored page, so its damage goes unnoticed ...
    stored.write_bytes(b"\x89PNG\r\n\x1a\n" + b"\0" * 64)
    assert main(["read", str(SAMPLE_PAGE), "-q", "--work-dir", str(work)]) == 0
    # ... until the page must be read again: one line naming the stored file and the way out, no traceback.
    shutil.rmtree(work / "readings")
    capsys.readouterr()
    assert main(["read", str(SAMPLE_PAGE), "-q", "--work-dir", str(work)]) == 2
    err = capsys.readouterr().err
    assert f"{stored}: stored page image is unreadable; delete the work folder and re-run" in err
    assert "Traceback" not in err


def test_new_panel_weights_make_every_page_be_read_again(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # The local reading's cache key holds the reader's code and the segmenter's weights: a package upgrade that
    # ships new weights (same code) must not keep the old weights' panels.
    from comic_narrator.reading import panel_model, stage

    shipped = panel_model.model_path()
    assert shipped is not None
    retrained = tmp_path / shipped.name
    retrained.write_bytes(shipped.read_bytes() + b"\0")
    stage.reader_fingerprint.cache_clear()
    try:
        before = stage.reader_fingerprint()
        monkeypatch.setattr(panel_model, "model_path", lambda: retrained)
        stage.reader_fingerprint.cache_clear()
        assert stage.reader_fingerprint() != before
        monkeypatch.setattr(panel_model, "model_path", lambda: None)
        stage.reader_fingerprint.cache_clear()
        assert stage.reader_fingerprint() != before
    finally:
        stage.reader_fingerprint.cache_clear()


def test_a_new_kanji_table_makes_every_page_be_read_again(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # The table of Chinese glyphs put back as Japanese kanji is data, not code: a changed table must still change
    # the key, or a Japanese page would keep the old reading's characters.
    from comic_narrator.reading import lettering, stage

    changed = tmp_path / lettering.KANJI_TABLE.name
    changed.write_text(lettering.KANJI_TABLE.read_text(encoding="utf-8") + "\u4e2a\t\u500b\n", encoding="utf-8")
    stage.reader_fingerprint.cache_clear()
    try:
        before = stage.reader_fingerprint()
        monkeypatch.setattr(lettering, "KANJI_TABLE", changed)
        stage.reader_fingerprint.cache_clear()
        assert stage.reader_fingerprint() != before
    finally:
        stage.reader_fingerprint.cache_clear()


def test_a_reader_crash_on_one_page_is_a_warning_and_the_rest_is_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # A reader bug on one odd page (here injected on the second of two copies of the sample) must not lose the
    # book: `read` warns with the page and the error, shows that page unread, and reads the others.
    from comic_narrator.reading import reader

    book = tmp_path / "book"
    book.mkdir()
    for name in ("01.jpg", "02.jpg"):
        shutil.copy(SAMPLE_PAGE, book / name)
    real = reader.read_page

    def odd_page(image, page, **kwargs):  # type: ignore[no-untyped-def]
        if page.index == 1:
            raise RuntimeError("an odd page")
        return real(image, page, **kwargs)

    monkeypatch.setattr(reader, "read_page", odd_page)
    assert main(["read", str(book), "--json", "--work-dir", str(tmp_path / "w")]) == 0
    out = capsys.readouterr()
    pages = json.loads(out.out)["pages"]
    assert [len(p["panels"]) for p in pages] == [5, 0]
    assert "warning: page 2 (" in out.err and "reading failed: RuntimeError('an odd page')" in out.err


@pytest.mark.parametrize(("language", "direction"), [("ja", "rtl"), ("en", "ltr")])
def test_comic_info_says_the_language_a_wordless_book_cannot(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], language: str, direction: str
) -> None:
    # Two wordless pages of panels: nothing to tell the language by but ComicInfo's LanguageISO, which stands in
    # for --lang auto (a Japanese book's wordless pages then read right to left).
    from PIL import Image

    from tests.reading.synthetic import PanelSpec, draw_page

    book = tmp_path / "book"
    book.mkdir()
    tiers = [PanelSpec((30, 30, 455, 640), (), ()), PanelSpec((515, 30, 455, 640), (), ())]
    for name in ("01.png", "02.png"):
        Image.fromarray(draw_page(tiers)).save(book / name)
    (book / "ComicInfo.xml").write_text(f"<ComicInfo><LanguageISO>{language}</LanguageISO></ComicInfo>")
    assert main(["read", str(book), "--json", "--work-dir", str(tmp_path / "w")]) == 0
    reading = json.loads(capsys.readouterr().out)
    assert reading["lang"] == language
    assert [p["reading_direction"] for p in reading["pages"]] == [direction, direction]
    first = reading["pages"][0]["panels"][0]["bbox"]
    assert (first[0] > 500) == (direction == "rtl")  # the right-hand panel first in a manga
