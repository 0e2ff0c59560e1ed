"""`comic-narrator eval DIR` on the bundled ground-truth folders: targets of issue 3, text and JSON output."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from comic_narrator.vision.eval_cli import main
from tests.vision.conftest import DATA


def test_eval_prints_scores_that_meet_the_targets(capsys: pytest.CaptureFixture[str]) -> None:
    assert main([str(DATA / "peppercarrot-ep17"), str(DATA / "wikipe-tan"), "--json"]) == 0
    summaries = {s["folder"]: s for s in json.loads(capsys.readouterr().out)}
    pepper, wikipe = summaries["peppercarrot-ep17"], summaries["wikipe-tan"]
    for summary in (pepper, wikipe):
        assert summary["panel_f1"] >= 0.95
        assert summary["order_exact_rate"] == 1.0
        assert summary["text_recall"] >= 0.8
    assert pepper["cer_by_lang"]["en"] <= 0.05
    assert wikipe["cer_by_lang"]["ja"] <= 0.10
    assert pepper["speakers_known"] > 0 and wikipe["speakers_known"] == 6
    page = pepper["page_scores"][0]
    assert page["image"] == "page1.jpg" and page["panels_gt"] == 4


def test_eval_text_report(capsys: pytest.CaptureFixture[str]) -> None:
    assert main([str(DATA / "wikipe-tan")]) == 0
    out = capsys.readouterr().out
    assert "page1.ja.jpg" in out and "overall: panel P/R/F1" in out and "CER ja" in out


def test_eval_without_ground_truth_is_a_clear_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main([str(tmp_path)]) == 2
    assert "no gt.json" in capsys.readouterr().err
