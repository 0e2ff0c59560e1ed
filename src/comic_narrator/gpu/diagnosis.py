"""What the doctor reports about one failure, and the flags a boot ran with (shared by the doctor's recognisers)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from comic_narrator.gpu.flags import FlagChange

FailureKind = Literal[
    "free-memory",
    "no-kv-memory",
    "max-model-len",
    "mamba-blocks",
    "quantization-unsupported",
    "forced-kernel",
    "quantization-flag",
    "checkpoint-format",
    "kernel-feature",
    "kernel-package",
    "bf16-unsupported",
    "attention-backend",
    "cuda-oom",
    "profiling-disturbed",
    "mm-cache-after-sleep",
]


@dataclass(frozen=True)
class Diagnosis:
    """One recognised failure: the log line, its cause, the flag changes that fix it (may be none), and the
    environment variables to unset (vLLM reads some kernel choices from the environment, not from flags)."""

    kind: FailureKind
    line: str
    cause: str
    fixes: tuple[FlagChange, ...]
    advice: str = ""
    unset_env: tuple[str, ...] = ()


@dataclass(frozen=True)
class VllmArgs:
    """The flags a boot ran with, from vLLM's 'non-default args' line (None = vLLM's default)."""

    gpu_memory_utilization: float | None = None
    max_model_len: int | None = None
    max_num_seqs: int | None = None
    max_num_batched_tokens: int | None = None
    kv_cache_dtype: str | None = None
    enforce_eager: bool = False
    enable_sleep_mode: bool = False
    quantization: str | None = None
    moe_backend: str | None = None
    enable_eplb: bool = False
    enable_expert_parallel: bool = False
    enable_lora: bool = False
