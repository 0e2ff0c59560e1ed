"""The stage table says where every artifact of a run is kept and what each cache key is made of: checked against
the files a real run leaves, and each key against changes of what it declares and of what it must ignore."""

from __future__ import annotations

import fnmatch
import shutil
from dataclasses import replace
from pathlib import Path

import pytest

from comic_narrator.artifacts import Book, BookReading, PageImage, PageReading
from comic_narrator.backends.protocols import Delivery
from comic_narrator.cli import main
from comic_narrator.config import IngestConfig, LlmConfig, VisionConfig, VoiceConfig
from comic_narrator.flow.stages import RUN_RECORDS, STAGES, book_key, script_key, stage
from comic_narrator.reading import llm_reader
from comic_narrator.reading.stage import llm_reading_key, local_reading_key
from comic_narrator.voice.synthesis import clip_cache_key
from comic_narrator.workdir import read_artifact
from tests.conftest import SAMPLE_PAGE


def test_every_stage_resolves_to_its_function_and_key() -> None:
    assert len({s.name for s in STAGES}) == len(STAGES)
    for entry in STAGES:
        function, key = entry.resolve()
        assert callable(function)
        assert (key is None) == (entry.key is None) == (not entry.key_parts), entry.name
        assert entry.stored, entry.name


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("stages")
    out = folder / "out.mp4"
    argv = [str(SAMPLE_PAGE), "-o", str(out), "--voice-quality", "fast", "--draft", "--preset", "ultrafast", "-q"]
    assert main(argv) == 0
    return folder / "out.mp4.work"


def test_a_real_run_keeps_only_what_the_table_names(run_dir: Path) -> None:
    files = [p.relative_to(run_dir).as_posix() for p in run_dir.rglob("*") if p.is_file()]
    assert len(files) > 10
    unclaimed = [
        f for f in files if f not in RUN_RECORDS and not any(fnmatch.fnmatch(f, g) for s in STAGES for g in s.stored)
    ]
    assert unclaimed == []
    # ... and every stage that ran left what the table says (the LLM reader did not run: --vision local).
    for entry in STAGES:
        found = [f for f in files if any(fnmatch.fnmatch(f, g) for g in entry.stored)]
        assert bool(found) == (entry.name != "read-llm"), (entry.name, found)


def test_the_reading_key_is_the_one_the_run_stored_under(run_dir: Path) -> None:
    book = read_artifact(run_dir / "book.json", Book)
    from comic_narrator.backends.rapidocr_engine import RapidOcrEngine

    key = local_reading_key(book, book.pages[0], VisionConfig(), RapidOcrEngine().name)
    assert (run_dir / "readings" / f"page-0001.{key}.json").is_file()


def test_book_key_follows_the_input_bytes_and_the_ingest_options(tmp_path: Path) -> None:
    page = tmp_path / "page.jpg"
    shutil.copy(SAMPLE_PAGE, page)
    base = book_key(page, IngestConfig())
    assert book_key(page, IngestConfig()) == base
    assert book_key(page, IngestConfig(pages="1")) != base
    page.write_bytes(page.read_bytes() + b"\0")
    assert book_key(page, IngestConfig()) != base


def _reading(run_dir: Path) -> BookReading:
    return read_artifact(run_dir / "reading.json", BookReading)


def test_script_key_follows_the_voice_options_but_not_the_worker_count(run_dir: Path) -> None:
    reading = _reading(run_dir)
    base = script_key(reading, VoiceConfig())
    assert script_key(reading, replace(VoiceConfig(), jobs=7)) == base
    assert script_key(reading, replace(VoiceConfig(), read_captions=False)) != base
    edited = reading.pages[0].model_copy(update={"texts": reading.pages[0].texts[1:]})
    assert script_key(reading.model_copy(update={"pages": [edited]}), VoiceConfig()) != base


def test_llm_key_follows_the_request_and_the_model_not_the_server(
    run_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    local: PageReading = _reading(run_dir).pages[0]
    base = llm_reading_key(local, LlmConfig(), "m")
    assert llm_reading_key(local, LlmConfig(base_url="http://127.0.0.1:9/v1,http://127.0.0.1:10/v1"), "m") == base
    assert llm_reading_key(local, replace(LlmConfig(), concurrency=16), "m") == base
    assert llm_reading_key(local, LlmConfig(), "other-model") != base
    assert llm_reading_key(local, replace(LlmConfig(), max_tokens=LlmConfig().max_tokens + 1), "m") != base
    monkeypatch.setattr(llm_reader, "SYSTEM_PROMPT", llm_reader.SYSTEM_PROMPT + " Be brief.")
    assert llm_reading_key(local, LlmConfig(), "m") != base


def test_reading_key_follows_pixels_and_vision_options(run_dir: Path) -> None:
    book = read_artifact(run_dir / "book.json", Book)
    page: PageImage = book.pages[0]
    base = local_reading_key(book, page, VisionConfig(), "ocr")
    assert local_reading_key(book, page, VisionConfig(vision="llm"), "ocr") == base  # the LLM refines it later
    assert local_reading_key(book, page, VisionConfig(panels="classical"), "ocr") != base
    assert local_reading_key(book, page.model_copy(update={"sha256": "0" * 64}), VisionConfig(), "ocr") != base
    assert local_reading_key(book, page, VisionConfig(), "other-ocr") != base


def test_clip_key_follows_each_declared_part() -> None:
    base = clip_cache_key("Hello.", "joe", Delivery(), "1")
    assert clip_cache_key("Hello.", "joe", Delivery(), "1") == base
    changed = [
        clip_cache_key("Hello!", "joe", Delivery(), "1"),
        clip_cache_key("Hello.", "amy", Delivery(), "1"),
        clip_cache_key("Hello.", "joe", Delivery(speed=1.1), "1"),
        clip_cache_key("Hello.", "joe", Delivery(), "2"),
    ]
    assert base not in changed and len(set(changed)) == len(changed)


def test_key_parts_are_documented_in_the_readme() -> None:
    readme = (Path(__file__).resolve().parents[2] / "README.md").read_text(encoding="utf-8")
    for entry in STAGES:
        if entry.key is not None:
            assert f"| {entry.name} |" in readme, entry.name
            row = next(line for line in readme.splitlines() if line.startswith(f"| {entry.name} |"))
            for part in entry.key_parts:
                assert part in row, (entry.name, part)
    assert stage("join").key_parts[0] == "the timeline"


def test_a_folders_book_key_follows_its_pages_names_and_bytes(tmp_path: Path) -> None:
    """A folder of pages is keyed by every file's name and bytes: an edited or renamed page is a new book."""
    folder = tmp_path / "book"
    (folder / "ch1").mkdir(parents=True)
    shutil.copy(SAMPLE_PAGE, folder / "ch1" / "001.jpg")
    (folder / "002.png").write_bytes(b"not yet a page")
    config = IngestConfig()
    key = book_key(folder, config)
    assert book_key(folder, config) == key
    (folder / "002.png").write_bytes(b"another page")
    edited = book_key(folder, config)
    (folder / "002.png").rename(folder / "003.png")
    renamed = book_key(folder, config)
    assert len({key, edited, renamed}) == 3
