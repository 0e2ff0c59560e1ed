"""The cue rules (speaker names, sound words, translations, no overlaps) and the SRT and WebVTT writers, on small
hand-made timelines; tests/e2e checks the files and the MP4 track of real runs."""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from pathlib import Path
from typing import Literal

from comic_narrator.artifacts import (
    BookReading,
    Character,
    Clip,
    PageReading,
    Panel,
    Script,
    ScriptLine,
    ShotTiming,
    SpokenKind,
    TextRegion,
    Timing,
)
from comic_narrator.timeline.subtitles import Cue, build_tracks, needs_name, subtitle_path, to_srt, to_vtt

Said = tuple[str, str, SpokenKind, str]
"""(line id, speaker, kind, text)"""


def _region(said: Said, panel: int, translation: str | None = None) -> TextRegion:
    _, speaker, kind, text = said
    character = kind in ("speech", "shout")
    return TextRegion(
        bbox=(0, 0, 10, 10),
        kind=kind,
        text=text,
        speaker=speaker if character else None,
        panel=panel,
        translation=translation,
    )


def _book(
    shots: list[tuple[int, list[Said]]],
    *,
    lang: Literal["en", "ja"] = "en",
    names: dict[str, str] | None = None,
    silent: Sequence[tuple[int, str]] = (),
    translations: dict[str, str] | None = None,
    line_s: float = 1.0,
) -> tuple[BookReading, Script, list[Clip], Timing]:
    """One page: an establishing shot (panel -1) and panels 0..; each line lasts ``line_s`` after a 0.25 s
    lead-in and before a 0.35 s pause, an empty shot 1.2 s; ``silent`` are sound words lettered in a panel and
    not spoken."""
    translations = translations or {}
    regions, lines, clips, timing_shots = [], [], [], []
    clock = 0.0
    for panel, said in shots:
        starts = []
        for number, item in enumerate(said):
            line_id, speaker, kind, text = item
            regions.append(_region(item, panel, translations.get(text)))
            lines.append(ScriptLine(id=line_id, page=0, panel=panel, speaker=speaker, kind=kind, text=text))
            clips.append(
                Clip(
                    line_id=line_id,
                    audio_file="x.wav",
                    duration_s=line_s,
                    sample_rate_hz=48_000,
                    voice="v",
                    cache_key=line_id,
                )
            )
            starts.append(round(clock + 0.25 + number * (line_s + 0.35), 6))
        duration = 0.25 + len(said) * (line_s + 0.35) if said else 1.2
        timing_shots.append(
            ShotTiming(
                page=0,
                panel=panel,
                start_s=clock,
                duration_s=duration,
                frames=round(duration * 24),
                line_ids=[i[0] for i in said],
                line_starts_s=starts,
            )
        )
        clock += duration
    for panel, word in silent:
        regions.append(
            TextRegion(bbox=(0, 0, 5, 5), kind="sound", text=word, panel=panel, translation=translations.get(word))
        )
    panels = max(panel for panel, _ in shots) + 1
    page = PageReading(
        page=0,
        width=100,
        height=100,
        reading_direction="ltr",
        panels=[Panel(bbox=(0, 0, 10, 10))] * panels,
        texts=regions,
        characters=[Character(id=cid, name=name) for cid, name in (names or {}).items()],
    )
    reading = BookReading(source="t", lang=lang, pages=[page])
    script = Script(lang=lang, lines=lines)
    return reading, script, clips, Timing(fps=24, sample_rate_hz=48_000, shots=timing_shots, duration_s=clock)


def _texts(cues: tuple[Cue, ...]) -> list[str]:
    return [cue.text for cue in cues]


def test_a_named_voice_that_takes_over_in_a_panel_is_named_and_the_first_is_not() -> None:
    book = _book(
        [
            (-1, []),
            (
                0,
                [
                    ("a", "pepper", "speech", "Hi."),
                    ("b", "carrot", "speech", "Meow."),
                    ("c", "carrot", "shout", "MEOW!"),
                    ("d", "pepper", "speech", "Ok."),
                ],
            ),
        ],
        names={"pepper": "Pepper", "carrot": "Carrot"},
    )
    (track,) = build_tracks(*book)
    assert _texts(track.cues) == ["Hi.", "(Carrot)\nMeow.", "MEOW!", "(Pepper)\nOk."]


def test_lines_on_the_establishing_shot_are_named_and_captions_never() -> None:
    book = _book(
        [(-1, [("a", "narrator", "caption", "Later."), ("b", "pepper", "speech", "Where am I?")]), (0, [])],
        names={"pepper": "Pepper"},
    )
    (track,) = build_tracks(*book)
    assert _texts(track.cues) == ["Later.", "(Pepper)\nWhere am I?"]


def test_character_ids_without_a_name_are_never_shown() -> None:
    book = _book(
        [
            (-1, [("a", "char1", "speech", "One.")]),
            (0, [("b", "char1", "speech", "Two."), ("c", "char3", "speech", "Three.")]),
        ],
        names={"char3": "char3"},  # a cluster id is not a name, even where a reading lists it as one
    )
    (track,) = build_tracks(*book)
    assert _texts(track.cues) == ["One.", "Two.", "Three."]


def test_japanese_names_take_full_width_parentheses() -> None:
    book = _book([(-1, [("a", "saito", "speech", "おはよう")])], lang="ja", names={"saito": "斉藤"})
    (track,) = build_tracks(*book)
    assert track.language_tag == "jpn"
    assert _texts(track.cues) == ["（斉藤）\nおはよう"]


def test_a_sound_word_is_bracketed_from_its_shot_start_and_held_to_the_end_of_the_line_below() -> None:
    book = _book(
        [(-1, []), (0, [("a", "char1", "speech", "Hold on!"), ("b", "char1", "speech", "Wind!")]), (1, [])],
        silent=[(0, "WHOOSH"), (1, "ドン")],
        line_s=2.0,
    )
    (track,) = build_tracks(*book)
    assert [(c.start_ms, c.end_ms, c.text) for c in track.cues] == [
        (1200, 1450, "[WHOOSH]"),  # the lead-in: the wind before anyone speaks
        (1450, 3450, "[WHOOSH]\nHold on!"),  # 1.5 s would end mid-line: held to the line's end
        (3800, 5800, "Wind!"),
        (6150, 7350, "[ドン]"),  # an empty panel's 1.2 s, shorter than 1.5 s: never past its shot
    ]
    assert all(b.start_ms >= a.end_ms for a, b in itertools.pairwise(track.cues))


def test_a_sound_word_the_script_speaks_gets_no_tag() -> None:
    book = _book([(-1, []), (0, [("a", "narrator", "sound", "BOOM")])], silent=[(0, "BOOM")])
    (track,) = build_tracks(*book)
    assert _texts(track.cues) == ["BOOM"]


def test_translations_make_an_english_track_and_untranslated_lines_stay_out_of_it() -> None:
    book = _book(
        [(-1, []), (0, [("a", "saito", "speech", "おはよう"), ("b", "akagi", "speech", "ねむい")])],
        lang="ja",
        names={"saito": "Saito", "akagi": "Akagi"},
        silent=[(0, "ドン")],
        translations={"おはよう": "Good morning", "ドン": "BAM"},
    )
    own, english = build_tracks(*book)
    assert (own.suffix, own.language_tag, english.suffix, english.language_tag) == ("", "jpn", ".en", "eng")
    assert _texts(own.cues) == ["[ドン]", "[ドン]\nおはよう", "[ドン]", "（Akagi）\nねむい"]
    assert _texts(english.cues) == ["[BAM]", "[BAM]\nGood morning", "[BAM]"]
    assert subtitle_path(Path("out/book.mp4"), english, "srt") == Path("out/book.en.srt")


def test_an_english_book_has_one_track_whatever_its_reading_says() -> None:
    book = _book([(-1, [("a", "char1", "speech", "Hi")])], translations={"Hi": "Hello"})
    assert [t.suffix for t in build_tracks(*book)] == [""]


def test_srt_and_vtt_writers() -> None:
    cues = (Cue(0, 1500, "(Pepper)\nA <b> & c"), Cue(3_723_004, 3_723_500, "[ドン]"))
    assert to_srt(cues) == (
        "1\n00:00:00,000 --> 00:00:01,500\n(Pepper)\nA <b> & c\n\n2\n01:02:03,004 --> 01:02:03,500\n[ドン]\n"
    )
    assert to_vtt(cues) == (
        "WEBVTT\n\n00:00:00.000 --> 00:00:01.500\n(Pepper)\nA &lt;b&gt; &amp; c\n\n"
        "01:02:03.004 --> 01:02:03.500\n[ドン]\n"
    )


def test_a_chapter_s_track_holds_what_is_shown_in_it_clipped_and_timed_from_its_start() -> None:
    book = _book([(-1, []), (0, [("a", "char1", "speech", "One."), ("b", "char1", "speech", "Two.")])], line_s=2.0)
    (track,) = build_tracks(*book)
    assert [(c.start_ms, c.end_ms) for c in track.cues] == [(1450, 3450), (3800, 5800)]
    part = track.between(3000, 3800)  # the end of "One." only: "Two." starts as the chapter ends
    assert [(c.start_ms, c.end_ms, c.text) for c in part.cues] == [(0, 450, "One.")]
    assert (part.lang, part.suffix) == (track.lang, track.suffix)
    assert track.between(3450, 3800).cues == (), "a cue ending as the chapter starts is not in it"
    assert [c.text for c in track.between(0, 10_000).cues] == ["One.", "Two."]


def test_captions_and_sound_words_are_never_named_whoever_they_are_given_to() -> None:
    shot = ShotTiming(page=0, panel=-1, start_s=0, duration_s=1, frames=24, line_ids=[], line_starts_s=[])
    for kind in ("caption", "sound"):
        line = ScriptLine(id="a", page=0, panel=-1, speaker="pepper", kind=kind, text="x")
        assert not needs_name(line, "carrot", shot), kind
    speech = ScriptLine(id="a", page=0, panel=0, speaker="pepper", kind="speech", text="x")
    assert needs_name(speech, None, shot)
    in_panel = shot.model_copy(update={"panel": 0})
    assert not needs_name(speech, None, in_panel) and not needs_name(speech, "pepper", in_panel)
    assert needs_name(speech, "carrot", in_panel)


def test_a_shot_of_a_page_the_reading_lacks_keeps_its_lines_and_has_no_sound_tags() -> None:
    reading, script, clips, timing = _book([(-1, []), (0, [("a", "char1", "speech", "Hi.")])], silent=[(0, "BAM")])
    moved = timing.model_copy(update={"shots": [s.model_copy(update={"page": 3}) for s in timing.shots]})
    (track,) = build_tracks(reading, script, clips, moved)
    assert _texts(track.cues) == ["Hi."]
