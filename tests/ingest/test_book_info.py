"""What inputs say about their book: ComicInfo.xml in the manga sample's CBZ and beside a folder's pages (with
chapter bookmarks), a PDF's information and outline, and a broken ComicInfo.xml named in one line."""

from __future__ import annotations

import shutil
import zipfile
from pathlib import Path

import pytest
from pypdf import PdfWriter

from comic_narrator.errors import InputError
from comic_narrator.ingest.book_info import Chapter, read_book_info
from tests.conftest import SAMPLE_PAGE

MANGA = Path(__file__).parents[2] / "samples" / "blackjack-ni-yoroshiku-v01-p08-11.cbz"


def test_the_manga_samples_comic_info_gives_title_credits_and_notes() -> None:
    info = read_book_info(MANGA)
    assert info.title == "ブラックジャックによろしく (Black Jack ni Yoroshiku)"
    assert info.artist == "佐藤秀峰 (Shuho Sato)", "writer and penciller are one person, named once"
    assert info.credits == (
        ("Writer & Art", "佐藤秀峰 (Shuho Sato)"),
        ("Publisher", "Manga on Web (Sato Manga Seisakusho)"),
    )
    assert info.notes is not None and "free for any secondary use" in info.notes
    assert info.chapters == ()


def test_a_folders_comic_info_gives_chapter_bookmarks(tmp_path: Path) -> None:
    for number in (1, 2, 3):
        shutil.copy(SAMPLE_PAGE, tmp_path / f"p{number}.jpg")
    (tmp_path / "ComicInfo.xml").write_text(
        """<?xml version="1.0"?>
<ComicInfo xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance">
  <Series>Pepper&amp;Carrot</Series><Number>17</Number><Title>A Fresh Start</Title>
  <Writer>David Revoy</Writer><Translator>Alex Gryson</Translator><Web>https://www.peppercarrot.com</Web>
  <Pages><Page Image="0" Bookmark="Departure"/><Page Image="1"/><Page Image="2" Bookmark=" The storm "/></Pages>
</ComicInfo>""",
        encoding="utf-8",
    )
    info = read_book_info(tmp_path)
    assert info.title == "Pepper&Carrot: A Fresh Start"
    assert info.credits == (
        ("Writer", "David Revoy"),
        ("Translation", "Alex Gryson"),
        ("Web", "https://www.peppercarrot.com"),
    )
    assert info.chapters == (Chapter(1, "Departure"), Chapter(3, "The storm"))


def test_a_pdfs_information_and_top_level_outline(tmp_path: Path) -> None:
    writer = PdfWriter()
    for _ in range(5):
        writer.add_blank_page(width=200, height=300)
    writer.add_outline_item(title="Prologue", page_number=0)
    part = writer.add_outline_item(title="Part Two", page_number=3)
    writer.add_outline_item(title="A section", page_number=4, parent=part)
    writer.add_metadata({"/Title": "The Book", "/Author": "Ann Artist"})
    pdf = tmp_path / "book.pdf"
    writer.write(pdf)
    info = read_book_info(pdf)
    assert (info.title, info.artist) == ("The Book", "Ann Artist")
    assert info.chapters == (Chapter(1, "Prologue"), Chapter(4, "Part Two"))


def test_a_lone_image_says_nothing() -> None:
    info = read_book_info(SAMPLE_PAGE)
    assert (info.title, info.credits, info.chapters) == (None, (), ())


def test_a_broken_comic_info_is_one_clear_error(tmp_path: Path) -> None:
    shutil.copy(SAMPLE_PAGE, tmp_path / "p1.jpg")
    (tmp_path / "ComicInfo.xml").write_text("<ComicInfo><Title>Unclosed</ComicInfo>", encoding="utf-8")
    with pytest.raises(InputError, match=r"ComicInfo\.xml is not well-formed XML") as raised:
        read_book_info(tmp_path)
    assert "ComicInfo.xml" in str(raised.value.path)


def _oversized_comic_info() -> str:
    """A well-formed ComicInfo.xml with a title, padded past the 1 MiB that is read."""
    return "<ComicInfo><Title>Padded</Title><Notes>" + "x" * (1 << 20) + "</Notes></ComicInfo>"


def test_a_folder_or_archive_without_comic_info_says_nothing(tmp_path: Path) -> None:
    folder = tmp_path / "pages"
    folder.mkdir()
    shutil.copy(SAMPLE_PAGE, folder / "p1.jpg")
    assert read_book_info(folder) == read_book_info(SAMPLE_PAGE)
    archive = tmp_path / "book.cbz"
    with zipfile.ZipFile(archive, "w") as out:
        out.write(SAMPLE_PAGE, "p1.jpg")
    assert read_book_info(archive) == read_book_info(SAMPLE_PAGE)


def test_a_comic_info_over_one_mib_is_not_read(tmp_path: Path) -> None:
    folder = tmp_path / "pages"
    folder.mkdir()
    shutil.copy(SAMPLE_PAGE, folder / "p1.jpg")
    (folder / "ComicInfo.xml").write_text(_oversized_comic_info(), encoding="utf-8")
    assert read_book_info(folder).title is None
    archive = tmp_path / "book.cbz"
    with zipfile.ZipFile(archive, "w") as out:
        out.write(SAMPLE_PAGE, "p1.jpg")
        out.writestr("ComicInfo.xml", _oversized_comic_info())
    assert read_book_info(archive).title is None
    # the same file within the limit is read: the size is what keeps it out
    with zipfile.ZipFile(tmp_path / "small.cbz", "w") as out:
        out.writestr("ComicInfo.xml", "<ComicInfo><Title>Padded</Title></ComicInfo>")
    assert read_book_info(tmp_path / "small.cbz").title == "Padded"
