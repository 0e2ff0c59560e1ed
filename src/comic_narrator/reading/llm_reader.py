"""The LLM reader: a multimodal model corrects the local reading's text and names speakers, kinds and emotions."""

from __future__ import annotations

import base64
import re
from typing import Any

import cv2
import numpy as np
import numpy.typing as npt

from comic_narrator.artifacts import Character, PageReading, SpokenKind, TextRegion
from comic_narrator.backends.openai_chat import OpenAIChatClient

KINDS = ["speech", "shout", "caption", "sound"]
EMOTIONS = ["neutral", "excited", "angry", "sad", "scared", "whisper", "calm"]

ANSWER_SCHEMA: dict[str, Any] = {
    "type": "object",
    "additionalProperties": False,
    "required": ["characters", "texts"],
    "properties": {
        "characters": {
            "type": "array",
            "items": {
                "type": "object",
                "additionalProperties": False,
                "required": ["name", "gender", "age", "nature"],
                "properties": {
                    "name": {"type": "string"},
                    "gender": {"enum": ["male", "female", "unknown"]},
                    "age": {"enum": ["child", "young", "adult", "old", "unknown"]},
                    "nature": {"enum": ["human", "creature", "machine", "unknown"]},
                },
            },
        },
        "texts": {
            "type": "array",
            "items": {
                "type": "object",
                "additionalProperties": False,
                "required": ["index", "text", "kind", "speaker", "emotion", "translation"],
                "properties": {
                    "index": {"type": "integer"},
                    "text": {"type": "string"},
                    "kind": {"enum": KINDS},
                    "speaker": {"type": ["string", "null"]},
                    "emotion": {"enum": EMOTIONS},
                    "translation": {"type": ["string", "null"]},
                },
            },
        },
    },
}

SYSTEM_PROMPT = (
    "You read comic and manga pages so they can be narrated aloud. You are given a page image and the text "
    "regions an OCR engine found on it, numbered in reading order. For each region return its corrected text "
    "(fix OCR mistakes by reading the lettering; write all-caps lettering in normal sentence case; keep the "
    "page's language), its kind (speech, shout, caption, sound), who says it (a character's name, or null for "
    "captions and sound effects), the emotion of the delivery, and its English translation when the lettering "
    "is not in English (null when it is). List every speaking character with gender, age and nature. Use the "
    "same name for the same character on every page."
)


def character_id(name: str) -> str:
    """A stable id from a character's name ('Carrot the cat' -> 'carrot-the-cat'); keeps CJK letters."""
    slug = re.sub(r"[^\w]+", "-", name.strip().casefold()).strip("-_")
    return slug or "unknown"


def encode_page(image_rgb: npt.NDArray[np.uint8], max_side_px: int) -> str:
    """The page as a JPEG data URL, downscaled so its long side is at most ``max_side_px``."""
    height, width = image_rgb.shape[:2]
    scale = min(1.0, max_side_px / max(height, width))
    if scale < 1.0:
        size = (max(1, round(width * scale)), max(1, round(height * scale)))
        image_rgb = np.asarray(cv2.resize(image_rgb, size, interpolation=cv2.INTER_AREA), dtype=np.uint8)
    ok, buf = cv2.imencode(".jpg", cv2.cvtColor(image_rgb, cv2.COLOR_RGB2BGR), [cv2.IMWRITE_JPEG_QUALITY, 85])
    if not ok:
        raise ValueError("cannot encode the page as JPEG")
    return "data:image/jpeg;base64," + base64.b64encode(buf.tobytes()).decode("ascii")


def describe_regions(reading: PageReading) -> str:
    lines = [
        f"Reading direction: {reading.reading_direction}. Panels in reading order: {len(reading.panels)}.",
        "Text regions (index, panel, position as % of the page, kind guessed from the lettering, OCR text):",
    ]
    for index, text in enumerate(reading.texts):
        if text.kind == "furniture":
            continue  # page numbers, notices, a credits page's names: not worth the model's tokens
        x, y, w, h = text.bbox
        cx, cy = 100 * (x + w / 2) / reading.width, 100 * (y + h / 2) / reading.height
        lines.append(f"[{index}] panel {text.panel + 1}, at ({cx:.0f}%, {cy:.0f}%), {text.kind}: {text.text!r}")
    if not reading.texts:
        lines.append("(none found)")
    return "\n".join(lines)


def merge_answer(local: PageReading, answer: dict[str, Any], model: str) -> PageReading:
    """Apply the model's corrections to the local reading; regions it skipped keep what OCR read."""
    characters: dict[str, Character] = {}
    for item in answer.get("characters", []):
        if not isinstance(item, dict) or not str(item.get("name", "")).strip():
            continue
        cid = character_id(str(item["name"]))
        characters[cid] = Character(
            id=cid,
            name=str(item["name"]).strip(),
            gender=item.get("gender") if item.get("gender") in ("male", "female") else "unknown",
            age=item.get("age") if item.get("age") in ("child", "young", "adult", "old") else "unknown",
            nature=item.get("nature") if item.get("nature") in ("human", "creature", "machine") else "unknown",
        )
    updates: dict[int, dict[str, Any]] = {}
    for item in answer.get("texts", []):
        if isinstance(item, dict) and isinstance(item.get("index"), int) and 0 <= item["index"] < len(local.texts):
            updates[item["index"]] = item
    texts: list[TextRegion] = []
    for index, region in enumerate(local.texts):
        item = updates.get(index)
        if item is None or region.kind == "furniture":
            texts.append(region)  # furniture stays furniture: the model is asked about story lettering only
            continue
        kind: SpokenKind = item["kind"] if item.get("kind") in KINDS else region.kind
        speaker_name = item.get("speaker")
        speaker = character_id(str(speaker_name)) if speaker_name and kind in ("speech", "shout") else None
        if speaker is not None and speaker not in characters:
            characters[speaker] = Character(id=speaker, name=str(speaker_name).strip())
        new_text = str(item.get("text", "")).strip() or region.text
        emotion = item.get("emotion") if item.get("emotion") in EMOTIONS else None
        translation = str(item.get("translation") or "").strip() or None
        if translation is not None and translation.casefold() == new_text.casefold():
            translation = None  # English lettering echoed back: nothing to translate
        update = {"text": new_text, "kind": kind, "speaker": speaker, "emotion": emotion, "translation": translation}
        texts.append(region.model_copy(update=update))
    return local.model_copy(update={"texts": texts, "characters": list(characters.values()), "vision": f"llm:{model}"})


def request_fingerprint(max_side_px: int, max_tokens: int, disable_thinking: bool) -> str:
    """Everything of a page's request besides the page and its local reading: the instructions, the answer's
    schema and the settings that shape the answer. A changed prompt re-asks every page."""
    import json

    from comic_narrator.workdir import text_sha256

    return text_sha256(
        SYSTEM_PROMPT,
        json.dumps(ANSWER_SCHEMA, sort_keys=True),
        str(max_side_px),
        str(max_tokens),
        str(disable_thinking),
    )


def refine_with_llm(
    image_rgb: npt.NDArray[np.uint8], local: PageReading, client: OpenAIChatClient, max_side_px: int
) -> PageReading:
    """One request per page: the image plus the numbered OCR regions; the answer is schema-constrained JSON."""
    messages: list[dict[str, Any]] = [
        {"role": "system", "content": SYSTEM_PROMPT},
        {
            "role": "user",
            "content": [
                {"type": "image_url", "image_url": {"url": encode_page(image_rgb, max_side_px)}},
                {"type": "text", "text": describe_regions(local)},
            ],
        },
    ]
    answer = client.chat_json(messages, ANSWER_SCHEMA, "page_reading")
    return merge_answer(local, answer, client.resolve_model())
