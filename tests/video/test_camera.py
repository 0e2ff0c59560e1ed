"""Camera planning and frame rendering: framing, moves, glides, dimming, and sub-pixel sampling."""

from __future__ import annotations

import itertools
import json

import numpy as np
import pytest

from comic_narrator.artifacts import BookReading, CameraPlan, PageReading, Panel, ShotTiming, Timing
from comic_narrator.config import ASPECT_SIZE_PX, RenderConfig
from comic_narrator.video.camera import TRANSITION_S, fit_aspect, focus_at, pan_views, plan_camera, rect_at
from comic_narrator.video.color import rgb_to_i420, ycbcr_of
from comic_narrator.video.frames import PagePyramid, dim_outside
from tests.conftest import corpus_path


def _reading() -> BookReading:
    panels = [Panel(bbox=(20, 20, 460, 300)), Panel(bbox=(20, 340, 220, 400)), Panel(bbox=(260, 340, 220, 400))]
    page = PageReading(page=0, width=500, height=760, reading_direction="ltr", panels=panels, texts=[])
    return BookReading(source="t", lang="en", pages=[page])


def _timing(
    fps: int = 30, layout: tuple[tuple[int, int, int], ...] = ((0, -1, 45), (0, 0, 60), (0, 1, 60), (0, 2, 90))
) -> Timing:
    """Shots of (page, panel, frames), one after another."""
    shots, start = [], 0
    for page, panel, frames in layout:
        shots.append(
            ShotTiming(
                page=page,
                panel=panel,
                start_s=start / fps,
                duration_s=frames / fps,
                frames=frames,
                line_ids=[],
                line_starts_s=[],
            )
        )
        start += frames
    return Timing(fps=fps, sample_rate_hz=48_000, shots=shots, duration_s=start / fps)


def test_fit_aspect_contains_the_rect_at_16_9() -> None:
    x, y, w, h = fit_aspect((100, 50, 200, 400), 16 / 9, 0.05)
    assert w / h == pytest.approx(16 / 9)
    assert x <= 100 and y <= 50 and x + w >= 300 and y + h >= 450


def test_each_shot_frames_its_panel_and_pushes_in() -> None:
    plan = plan_camera(_reading(), _timing(), RenderConfig())
    assert [s.frames for s in plan.shots] == [45, 60, 60, 90]
    assert [s.start_frame for s in plan.shots] == [0, 45, 105, 165]
    for shot, panel in zip(plan.shots[1:], _reading().pages[0].panels, strict=True):
        px, py, pw, ph = panel.bbox
        x, y, w, h = shot.rect_from
        assert x <= px and y <= py and x + w >= px + pw and y + h >= py + ph
        assert shot.rect_to[2] < shot.rect_from[2], "a panel shot pushes in"
        assert shot.focus == (px, py, pw, ph)
    assert plan.shots[0].focus is None


def test_moves_are_continuous_within_a_page() -> None:
    plan = plan_camera(_reading(), _timing(), RenderConfig())
    rects = [rect_at(plan, i, f) for i, shot in enumerate(plan.shots) for f in range(shot.frames)]
    steps = [max(abs(a[k] - b[k]) for k in range(4)) / a[2] for a, b in itertools.pairwise(rects)]
    assert max(steps) < 0.1, "no jump cuts inside a page: each frame moves under a tenth of the view"
    assert rect_at(plan, 2, 0) == pytest.approx(plan.shots[1].rect_to, abs=1e-6)


def test_dimming_fades_in_then_follows_the_panel() -> None:
    plan = plan_camera(_reading(), _timing(), RenderConfig())
    assert focus_at(plan, 0, 10) == (None, 0.0)
    _, strength_start = focus_at(plan, 1, 0)
    _, strength_late = focus_at(plan, 1, 40)
    assert strength_start == 0.0 and strength_late == 1.0


def test_render_is_sub_pixel_and_dims_outside_the_focus() -> None:
    page = np.zeros((200, 200, 3), dtype=np.uint8)
    page[:, 100:] = 255
    pyramid = PagePyramid(page)
    fill = ycbcr_of((0, 0, 0))
    a = pyramid.render((0.0, 0.0, 200.0, 112.5), 320, 180, fill)[:180].astype(int)
    b = pyramid.render((0.5, 0.0, 200.0, 112.5), 320, 180, fill)[:180].astype(int)
    assert 0 < np.abs(a - b).sum() < 320 * 180 * 255 * 0.05, "half a page pixel moves the edge, a little"
    frame = rgb_to_i420(np.full((180, 320, 3), 200, dtype=np.uint8))
    dim_outside(frame, 320, 180, (0.0, 0.0, 320.0, 180.0), (100.0, 50.0, 100.0, 50.0), 1.0)
    # RGB 200 is Y 188; dimmed to 45 % it is RGB 90, Y 93 (Y - 16 scales with R, G and B).
    assert frame[75, 150] == 188 and frame[10, 10] == 93
    assert frame[180 + 5, 10] == 128, "grey stays grey when dimmed"


# Real readings: the panels of the corpus pages' ground truth (Pepper&Carrot ep. 17, western, with panels from
# 0.5:1 to 4.3:1; the Wikipe-tan manga page, right to left), each page planned on its own as the pipeline does.
def _gt_pages() -> list[PageReading]:
    pages = []
    for folder in ("peppercarrot-ep17", "wikipe-tan"):
        truth = json.loads(corpus_path(folder, "gt.json").read_text(encoding="utf-8"))
        for entry in truth["pages"]:
            panels = [Panel(bbox=tuple(panel["bbox"])) for panel in entry["panels"]]
            pages.append(
                PageReading(
                    page=len(pages),
                    width=entry["width"],
                    height=entry["height"],
                    reading_direction=entry["reading_direction"],
                    panels=panels,
                    texts=[],
                )
            )
    return pages


def _page_timing(page: PageReading, fps: int) -> Timing:
    """The establishing shot, then panels of 4.5 s and 2 s in turn: long enough to pan, and too short to."""
    lengths = [round(1.5 * fps)] + [round((4.5 if n % 2 == 0 else 2.0) * fps) for n in range(len(page.panels))]
    starts = [0, *itertools.accumulate(lengths)]
    shots = [
        ShotTiming(
            page=page.page,
            panel=panel - 1,
            start_s=start / fps,
            duration_s=frames / fps,
            frames=frames,
            line_ids=[],
            line_starts_s=[],
        )
        for panel, (frames, start) in enumerate(zip(lengths, starts, strict=False))
    ]
    return Timing(fps=fps, sample_rate_hz=48_000, shots=shots, duration_s=starts[-1] / fps)


def _config(aspect: str, draft: bool) -> RenderConfig:
    width_px, height_px = ASPECT_SIZE_PX[aspect]  # type: ignore[index]
    config = RenderConfig(width_px=width_px, height_px=height_px)
    return config.draft() if draft else config


def _views_by_panel(plan: CameraPlan) -> dict[int, list[tuple[float, float, float, float]]]:
    """Each panel's views once the camera has arrived on it: the glide from the previous panel (which may still
    show a whole page) does not count."""
    views: dict[int, list[tuple[float, float, float, float]]] = {}
    for index, shot in enumerate(plan.shots):
        glide = min(int(TRANSITION_S * plan.fps), shot.frames // 3) if index > 0 else 0
        views.setdefault(shot.panel, []).extend(rect_at(plan, index, f) for f in range(glide, shot.frames))
    return views


def _contains(view: tuple[float, float, float, float], bbox: tuple[int, int, int, int], slack_px: float) -> bool:
    x, y, w, h = view
    px, py, pw, ph = bbox
    return x <= px + slack_px and y <= py + slack_px and x + w >= px + pw - slack_px and y + h >= py + ph - slack_px


@pytest.mark.parametrize("draft", [False, True])
@pytest.mark.parametrize("aspect", list(ASPECT_SIZE_PX))
def test_every_panel_is_seen_whole_at_some_moment_in_every_aspect(aspect: str, draft: bool) -> None:
    config = _config(aspect, draft)
    for page in _gt_pages():
        timing = _page_timing(page, config.fps)
        plan = plan_camera(BookReading(source="t", lang="en", pages=[page]), timing, config)
        assert sum(s.frames for s in plan.shots) == sum(s.frames for s in timing.shots), "frames are kept"
        views = _views_by_panel(plan)
        for number, panel in enumerate(page.panels):
            # "Within a pixel": a pixel of the output frame, in page pixels.
            slack_px = max(1.0, max(v[2] for v in views[number]) / config.width_px)
            assert any(_contains(view, panel.bbox, slack_px) for view in views[number]), (
                f"{aspect}: page {page.page + 1} panel {number + 1} {panel.bbox} is never seen whole"
            )


def _pan(page: PageReading, panel: int, config: RenderConfig) -> tuple[CameraPlan, int]:
    plan = plan_camera(BookReading(source="t", lang="en", pages=[page]), _page_timing(page, config.fps), config)
    indices = [i for i, shot in enumerate(plan.shots) if shot.panel == panel]
    assert len(indices) == 2, "a wide panel in a vertical frame is held whole, then panned across"
    return plan, indices[1]


@pytest.mark.parametrize(("page_number", "panel", "direction"), [(1, 0, "ltr"), (3, 2, "ltr"), (4, 2, "rtl")])
@pytest.mark.parametrize("draft", [False, True])
def test_vertical_pans_across_wide_panels_in_the_reading_direction(
    page_number: int, panel: int, direction: str, draft: bool
) -> None:
    """Pepper&Carrot p2's 3.4:1 first panel and p4's 2.3:1 third panel (left to right), Wikipe-tan's 2:1 last
    panel (right to left)."""
    page = _gt_pages()[page_number]
    assert page.reading_direction == direction
    config = _config("vertical", draft)
    plan, index = _pan(page, panel, config)
    shot = plan.shots[index]
    glide = min(int(TRANSITION_S * plan.fps), shot.frames // 3)
    centres = [rect_at(plan, index, f)[0] + rect_at(plan, index, f)[2] / 2 for f in range(glide, shot.frames)]
    sign = 1.0 if direction == "ltr" else -1.0
    assert all(sign * (b - a) >= -1e-9 for a, b in itertools.pairwise(centres)), "the pan never turns back"
    px, _py, pw, ph = page.panels[panel].bbox
    start, end = shot.rect_from, shot.rect_to
    assert sign * (end[0] - start[0]) > 0.2 * pw, "it travels across the panel"
    near, far = (px, px + pw) if direction == "ltr" else (px + pw, px)
    assert abs((start[0] if direction == "ltr" else start[0] + start[2]) - near) < 0.06 * pw, "starts on the start side"
    assert abs((end[0] + end[2] if direction == "ltr" else end[0]) - far) < 0.06 * pw, "ends on the far side"
    assert start[3] >= ph, "the panel's full height is in view all along the pan"


def test_vertical_tall_panels_fill_the_frame_and_wide_frames_do_not_pan_ordinary_panels() -> None:
    page = _gt_pages()[1]  # Pepper&Carrot p2: two wide panels, then three tall ones (about 0.5:1)
    vertical = plan_camera(
        BookReading(source="t", lang="en", pages=[page]), _page_timing(page, 24), _config("vertical", False)
    )
    for number in (2, 3, 4):
        _x, _y, _w, ph = page.panels[number].bbox
        (shot,) = [s for s in vertical.shots if s.panel == number]
        assert shot.rect_from[3] == pytest.approx(ph * 1.1), "the panel and its 5 % margin fill the frame's height"
    wide = plan_camera(BookReading(source="t", lang="en", pages=[page]), _page_timing(page, 24), RenderConfig())
    assert [s.panel for s in wide.shots] == [-1, 0, 1, 2, 3, 4], "at 16:9 only panels past 3.56:1 would pan"


def test_draft_keeps_the_aspect_at_a_fraction_of_the_pixels() -> None:
    for aspect, (width_px, height_px) in ASPECT_SIZE_PX.items():
        draft = _config(aspect, True)
        assert draft.width_px * height_px == draft.height_px * width_px, aspect
        assert min(draft.width_px, draft.height_px) <= 480 and draft.width_px % 4 == 0 and draft.height_px % 4 == 0
        assert draft.fps == 12 and draft.crf > RenderConfig.crf and draft.preset == RenderConfig.preset


@pytest.mark.parametrize(("size_px", "draft_px"), [((1366, 768), (848, 480)), ((1001, 1000), (480, 480))])
def test_a_frame_with_no_exact_small_size_drafts_near_its_aspect(
    size_px: tuple[int, int], draft_px: tuple[int, int]
) -> None:
    """A library caller's own frame (1366x768 has no exact smaller size whose sides divide by 4; 1001x1000 has no
    smaller size at all): each side rounded to a multiple of 16 at the draft's short side."""
    draft = RenderConfig(width_px=size_px[0], height_px=size_px[1]).draft()
    assert (draft.width_px, draft.height_px) == draft_px


def _with_speaker(x: float, y: float, panel: int = 0) -> BookReading:
    from comic_narrator.artifacts import TextRegion

    reading = _reading()
    page = reading.pages[0]
    line = TextRegion(bbox=(40, 40, 60, 30), kind="speech", text="Hi!", panel=panel, speaker_xy=(x, y))
    return reading.model_copy(update={"pages": [page.model_copy(update={"texts": [line]})]})


def _centre(rect: tuple[float, float, float, float]) -> tuple[float, float]:
    return rect[0] + rect[2] / 2, rect[1] + rect[3] / 2


@pytest.mark.parametrize(("x", "y"), [(30.0, 30.0), (470.0, 310.0), (470.0, 30.0), (30.0, 310.0)])
def test_the_push_in_favours_the_speakers_figure_without_leaving_the_framed_view(x: float, y: float) -> None:
    config = RenderConfig()
    shot = plan_camera(_with_speaker(x, y), _timing(), config).shots[1]  # panel 0: (20, 20, 460, 300)
    start, end = _centre(shot.rect_from), _centre(shot.rect_to)
    # The view closes in towards the figure, in both directions ...
    assert (end[0] - start[0]) * (x - start[0]) > 0 and (end[1] - start[1]) * (y - start[1]) > 0
    # ... but only as far as keeps the pushed-in view inside the first one (the balloons framed stay framed).
    fx, fy, fw, fh = shot.rect_from
    ex, ey, ew, eh = shot.rect_to
    assert fx - 1e-6 <= ex and fy - 1e-6 <= ey and ex + ew <= fx + fw + 1e-6 and ey + eh <= fy + fh + 1e-6


def test_a_figure_outside_the_panel_is_not_favoured() -> None:
    plain = plan_camera(_reading(), _timing(), RenderConfig()).shots[1]
    outside = plan_camera(_with_speaker(400.0, 700.0), _timing(), RenderConfig()).shots[1]
    assert outside.rect_to == plain.rect_to


def test_the_reader_places_the_speakers_of_a_real_page() -> None:
    """The bundled sample page: every balloon's point past its tail lies on the page, and the camera moves
    towards the first one in its panel."""
    from comic_narrator.backends.rapidocr_engine import RapidOcrEngine
    from comic_narrator.video.camera import speaker_figure
    from tests.conftest import SAMPLE_PAGE
    from tests.reading.conftest import read_bundled

    with RapidOcrEngine() as ocr:
        page = read_bundled(ocr, SAMPLE_PAGE)
    spoken = [t for t in page.texts if t.kind in ("speech", "shout")]
    assert spoken and all(t.speaker_xy is not None for t in spoken)
    assert all(0 <= t.speaker_xy[0] <= page.width and 0 <= t.speaker_xy[1] <= page.height for t in spoken)  # type: ignore[index]
    placed = [p for p in range(len(page.panels)) if speaker_figure(page, p) is not None]
    assert placed


def _two_pages_timing(fps: int = 30) -> tuple[BookReading, Timing]:
    """The page of _reading() twice; the second page's last panel shot lasts two frames (too short to glide)."""
    first = _reading().pages[0]
    reading = BookReading(source="t", lang="en", pages=[first, first.model_copy(update={"page": 1})])
    return reading, _timing(fps, ((0, -1, 45), (0, 0, 60), (0, 1, 60), (1, 0, 60), (1, 1, 2)))


def test_the_first_shot_and_a_new_page_s_first_shot_start_on_their_own_view() -> None:
    """No glide into the video's first frame, nor across a page turn (the transition covers that), even when
    the page turned to ends where the other began."""
    one_page = plan_camera(_reading(), _timing(), RenderConfig())
    assert rect_at(one_page, 0, 0) == pytest.approx(one_page.shots[0].rect_from, abs=1e-9)
    plan = plan_camera(*_two_pages_timing(), RenderConfig())
    assert plan.shots[3].page == 1 and plan.shots[2].page == 0
    assert rect_at(plan, 3, 0) == pytest.approx(plan.shots[3].rect_from, abs=1e-9)
    assert max(abs(a - b) for a, b in zip(plan.shots[2].rect_to, plan.shots[3].rect_from, strict=True)) > 50
    assert focus_at(plan, 3, 0) == (plan.shots[3].focus, 1.0), "a new page's panel is lit at once"
    # A glide within a page starts from where the previous shot ended.
    assert rect_at(plan, 2, 0) == pytest.approx(plan.shots[1].rect_to, abs=1e-6)


def test_a_shot_too_short_to_glide_cuts_to_its_own_view() -> None:
    plan = plan_camera(*_two_pages_timing(), RenderConfig())
    last = len(plan.shots) - 1
    assert plan.shots[last].frames == 2
    assert rect_at(plan, last, 0) == pytest.approx(plan.shots[last].rect_from, abs=1e-9)
    assert focus_at(plan, last, 0) == (plan.shots[last].focus, 1.0)


def test_the_bright_panel_glides_from_one_panel_to_the_next_fully_dimmed_around() -> None:
    plan = plan_camera(_reading(), _timing(), RenderConfig())
    glide = int(TRANSITION_S * plan.fps)
    before, after = plan.shots[1].focus, plan.shots[2].focus
    assert before is not None and after is not None
    rect, strength = focus_at(plan, 2, glide // 2)
    assert strength == 1.0
    assert rect is not None
    for k in range(4):
        low, high = sorted((before[k], after[k]))
        assert low <= rect[k] <= high
    assert rect != before and rect != after
    assert focus_at(plan, 2, glide) == (after, 1.0)


def test_a_wide_panel_too_small_to_travel_across_is_fitted_not_panned() -> None:
    """At 16:9 a panel over 3.56 times as wide as tall is panned, unless the closest view allowed (360 page px
    across the short side) already covers over 80 % of it."""
    assert pan_views((0.0, 0.0, 700.0, 150.0), 16 / 9, "ltr") is None
    start, end = pan_views((0.0, 0.0, 2100.0, 450.0), 16 / 9, "ltr") or (None, None)
    assert start is not None and end is not None and start[0] < end[0]
