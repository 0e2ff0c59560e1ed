"""The engines a run uses, built once by the pipeline and passed to the stages (never built inside one)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from comic_narrator.backends.protocols import OcrEngine
    from comic_narrator.voice.voicebank import VoiceBank


@dataclass
class Engines:
    """OCR for the local reader, the voice bank, and the LLM client with its resolved model when it reads."""

    ocr: OcrEngine | None
    bank: VoiceBank | None
    llm_client: object | None = None
    llm_model: str = ""
