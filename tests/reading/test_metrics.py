"""Evaluation arithmetic: the corpus CER alphabet, edit distance, box matching, order agreement."""

from __future__ import annotations

from comic_narrator.reading.metrics import (
    best_speaker_mapping,
    edit_distance,
    kendall_tau,
    match_boxes,
    normalise_letters,
)


def test_cer_alphabet_drops_case_space_and_punctuation() -> None:
    assert normalise_letters("NO! I'M LEAVING!!") == "noimleaving"
    assert normalise_letters("係船柱！") == "係船柱"
    assert normalise_letters("Ｆｕｌｌ１") == "full1"  # NFKC folds full-width forms


def test_edit_distance() -> None:
    assert edit_distance("kitten", "sitting") == 3
    assert edit_distance("", "abc") == 3
    assert edit_distance("same", "same") == 0


def test_match_boxes_is_one_to_one_at_iou_half() -> None:
    gt = [(0, 0, 100, 100), (200, 0, 100, 100)]
    pred = [(5, 5, 100, 100), (0, 0, 300, 100), (210, 0, 90, 100)]
    assert match_boxes(gt, pred) == {0: 0, 1: 2}


def test_kendall_tau() -> None:
    assert kendall_tau([0, 1, 2, 3]) == 1.0
    assert kendall_tau([3, 2, 1, 0]) == -1.0
    assert kendall_tau([1, 0, 2, 3]) == 4 / 6


def test_speaker_mapping_is_one_to_one() -> None:
    pairs = [("char1", "Pepper"), ("char1", "Pepper"), ("char2", "Pepper"), ("char2", "Carrot"), (None, "Carrot")]
    correct, mapping = best_speaker_mapping(pairs)
    assert mapping == {"char1": "Pepper", "char2": "Carrot"}
    assert correct == 3


def test_pairwise_speaker_f1_groups_lines_without_a_mapping() -> None:
    from comic_narrator.reading.metrics import pairwise_speaker_f1

    gt = ["a", "a", "b", "b"]
    assert pairwise_speaker_f1(list(zip(["x", "x", "y", "y"], gt, strict=True))) == (1.0, 1.0, 1.0)
    # One id for everybody: every same-character pair found (recall 1), 2 of 6 pairs right (precision 1/3).
    p, r, f1 = pairwise_speaker_f1([("all", g) for g in gt])
    assert (round(p, 3), r, round(f1, 3)) == (0.333, 1.0, 0.5)
    # A line read without a speaker pairs with nobody: it costs recall.
    p, r, _ = pairwise_speaker_f1(list(zip(["x", None, "y", "y"], gt, strict=True)))
    assert (p, r) == (1.0, 0.5)


def test_in_order_is_strictly_increasing() -> None:
    from comic_narrator.reading.metrics import in_order

    assert in_order([0, 2, 5]) and in_order([3]) and in_order([])
    assert not in_order([1, 0]) and not in_order([0, 2, 1]) and not in_order([1, 1])


def test_a_gt_text_goes_to_the_predicted_box_covering_it_best() -> None:
    from comic_narrator.reading.metrics import match_text_boxes

    balloon = (0, 0, 100, 20)
    inside = (0, 0, 40, 20)  # wholly inside the balloon: overlap of the smaller 1.0
    half = (50, 0, 100, 20)  # half of it over the balloon: 0.5
    assert match_text_boxes([balloon], [half, inside]) == {0: 1}
    assert match_text_boxes([balloon], [half]) == {0: 0}  # 0.5 is enough
    assert match_text_boxes([balloon, (500, 500, 10, 10)], [(60, 0, 100, 20)]) == {}  # 0.4 is not; nothing near


def test_texts_without_boxes_are_matched_by_their_letters() -> None:
    from comic_narrator.reading.metrics import match_texts_by_content

    gt = ["Come back", "I'm leaving", "Woosh"]
    pred = ["NO! I'M LEAVING!!", "But Pepper... come back...", "zzz"]
    assert match_texts_by_content(gt, pred) == {0: 1, 1: 0}  # "Woosh" has no reading holding its letters


def test_pairwise_speaker_f1_where_no_two_lines_share_a_character() -> None:
    from comic_narrator.reading.metrics import pairwise_speaker_f1

    # Nobody speaks twice: perfect only if no two lines were given one id either.
    assert pairwise_speaker_f1([("x", "a"), ("y", "b")]) == (1.0, 1.0, 1.0)
    assert pairwise_speaker_f1([("x", "a"), ("x", "b")]) == (0.0, 0.0, 0.0)
