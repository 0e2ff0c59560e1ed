"""An LLM answer merged into a page's local reading, each change checked first (reading/llm_checks.py): what fails
its check, and the whole answer when the page misled the model, stays as the local reader had it, and is logged."""

from __future__ import annotations

import logging
import re
from collections.abc import Sequence
from typing import Any, get_args

from comic_narrator.artifacts import Character, Emotion, PageReading, SceneCue, SpokenKind, TextRegion
from comic_narrator.reading.llm_checks import (
    DISTRUST_AFTER_REJECTED,
    addresses_the_reader,
    kind_allowed,
    lettering_distance,
    plausible_correction,
)

log = logging.getLogger("comic_narrator")

KINDS: list[str] = list(get_args(SpokenKind))
EMOTIONS: list[str] = list(get_args(Emotion))
SCENE_CUES: list[str] = list(get_args(SceneCue))
MAX_SCENE_CUES = 2
"""The page's setting for its sound bed, most evident first (an empty list when none is clear)."""
LOGGED_REJECTIONS = 6
"""Rejected changes named in a page's warning (the rest are counted)."""


_CONTROL = re.compile(r"[\x00-\x09\x0b-\x1f\x7f-\x9f]+")


def _plain(value: Any) -> str:
    """An answer's string with control characters (other than a line break) made spaces, trimmed: a model's JSON
    may carry them raw (vLLM's grammar admits them), and nothing downstream (subtitles, speech) wants them."""
    return _CONTROL.sub(" ", str(value or "")).strip()


def character_id(name: str) -> str:
    """A stable id from a character's name ('Carrot the cat' -> 'carrot-the-cat'); keeps CJK letters."""
    slug = re.sub(r"[^\w]+", "-", name.strip().casefold()).strip("-_")
    return slug or "unknown"


def listed_characters(answer: dict[str, Any]) -> dict[str, Character]:
    """The characters an answer lists, by id (the first of two names with one id)."""
    characters: dict[str, Character] = {}
    for item in answer.get("characters", []):
        name = _plain(item.get("name")) if isinstance(item, dict) else ""
        if not name:
            continue
        cid = character_id(name)
        if cid in characters:
            continue
        characters[cid] = Character(
            id=cid,
            name=name,
            gender=item.get("gender") if item.get("gender") in ("male", "female") else "unknown",
            age=item.get("age") if item.get("age") in ("child", "young", "adult", "old") else "unknown",
            nature=item.get("nature") if item.get("nature") in ("human", "creature", "machine") else "unknown",
        )
    return characters


def _short(text: str, chars: int = 40) -> str:
    return repr(text if len(text) <= chars else text[: chars - 3] + "...")


class _Checked:
    """The answer's items by region, with the text and kind checks (they compare the answer with the page)."""

    def __init__(self, local: PageReading, answer: dict[str, Any]) -> None:
        self.items: dict[int, dict[str, Any]] = {}
        for item in answer.get("texts", []):
            index = item.get("index") if isinstance(item, dict) else None
            if isinstance(index, int) and 0 <= index < len(local.texts) and local.texts[index].kind != "furniture":
                self.items[index] = item  # furniture stays furniture: the model is asked about story lettering only
        self.rejected: list[str] = []
        self.failed_regions: set[int] = set()
        self.texts: dict[int, str] = {}
        self.kinds: dict[int, SpokenKind] = {}
        for index, item in self.items.items():
            region = local.texts[index]
            text = _plain(item.get("text")) or region.text
            if plausible_correction(region.text, text, region.confidence):
                self.texts[index] = text
            else:
                edits, letters = lettering_distance(region.text, text)
                self.rejected.append(
                    f"region {index} text {_short(text)} for {_short(region.text)} ({edits} edits in {letters} letters)"
                )
                self.failed_regions.add(index)
            kind = item.get("kind")
            if kind in KINDS and kind != region.kind:
                if kind_allowed(region.kind, kind):
                    self.kinds[index] = kind
                else:
                    self.rejected.append(f"region {index} kind {region.kind} -> {kind}")
                    self.failed_regions.add(index)


def merge_answer(
    local: PageReading, answer: dict[str, Any], model: str, known: Sequence[Character] = ()
) -> PageReading:
    """Apply the model's checked changes to the local reading; regions it skipped keep what OCR read.

    Per region: a corrected text only when it is plausibly the lettering OCR read (plausible_correction), a kind
    only within what the local kind allows (KIND_GROUPS), a speaker only from the characters the answer lists or
    the book ``known`` (who keep what the book knows of them), a translation only for lettering not in English.
    The whole answer is set aside, and the local reading kept, when some region's lettering addresses the reader
    (addresses_the_reader) or when DISTRUST_AFTER_REJECTED regions fail their text or kind checks: a model that
    obeyed the page is not trusted for what cannot be checked (speakers, characters, emotions, translations)."""
    book = {character.id: character for character in known}
    checked = _Checked(local, answer)
    distrust = [
        f"region {index}'s lettering {_short(region.text)} addresses the reader"
        for index, region in enumerate(local.texts)
        if region.kind != "furniture" and addresses_the_reader(region.text)
    ]
    if len(checked.failed_regions) >= DISTRUST_AFTER_REJECTED:
        distrust.append(f"{len(checked.failed_regions)} regions failed their checks")
    if distrust:
        _warn(local, checked.rejected, "the LLM's answer is set aside (" + "; ".join(distrust) + ")")
        return local.model_copy(update={"vision": f"llm:{model}"})
    listed = listed_characters(answer)
    characters = dict(listed)
    rejected = list(checked.rejected)
    texts: list[TextRegion] = []
    for index, region in enumerate(local.texts):
        item = checked.items.get(index)
        if item is None:
            texts.append(region)
            continue
        text = checked.texts.get(index, region.text)
        kind = checked.kinds.get(index, region.kind)
        speaker = None
        name = _plain(item.get("speaker"))
        if kind in ("speech", "shout") and name:
            cid = character_id(name)
            if cid in listed or cid in book:
                speaker = cid
                characters.setdefault(cid, book.get(cid) or Character(id=cid, name=name))
            else:
                speaker = region.speaker
                rejected.append(f"region {index} speaker {_short(name)} (not among the characters listed)")
        emotion = item.get("emotion") if item.get("emotion") in EMOTIONS else None
        translation = _plain(item.get("translation")) or None
        if translation is not None and translation.casefold() == text.casefold():
            translation = None  # English lettering echoed back: nothing to translate
        if translation is not None and region.lang == "en":
            rejected.append(f"region {index} translation {_short(translation)} of English lettering")
            translation = None
        update = {"text": text, "kind": kind, "speaker": speaker, "emotion": emotion, "translation": translation}
        texts.append(region.model_copy(update=update))
    if rejected:
        _warn(local, rejected, "kept the local reading where the LLM's answer failed its checks")
    scene = [cue for cue in dict.fromkeys(answer.get("scene") or []) if cue in SCENE_CUES][:MAX_SCENE_CUES]
    return local.model_copy(
        update={"texts": texts, "characters": list(characters.values()), "scene": scene, "vision": f"llm:{model}"}
    )


def _warn(local: PageReading, rejected: list[str], what: str) -> None:
    named = "; ".join(rejected[:LOGGED_REJECTIONS])
    more = f"; {len(rejected) - LOGGED_REJECTIONS} more" if len(rejected) > LOGGED_REJECTIONS else ""
    log.warning("page %d: %s%s", local.page + 1, what, f": {named}{more}" if rejected else "")
