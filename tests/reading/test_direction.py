"""Which way a page reads, as the README's --layout row promises: the option wins; under auto, ComicInfo's manga
flag, then a tall strip (height >= 2.5 widths) or a slice of one, then the lettering's language."""

from __future__ import annotations

from comic_narrator.artifacts import PageImage
from comic_narrator.config import VisionConfig
from comic_narrator.reading.direction import reading_direction, script_language


def _page(width_px: int = 1000, height_px: int = 1400, segment: int = 0) -> PageImage:
    return PageImage(
        index=0,
        source="test",
        source_page_number=1,
        segment=segment,
        image_file="test.png",
        width_px=width_px,
        height_px=height_px,
        sha256="",
    )


AUTO = VisionConfig()


def test_the_layout_option_wins_over_every_clue() -> None:
    tall = _page(800, 4000)
    for layout, expected in (("manga", "rtl"), ("western", "ltr"), ("webtoon", "ttb")):
        config = VisionConfig(layout=layout)  # type: ignore[arg-type]
        assert reading_direction(config, _page(), False, "ja") == expected
        assert reading_direction(config, _page(), True, "en") == expected
        assert reading_direction(config, tall, None, "ja") == expected


def test_auto_takes_comicinfo_then_the_shape_then_the_language() -> None:
    assert reading_direction(AUTO, _page(), True, "en") == "rtl"  # ComicInfo: Manga=YesAndRightToLeft
    assert reading_direction(AUTO, _page(), False, "ja") == "ltr"  # ComicInfo present and not right to left
    assert reading_direction(AUTO, _page(800, 2000), None, "ja") == "ttb"  # exactly 2.5 widths tall
    assert reading_direction(AUTO, _page(800, 1990), None, "ja") == "rtl"  # just short of it: a page
    assert reading_direction(AUTO, _page(800, 1200, segment=2), None, "en") == "ttb"  # a slice of a strip
    assert reading_direction(AUTO, _page(), None, "ja") == "rtl"
    assert reading_direction(AUTO, _page(), None, "en") == "ltr"
    assert reading_direction(AUTO, _page(), None, None) == "ltr"  # nothing to go on: the western default


def test_script_language_counts_a_kana_as_two_latin_letters() -> None:
    assert script_language(["みんな知ってるけど"]) == "ja"
    assert script_language(["Come back!"]) == "en"
    assert script_language(["ｶﾀｶﾅ"]) == "ja"  # half-width katakana
    assert script_language(["!?", "12"]) is None
    assert script_language(["OK", "係船柱"]) == "ja"  # 3 kanji (6) against 2 letters
    assert script_language(["Hello ねこ"]) == "en"  # 2 kana (4) against 5 letters
    assert script_language(["ABCDEF", "ねこ吉"]) == "ja"  # 3 (6) against 6: a tie reads as Japanese
