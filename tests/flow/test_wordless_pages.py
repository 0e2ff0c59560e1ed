"""A page with no lettering reads the way its book does. Read alone, a wordless page of a Japanese manga has
nothing to say it reads right to left; once the book's language is known, the narrated run, `read` and `eval`
order its panels right to left. Real: Black Jack ni Yoroshiku vol. 1 p. 42 (lettered) and p. 43 (three panels, no
words but the publisher's mark) from ../shared/training, the local reader with rapidocr."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from comic_narrator.artifacts import PageReading, Panel, TextRegion
from comic_narrator.backends.rapidocr_engine import RapidOcrEngine
from comic_narrator.cli import main
from comic_narrator.config import RunConfig, VisionConfig, VoiceConfig
from comic_narrator.flow.engines import Engines
from comic_narrator.flow.executor import LocalExecutor
from comic_narrator.flow.stream import stream_pages
from comic_narrator.pipeline import load_or_ingest
from comic_narrator.reading.reader import follow_book_direction
from tests.conftest import REPO

MANGA = REPO.parent / "shared" / "training" / "blackjack-ni-yoroshiku" / "vol01"


def _row(texts: list[TextRegion]) -> PageReading:
    """Three panels side by side, read left to right, the middle one holding ``texts``."""
    panels = [Panel(bbox=(x, 10, 90, 200)) for x in (10, 110, 210)]
    return PageReading(page=3, width=310, height=220, reading_direction="ltr", panels=panels, texts=texts)


def test_a_wordless_page_of_a_japanese_book_reads_right_to_left() -> None:
    mark = TextRegion(bbox=(5, 212, 40, 8), kind="furniture", text="漫画onWeb", panel=-1)
    bang = TextRegion(bbox=(130, 50, 20, 20), kind="sound", text="!!", panel=1)
    auto = VisionConfig()
    turned = follow_book_direction(_row([bang, mark]), "ja", auto, None)
    assert turned.reading_direction == "rtl"
    assert [p.bbox[0] for p in turned.panels] == [210, 110, 10]
    assert [(t.text, t.panel) for t in turned.texts] == [("!!", 1), ("漫画onWeb", -1)]
    # The first panel's lettering follows its panel to the end of the order.
    first = TextRegion(bbox=(20, 50, 20, 20), kind="sound", text="…", panel=0)
    assert [(t.text, t.panel) for t in follow_book_direction(_row([first]), "ja", auto, None).texts] == [("…", 2)]
    # Anything else that decided the direction, or story lettering, or an English book: left as read.
    page = _row([bang, mark])
    lettered = _row([TextRegion(bbox=(130, 50, 20, 20), kind="speech", text="Wait!", panel=1)])
    assert follow_book_direction(page, "en", auto, None) is page
    assert follow_book_direction(lettered, "ja", auto, None) is lettered
    assert follow_book_direction(page, "ja", VisionConfig(layout="western"), None) is page
    assert follow_book_direction(page, "ja", VisionConfig(lang="en"), None) is page
    assert follow_book_direction(page, "ja", auto, False) is page  # ComicInfo says it is no manga
    llm = page.model_copy(update={"vision": "llm:model"})
    assert follow_book_direction(llm, "ja", auto, None) is llm


@pytest.fixture(scope="module")
def two_pages(tmp_path_factory: pytest.TempPathFactory) -> Path:
    if not (MANGA / "bj01_000043.jpg").is_file():
        pytest.skip(f"{MANGA} is absent (../shared/training): the wordless manga page comes from it")
    folder = tmp_path_factory.mktemp("bj") / "pages"
    folder.mkdir()
    for n in (42, 43):
        shutil.copy(MANGA / f"bj01_{n:06d}.jpg", folder / f"p{n}.jpg")
    return folder


def _rtl_row_order(reading: PageReading) -> bool:
    """The wordless page's three panels: the big one on top, then the lower two right first."""
    lower = [p.bbox for p in reading.panels[1:]]
    return len(reading.panels) == 3 and lower[0][0] > lower[1][0]


def test_a_narrated_run_and_read_order_the_wordless_page_as_the_book(
    two_pages: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    work = tmp_path / "work"
    run = RunConfig(two_pages, tmp_path / "out.mp4", work, voice=VoiceConfig(quality="fast"), vision_only=True)
    book = load_or_ingest(two_pages, run.ingest, work)
    with RapidOcrEngine() as ocr:
        streamed = stream_pages(book, run, Engines(ocr=ocr, bank=None), LocalExecutor(run, None))
    lettered, wordless = streamed.reading.pages
    assert streamed.reading.lang == "ja" and lettered.reading_direction == "rtl"
    assert wordless.reading_direction == "rtl" and _rtl_row_order(wordless)
    # The page's own reading, as cached, stays what the page alone says.
    (cached_file,) = (work / "readings").glob("page-0002.*.json")
    assert json.loads(cached_file.read_text(encoding="utf-8"))["reading_direction"] == "ltr"

    assert main(["read", str(two_pages), "--json", "--work-dir", str(work)]) == 0
    printed = json.loads(capsys.readouterr().out)
    assert [p["reading_direction"] for p in printed["pages"]] == ["rtl", "rtl"]
    assert [p["bbox"] for p in printed["pages"][1]["panels"]] == [list(p.bbox) for p in wordless.panels]


def test_eval_scores_the_wordless_page_in_the_books_order(two_pages: Path, tmp_path: Path) -> None:
    """`eval` reads a folder as one book: p. 43's panels in manga order (they were scored left to right)."""
    from comic_narrator.reading.evaluate import evaluate_folder

    held_out = json.loads((REPO / "training" / "eval" / "blackjack-vol01-p41-60" / "gt.json").read_text("utf-8"))
    pages = [p for p in held_out["pages"] if p["image"] in ("bj01_000042.jpg", "bj01_000043.jpg")]
    (tmp_path / "gt.json").write_text(json.dumps({**held_out, "image_dir": str(MANGA), "pages": pages}), "utf-8")
    with RapidOcrEngine() as ocr:
        summary = evaluate_folder(tmp_path, ocr, VisionConfig())
    assert [s.panel_order_exact for s in summary.page_scores] == [True, True]
    assert summary.order_exact_rate == 1.0
