"""Which balloons light up when: a page's spoken lines mapped to their lettering and laid on frames, the fade in
and out, and the outline drawn around the box as the camera sees it."""

from __future__ import annotations

import numpy as np

from comic_narrator.artifacts import Clip, PageReading, Panel, ScriptLine, ShotTiming, TextRegion, Timing
from comic_narrator.video.color import ycbcr_of
from comic_narrator.video.highlight import Highlight, HighlightPainter, page_highlights


def _page() -> PageReading:
    texts = [
        TextRegion(bbox=(100, 100, 200, 80), kind="speech", text="Hello", speaker="char1", panel=0),
        TextRegion(bbox=(10, 10, 100, 30), kind="caption", text="Meanwhile", panel=0),
        TextRegion(bbox=(400, 300, 150, 60), kind="speech", text="Hi", speaker="char2", panel=0),
    ]
    return PageReading(
        page=0, width=800, height=600, reading_direction="ltr", panels=[Panel(bbox=(0, 0, 800, 600))], texts=texts
    )


def _line(number: int, kind: str = "speech") -> ScriptLine:
    return ScriptLine(id=f"p001-t{number:02d}", page=0, panel=0, speaker="char1", kind=kind, text="x")  # type: ignore[arg-type]


def test_spoken_balloons_light_over_their_clips_and_captions_do_not() -> None:
    lines = [
        _line(1),
        _line(2, "caption"),
        _line(3),
        ScriptLine(id="added", page=0, panel=0, speaker="a", kind="speech", text="y"),
    ]
    clips = [
        Clip(line_id=line.id, audio_file="a.wav", duration_s=1.0, sample_rate_hz=48_000, voice="v", cache_key=line.id)
        for line in lines
    ]
    shot = ShotTiming(
        page=0,
        panel=0,
        start_s=0.0,
        duration_s=8.0,
        frames=192,
        line_ids=[line.id for line in lines],
        line_starts_s=[0.5, 2.0, 3.5, 5.0],
    )
    timing = Timing(fps=24, sample_rate_hz=48_000, shots=[shot], duration_s=8.0)
    assert page_highlights(_page(), lines, clips, timing) == (
        Highlight(12, 36, (100, 100, 200, 80)),
        Highlight(84, 108, (400, 300, 150, 60)),
    )


def test_the_outline_fades_in_and_out_and_surrounds_the_box_in_view() -> None:
    width, height = 320, 240
    painter = HighlightPainter((Highlight(10, 30, (100, 100, 200, 80)),), width, height, fps=24)
    assert [round(painter.strength(painter.highlights[0], n), 2) for n in (9, 10, 12, 15, 20, 27, 29, 30)] == [
        0.0,
        0.17,
        0.5,
        1.0,
        1.0,
        0.5,
        0.17,
        0.0,
    ]
    grey = ycbcr_of((128, 128, 128))
    blank = np.empty((height * 3 // 2, width), dtype=np.uint8)
    blank[:height], blank[height:] = grey[0], grey[1]  # a neutral grey: Cb and Cr are both 128
    frame = blank.copy()
    painter.paint(frame, 20, (0.0, 0.0, 640.0, 480.0))  # the view shows the page at half size
    luma = frame[:height].astype(int) - blank[:height]
    rows, cols = np.nonzero(np.abs(luma) > 10)
    assert rows.size and 35 <= rows.min() <= 50 and 90 <= rows.max() <= 105, "box rows 50-90 with a margin"
    assert 35 <= cols.min() <= 50 and 150 <= cols.max() <= 165, "box columns 50-150 with a margin"
    assert np.abs(luma[65:75, 90:110]).max() == 0, "the lettering inside is untouched"
    untouched = frame.copy()
    painter.paint(untouched, 5, (0.0, 0.0, 640.0, 480.0))
    assert np.array_equal(untouched, frame), "nothing is drawn before the line"


def _grey_frame(width: int, height: int) -> np.ndarray:
    grey = ycbcr_of((128, 128, 128))
    frame = np.empty((height * 3 // 2, width), dtype=np.uint8)
    frame[:height], frame[height:] = grey[0], grey[1]
    return frame


def test_the_glow_is_as_strong_as_the_fade_says_and_nothing_outside_its_frames() -> None:
    width, height = 320, 240
    painter = HighlightPainter((Highlight(10, 30, (100, 100, 200, 80)),), width, height, fps=24)
    assert [painter.strength(painter.highlights[0], n) for n in (0, 5, 31, 60)] == [0.0] * 4
    view = (0.0, 0.0, 640.0, 480.0)
    blank = _grey_frame(width, height)
    change = {}
    for n in (12, 20):  # half faded in, then full
        frame = blank.copy()
        painter.paint(frame, n, view)
        change[n] = int(np.abs(frame[:height].astype(int) - blank[:height]).sum())
    assert 0.35 < change[12] / change[20] < 0.65, change


def test_a_balloon_out_of_view_draws_nothing() -> None:
    width, height = 320, 240
    blank = _grey_frame(width, height)
    for box in ((2000, 100, 200, 80), (100, 2000, 200, 80), (-900, 100, 200, 80)):
        painter = HighlightPainter((Highlight(0, 30, box),), width, height, fps=24)
        frame = blank.copy()
        painter.paint(frame, 15, (0.0, 0.0, 640.0, 480.0))
        assert np.array_equal(frame, blank), box
