"""The stack file (YAML): the LLM server command, the TTS server command, and how to reach and check each."""

from __future__ import annotations

import shlex
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import yaml

from comic_narrator.errors import GpuError
from comic_narrator.gpu.sizes import parse_bytes

Mode = Literal["coreside", "timeshare", "auto"]
Role = Literal["llm", "tts"]


@dataclass(frozen=True)
class TenantSpec:
    """One server of the stack."""

    name: str
    role: Role
    command: tuple[str, ...]
    url: str
    health_path: str = "/health"
    ready_pattern: str | None = None
    """A log line that must appear besides a healthy /health (the LLM's KV line)."""
    release_path: str | None = None
    """The release protocol's endpoint (comic_narrator.gpu.release), for a tenant that keeps cached blocks."""
    memory_path: str | None = None
    boot_timeout_s: float = 900.0
    retries: int = 2
    """Bounded re-boots with the doctor's fix after a failed boot."""
    env: tuple[tuple[str, str], ...] = ()
    cwd: Path | None = None
    footprint_bytes: int | None = None
    """The tenant's steady GPU footprint, when measured (mode auto decides with it)."""
    stop_command: tuple[str, ...] = ()
    """Run by `down` before signalling the process group (e.g. `docker stop NAME` for a container)."""


@dataclass(frozen=True)
class StackFile:
    llm: TenantSpec
    tts: TenantSpec | None
    state_dir: Path
    gpu_index: int = 0
    gpu_memory_bytes: int | None = None
    """The GPU's size when NVML is absent (as --gpu-memory)."""
    headroom_bytes: int = 512 * 1024**2
    mode: Mode = "coreside"
    """coreside: both stay resident; timeshare: the LLM sleeps while the TTS works; auto: time-share only when
    the TTS (footprint + CUDA context + headroom) does not fit beside the booted LLM."""
    auto_fix: bool = True
    """Apply the preflight's and the doctor's flag fixes instead of stopping."""
    preflight: bool = True
    """Check NVML free memory against the LLM's request before booting it."""


def _command(value: Any, where: str) -> tuple[str, ...]:
    if isinstance(value, str):
        return tuple(shlex.split(value))
    if isinstance(value, list) and value and all(isinstance(v, str | int | float) for v in value):
        return tuple(str(v) for v in value)
    raise GpuError(f"{where}.command must be a string or a list of strings")


def _loopback_publish(command: tuple[str, ...]) -> tuple[str, ...]:
    """`docker run -p 8000:8000` publishes on every host interface: publish on 127.0.0.1 unless an IP is given."""
    out = list(command)
    for index, token in enumerate(out):
        value_index = index + 1 if token in ("-p", "--publish") else None
        if value_index is not None and value_index < len(out) and out[value_index].count(":") == 1:
            out[value_index] = "127.0.0.1:" + out[value_index]
        elif token.startswith("--publish=") and token.count(":") == 1:
            out[index] = "--publish=127.0.0.1:" + token.split("=", 1)[1]
    return tuple(out)


def _loopback(role: Role, command: tuple[str, ...]) -> tuple[str, ...]:
    """vLLM binds every interface unless told: bind it to 127.0.0.1 when the command names no --host."""
    if command and Path(command[0]).name in ("docker", "podman"):
        return _loopback_publish(command)
    is_vllm = any("vllm" in part for part in command[:4])
    if role == "llm" and is_vllm and not any(p == "--host" or p.startswith("--host=") for p in command):
        return (*command, "--host", "127.0.0.1")
    return command


def _tenant(raw: Any, role: Role, base: Path) -> TenantSpec:
    if not isinstance(raw, dict):
        raise GpuError(f"stack file: '{role}' must be a mapping with at least command and url")
    if "command" not in raw or "url" not in raw:
        raise GpuError(f"stack file: '{role}' needs command and url")
    command = _loopback(role, _command(raw["command"], role))
    env = raw.get("env") or {}
    if not isinstance(env, dict):
        raise GpuError(f"stack file: {role}.env must be a mapping")
    footprint = raw.get("footprint")
    cwd = raw.get("cwd")
    return TenantSpec(
        name=str(raw.get("name", role)),
        role=role,
        command=command,
        url=str(raw["url"]).rstrip("/"),
        health_path=str(raw.get("health", "/health")),
        ready_pattern=raw.get("ready_line", "GPU KV cache size" if role == "llm" else None),
        release_path=raw.get("release", "/v1/gpu/release" if role == "tts" else None),
        memory_path=raw.get("memory", "/v1/gpu/memory" if role == "tts" else None),
        boot_timeout_s=float(raw.get("boot_timeout_s", 900 if role == "llm" else 300)),
        retries=int(raw.get("retries", 2)),
        env=tuple((str(k), str(v)) for k, v in env.items()),
        cwd=(base / str(cwd)) if cwd else None,
        footprint_bytes=parse_bytes(str(footprint)) if footprint is not None else None,
        stop_command=_command(raw["stop"], f"{role}.stop") if raw.get("stop") else (),
    )


def parse_stack(data: Any, base: Path) -> StackFile:
    """Validate a parsed stack file; relative paths are taken from `base` (the file's folder)."""
    if not isinstance(data, dict) or "llm" not in data:
        raise GpuError("stack file: expected a mapping with an 'llm' section (and usually a 'tts' one)")
    mode = str(data.get("mode", "coreside"))
    modes: dict[str, Mode] = {"coreside": "coreside", "timeshare": "timeshare", "auto": "auto"}
    if mode not in modes:
        raise GpuError(f"stack file: mode is {mode!r}; use coreside, timeshare or auto")
    memory = data.get("gpu_memory")
    state_dir = Path(str(data.get("state_dir", ".gpu-stack"))).expanduser()
    return StackFile(
        llm=_tenant(data["llm"], "llm", base),
        tts=_tenant(data["tts"], "tts", base) if data.get("tts") else None,
        state_dir=state_dir if state_dir.is_absolute() else base / state_dir,
        gpu_index=int(data.get("gpu", 0)),
        gpu_memory_bytes=parse_bytes(str(memory)) if memory else None,
        headroom_bytes=parse_bytes(str(data.get("headroom", "512MiB"))),
        mode=modes[mode],
        auto_fix=bool(data.get("auto_fix", True)),
        preflight=bool(data.get("preflight", True)),
    )


def load_stack(path: Path) -> StackFile:
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise GpuError(f"cannot read the stack file ({exc.strerror})", path=path) from exc
    except yaml.YAMLError as exc:
        raise GpuError(f"the stack file is not valid YAML ({exc})", path=path) from exc
    return parse_stack(data, path.resolve().parent)
