"""What the bundled ONNX engines share: a table of voice recipes, CPU sessions, and the PSOLA finishing step."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Protocol, Self

from comic_narrator.backends.protocols import FloatAudio, VoiceInfo
from comic_narrator.dsp.psola import reshape_voice
from comic_narrator.dsp.voice_shift import VoiceShift, voice_recipe_token
from comic_narrator.errors import EngineError


class VoiceRecipe(Protocol):
    @property
    def info(self) -> VoiceInfo: ...

    @property
    def shift(self) -> VoiceShift | None: ...


DEVICE_ENV = "COMIC_NARRATOR_TTS_DEVICE"
"""``cuda`` runs the sessions on the GPU (the voice server of a GPU stack sets it); unset or ``cpu``: the CPU."""


CUDA_OPTIONS = {"cudnn_conv_algo_search": "HEURISTIC"}
"""The CUDA provider's options for the voices: cuDNN's heuristic picks each convolution's algorithm. onnxruntime's
default (EXHAUSTIVE) times every algorithm for each new input shape, and nearly every line is a new length (on the
H200 a 20-page book's 98 lines took the server 33 s the first time and 28 s when the same lines came again)."""


def session_providers() -> list[str | tuple[str, dict[str, str]]]:
    """onnxruntime's providers for the bundled voices: CUDA first when asked for (operators it has no kernel
    for fall back to the CPU), which fails clearly where the installed onnxruntime has no CUDA."""
    import onnxruntime

    if os.environ.get(DEVICE_ENV, "cpu") != "cuda":
        return ["CPUExecutionProvider"]
    if "CUDAExecutionProvider" not in onnxruntime.get_available_providers():
        raise EngineError(
            f"{DEVICE_ENV}=cuda but this onnxruntime has no CUDA provider (install onnxruntime-gpu in its place)"
        )
    preload = getattr(onnxruntime, "preload_dlls", None)
    if callable(preload):  # CUDA and cuDNN from the nvidia-* wheels PyTorch installs, where the system has none
        preload()
    return [("CUDAExecutionProvider", dict(CUDA_OPTIONS)), "CPUExecutionProvider"]


def cpu_session(model: Path, threads: int) -> Any:
    """An onnxruntime session on ``threads`` CPU threads (1 = the calling thread: lines run in parallel instead),
    on the GPU where :data:`DEVICE_ENV` asks for it."""
    import onnxruntime

    options = onnxruntime.SessionOptions()
    options.intra_op_num_threads = threads
    options.inter_op_num_threads = 1
    # Memory patterns plan the arena for one input shape; every new line length grew it (Kokoro's session went from
    # 533 to 707 MiB over a strip's 77 lines, 572 to 656 MiB without them), at no measurable cost in speed.
    options.enable_mem_pattern = False
    return onnxruntime.InferenceSession(str(model), sess_options=options, providers=session_providers())


class BundledEngine:
    """Base of the offline engines: voices are recipes keyed by id; ``open``/``close`` come from the subclass."""

    name = "bundled"

    def __init__(self, recipes: tuple[VoiceRecipe, ...]) -> None:
        self._recipes: dict[str, VoiceRecipe] = {recipe.info.id: recipe for recipe in recipes}

    def open(self) -> None:
        raise NotImplementedError

    def close(self) -> None:
        raise NotImplementedError

    def __enter__(self) -> Self:
        self.open()
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def voices(self) -> list[VoiceInfo]:
        return [r.info for r in self._recipes.values()]

    def voice_token(self, voice_id: str) -> str:
        """Changes whenever the voice's recipe changes, so its cached clips are re-voiced (part of the cache key)."""
        recipe = self._recipes.get(voice_id)
        return voice_recipe_token(repr(recipe), recipe is not None and recipe.shift is not None)

    def recipe(self, voice_id: str) -> VoiceRecipe:
        found = self._recipes.get(voice_id)
        if found is None:
            raise EngineError(f"{self.name} has no voice {voice_id!r}; known: {', '.join(self._recipes)}")
        return found

    def finish(self, samples: FloatAudio, sample_rate_hz: int, recipe: VoiceRecipe) -> FloatAudio:
        """Apply the recipe's pitch / vocal-tract shift, if it has one."""
        if recipe.shift is None:
            return samples
        return reshape_voice(samples, sample_rate_hz, recipe.shift)
