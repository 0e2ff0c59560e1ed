"""The running stack's state file (pids, process groups, logs), written atomically in the stack's state folder."""

from __future__ import annotations

import json
import os
import tempfile
from dataclasses import asdict, dataclass
from pathlib import Path

from comic_narrator.errors import GpuError

STATE_FILE = "state.json"


@dataclass(frozen=True)
class TenantState:
    name: str
    role: str
    pid: int
    pgid: int
    url: str
    health_path: str
    log_path: str
    command: tuple[str, ...]
    adopted: bool
    """Found already running (not started by this stack): `down` leaves it alone."""
    started_at_s: float
    memory_path: str | None = None
    stop_command: tuple[str, ...] = ()


@dataclass(frozen=True)
class StackState:
    gpu_index: int
    tenants: tuple[TenantState, ...]
    timeshare: bool = False
    """The LLM was put to sleep so that the TTS fits (it must be woken for LLM work)."""


def write_state(state_dir: Path, state: StackState) -> Path:
    state_dir.mkdir(parents=True, exist_ok=True)
    target = state_dir / STATE_FILE
    handle, tmp = tempfile.mkstemp(dir=state_dir, prefix=".state.", suffix=".tmp")
    with os.fdopen(handle, "w", encoding="utf-8") as out:
        json.dump(asdict(state), out, indent=2)
    os.replace(tmp, target)
    return target


def read_state(state_dir: Path) -> StackState | None:
    path = state_dir / STATE_FILE
    if not path.is_file():
        return None
    try:
        raw = json.loads(path.read_text(encoding="utf-8"))
        tenants = tuple(
            TenantState(**{**t, "command": tuple(t["command"]), "stop_command": tuple(t.get("stop_command", ()))})
            for t in raw["tenants"]
        )
        return StackState(int(raw["gpu_index"]), tenants, bool(raw.get("timeshare", False)))
    except (OSError, KeyError, TypeError, json.JSONDecodeError) as exc:
        raise GpuError(
            f"the stack state file is unreadable ({exc}); remove it after checking no server runs", path=path
        ) from exc


def clear_state(state_dir: Path) -> None:
    (state_dir / STATE_FILE).unlink(missing_ok=True)
