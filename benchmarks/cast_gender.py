"""Lines voiced in their speaker's gender, offline, on annotated manga pages as the local reader reads them.

Usage: python benchmarks/cast_gender.py [--sets DIR ...] [--cache DIR]

Each set (gt.json with speakers; ``--genders`` names the women, everybody else is a man, as in the Black Jack
chapters) is read by the local reader (the readings cached as ``speaker_cues.py`` caches them), its speakers linked
page by page, its lines written and cast page by page at ``--voice-quality natural``, as the page stream does. A
line matched to an annotated line counts as voiced in its gender when its voice's gender is its speaker's. Printed
twice: with the gender the lines' words mark (``reading/speech_cues.py:speaker_gender``) and without (every speaker
of unknown gender, cast by alternating genders). Needs ../shared/training for the page images (or a filled cache).
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import speaker_cues

import comic_narrator.reading.book_characters as book_characters
from comic_narrator.backends.rapidocr_engine import RapidOcrEngine
from comic_narrator.config import RunConfig, VoiceConfig
from comic_narrator.flow.stream import OnlineCasting
from comic_narrator.reading.evaluate import score_page
from comic_narrator.voice.voicebank import open_voice_bank
from comic_narrator.voice.writer import page_lines

WOMEN = ["nurse_longhair", "nurse_shorthair", "patient_woman", "patient_mother"]


def voiced_in_gender(folder: Path, cache: Path, ocr: RapidOcrEngine, women: set[str]) -> Counter[str]:
    gt = json.loads((folder / "gt.json").read_text(encoding="utf-8"))
    run = RunConfig(folder, folder / "unused.mp4", folder, voice=VoiceConfig(quality="natural"))
    book = book_characters.CharacterBook(link=True)
    counts: Counter[str] = Counter()
    with open_voice_bank(run.voice) as bank:
        gender_of = {v.id: v.gender for v in bank.voices()}
        casting = OnlineCasting(run, bank, book)  # the page stream's own casting, page by page
        for reading, truth in zip(speaker_cues.read_set(folder, gt, cache, ocr), gt["pages"], strict=True):
            linked = book.add_page(reading)
            lines = page_lines(linked, run.voice)
            book.add_lines(lines, reading=linked)
            cast = casting.add(lines, "ja", reading.page)
            for said_by, name in score_page(linked, truth, [], 0.0).speaker_pairs:
                if said_by is None:
                    counts["missed"] += 1
                    continue
                right = gender_of[cast.voice_for(said_by).voice] == ("female" if name in women else "male")
                counts["right" if right else "wrong"] += 1
    return counts


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--sets", nargs="*", type=Path, default=speaker_cues.DEFAULT_SETS)
    parser.add_argument("--cache", type=Path, default=Path("/tmp/speaker-cues-readings"))
    parser.add_argument("--women", nargs="*", default=WOMEN, help="the annotated speakers who are women")
    args = parser.parse_args()
    args.cache.mkdir(parents=True, exist_ok=True)
    said = book_characters.with_said_genders
    with RapidOcrEngine() as ocr:
        for label, cue in (("with the gender the words mark", said), ("without (genders alternate)", None)):
            book_characters.with_said_genders = cue or (lambda characters, _said: characters)
            total: Counter[str] = Counter()
            for folder in args.sets:
                counts = voiced_in_gender(folder, args.cache, ocr, set(args.women))
                total += counts
                print(
                    f"  {folder.name} {label}: {counts['right']}/{counts['right'] + counts['wrong']} right, "
                    f"{counts['missed']} lines unattributed"
                )
            voiced = total["right"] + total["wrong"]
            print(f"all sets, {label}: {total['right']}/{voiced} = {total['right'] / max(voiced, 1):.3f}")
    book_characters.with_said_genders = said
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
