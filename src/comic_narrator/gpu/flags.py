"""vLLM's serving flags: their defaults in vLLM 0.20.0, flag changes as values, and applying them to an argv."""

from __future__ import annotations

import math
from dataclasses import dataclass

from comic_narrator.gpu.sizes import GIB

DEFAULT_GPU_MEMORY_UTILIZATION = 0.92
"""vllm/config/cache.py in vLLM 0.20.0: gpu_memory_utilization defaults to 0.92."""

LARGE_GPU_BYTES = 70 * GIB
"""vllm/engine/arg_utils.py: GPUs of at least 70 GiB (not A100) get the larger serving defaults below."""


def default_max_num_batched_tokens(total_bytes: int, gpu_name: str = "") -> int:
    """The OpenAI server's default: 8192 on H100/H200-class GPUs, else 2048."""
    return 8192 if total_bytes >= LARGE_GPU_BYTES and "a100" not in gpu_name.lower() else 2048


def default_max_num_seqs(total_bytes: int, gpu_name: str = "") -> int:
    """The OpenAI server's default: 1024 on H100/H200-class GPUs, else 256."""
    return 1024 if total_bytes >= LARGE_GPU_BYTES and "a100" not in gpu_name.lower() else 256


def floor_utilization(value: float) -> float:
    """Round a memory fraction down to the 2 decimals people pass on the command line."""
    return math.floor(value * 100 + 1e-9) / 100


def requested_bytes(total_bytes: int, utilization: float) -> int:
    """vLLM's request at start-up: ceil(total x --gpu-memory-utilization) (vllm/v1/worker/utils.py)."""
    return math.ceil(total_bytes * utilization)


def utilization_within(total_bytes: int, free_bytes: int) -> float:
    """The largest 2-decimal utilisation whose request fits in free_bytes."""
    utilization = floor_utilization(free_bytes / total_bytes)
    while utilization > 0 and requested_bytes(total_bytes, utilization) > free_bytes:
        utilization = round(utilization - 0.01, 2)
    return max(utilization, 0.0)


@dataclass(frozen=True)
class FlagChange:
    """Set (or add) one vLLM flag; value None means a flag without a value, such as --enforce-eager.

    With remove=True the flag is taken out of the command line instead (e.g. a forced --moe-backend, so that vLLM
    picks the kernel itself); value then says whether the flag takes a value: None for a switch such as
    --enable-eplb, otherwise the value seen in the log ("" when it is not known).
    """

    flag: str
    value: str | None
    reason: str
    remove: bool = False

    def argv(self) -> tuple[str, ...]:
        if self.remove:
            return ()
        return (self.flag,) if self.value is None else (self.flag, self.value)

    def render(self) -> str:
        if self.remove:
            return f"remove {self.flag}"
        return self.flag if self.value is None else f"{self.flag} {self.value}"


def apply_flag_changes(argv: tuple[str, ...], changes: tuple[FlagChange, ...]) -> tuple[str, ...]:
    """Replace each flag's value in argv (both '--flag value' and '--flag=value'), append it, or remove it."""
    result = list(argv)
    for change in changes:
        index = _find(result, change.flag)
        if change.remove:
            if index is not None:
                takes_value = change.value is not None and "=" not in result[index]
                has_value = takes_value and index + 1 < len(result) and not result[index + 1].startswith("-")
                del result[index : index + (2 if has_value else 1)]
            continue
        if index is None:
            result.extend(change.argv())
            continue
        # _find matched the name before any "=", in any spelling: a token holding "=" carries its own value
        if "=" in result[index]:
            result[index : index + 1] = list(change.argv())
        elif change.value is None:
            continue
        elif index + 1 < len(result) and not result[index + 1].startswith("--"):
            result[index + 1] = change.value
        else:
            result.insert(index + 1, change.value)
    return tuple(result)


def flag_value(argv: tuple[str, ...], flag: str) -> str | None:
    """The value of --flag in argv, or None."""
    index = _find(list(argv), flag)
    if index is None:
        return None
    token = argv[index]
    if "=" in token:
        return token.split("=", 1)[1]
    return argv[index + 1] if index + 1 < len(argv) else None


def _find(argv: list[str], flag: str) -> int | None:
    # vLLM's parser takes --max-num-seqs and --max_num_seqs alike
    spellings = {flag, flag.replace("_", "-"), "--" + flag.removeprefix("--").replace("-", "_")}
    for index, token in enumerate(argv):
        name = token.split("=", 1)[0]
        if name in spellings:
            return index
    return None
