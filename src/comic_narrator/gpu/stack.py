"""`gpu up | down`: preflight with NVML, release the TTS cache, start the LLM first, then the TTS; stop them.

Order matters (DESIGN.md, vLLM facts): vLLM's start-up check and its profiling read device-wide free memory, so
the TTS tenant releases its cached blocks first, vLLM boots alone until /health answers and its KV line is
logged, and only then does the TTS start. A failed boot is read by the doctor and retried with its fix.
"""

from __future__ import annotations

import os
import signal
import subprocess
import time
import urllib.error
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path

from comic_narrator.errors import GpuError, ServerError
from comic_narrator.gpu import doctor, release
from comic_narrator.gpu.accounting import describe_snapshot
from comic_narrator.gpu.flags import (
    DEFAULT_GPU_MEMORY_UTILIZATION,
    FlagChange,
    apply_flag_changes,
    flag_value,
    requested_bytes,
    utilization_within,
)
from comic_narrator.gpu.nvml import GpuSnapshot
from comic_narrator.gpu.plan import CUDA_CONTEXT_BYTES
from comic_narrator.gpu.sizes import format_gib
from comic_narrator.gpu.stackfile import StackFile, TenantSpec
from comic_narrator.gpu.state import StackState, TenantState, clear_state, read_state, write_state

Probe = Callable[[int], GpuSnapshot]
Log = Callable[[str], None]


def http_ok(url: str, timeout_s: float = 2.0) -> bool:
    try:
        with urllib.request.urlopen(url, timeout=timeout_s) as response:
            return 200 <= int(response.status) < 300
    except (urllib.error.URLError, OSError, ValueError):
        return False


def _post(url: str, timeout_s: float) -> None:
    request = urllib.request.Request(url, method="POST", data=b"")
    try:
        with urllib.request.urlopen(request, timeout=timeout_s):
            return
    except (urllib.error.URLError, OSError) as exc:
        raise ServerError(f"POST {url} failed ({exc})") from exc


@dataclass(frozen=True)
class BootAttempt:
    tenant: str
    attempt: int
    command: tuple[str, ...]
    log_path: Path
    outcome: str
    duration_s: float


class Stack:
    """Starts and stops one stack file's servers. The constructor does no I/O."""

    def __init__(self, stack: StackFile, probe: Probe | None, log: Log, poll_s: float = 0.5) -> None:
        self.stack = stack
        self._probe = probe
        self._log = log
        self._poll_s = poll_s
        self.attempts: list[BootAttempt] = []

    # -- probing -------------------------------------------------------------------------------------
    def snapshot(self) -> GpuSnapshot | None:
        if self._probe is None:
            return None
        try:
            return self._probe(self.stack.gpu_index)
        except GpuError as exc:
            if self.stack.gpu_memory_bytes is None:
                raise GpuError(f"{exc}; or set gpu_memory in the stack file") from exc
            self._log(f"nvml: {exc} -> using gpu_memory {format_gib(self.stack.gpu_memory_bytes)} GiB, no accounting")
            self._probe = None
            return None

    def _report(self, when: str, snap: GpuSnapshot | None, tenants: tuple[TenantState, ...] = ()) -> None:
        if snap is None:
            return
        for line in describe_snapshot(snap, tenants):
            self._log(f"{when}: {line}")

    # -- up ------------------------------------------------------------------------------------------
    def up(self) -> StackState:
        stack = self.stack
        if stack.gpu_memory_bytes is None and self._probe is None:
            raise GpuError("no GPU size: NVML is unavailable; give gpu_memory in the stack file or --gpu-memory")
        snap = self.snapshot()
        self._report("preflight", snap)
        tenants: list[TenantState] = []
        tts_running = stack.tts is not None and http_ok(stack.tts.url + stack.tts.health_path)
        if stack.tts is not None and tts_running:
            self._release(stack.tts)
            snap = self.snapshot()
            self._report("after release", snap)
        llm = stack.llm
        if http_ok(llm.url + llm.health_path):
            self._log(f"{llm.name}: already healthy at {llm.url}; adopted")
            tenants.append(self._adopted(llm))
        else:
            if stack.mode != "coreside":
                llm = self._with_sleep_mode(llm)
            llm = self._preflight(llm, snap)
            tenants.append(self._boot(llm))
        booted = not tenants[0].adopted
        timeshare = booted and (stack.mode == "timeshare" or (stack.mode == "auto" and not self._tts_fits(tenants[0])))
        if timeshare:
            self._log(f"{llm.name}: time-share: POST /sleep?level=1 (frees weights and KV; ~65 s for 59 GiB)")
            self._log(f"{llm.name}: asleep after {self.sleep_llm(1):.1f} s; wake it with POST /wake_up")
        write_state(stack.state_dir, StackState(stack.gpu_index, tuple(tenants), timeshare))
        if stack.tts is not None:
            if tts_running:
                self._log(f"{stack.tts.name}: already healthy at {stack.tts.url}; adopted (it released first)")
                tenants.append(self._adopted(stack.tts))
            else:
                tenants.append(self._boot(stack.tts))
        state = StackState(stack.gpu_index, tuple(tenants), timeshare)
        write_state(stack.state_dir, state)
        self._report("up", self.snapshot(), state.tenants)
        return state

    def _tts_fits(self, llm: TenantState) -> bool:
        """Mode auto: does the TTS (footprint + CUDA context + headroom) fit beside the booted LLM?"""
        tts = self.stack.tts
        if tts is None or tts.footprint_bytes is None:
            self._log("auto: no TTS footprint in the stack file; co-residing")
            return True
        need = tts.footprint_bytes + CUDA_CONTEXT_BYTES + self.stack.headroom_bytes
        snap = self.snapshot()
        if snap is not None:
            free = snap.free_bytes
        else:
            assert self.stack.gpu_memory_bytes is not None
            text = flag_value(llm.command, "--gpu-memory-utilization")
            utilization = float(text) if text else DEFAULT_GPU_MEMORY_UTILIZATION
            used = requested_bytes(self.stack.gpu_memory_bytes, utilization) + CUDA_CONTEXT_BYTES
            free = self.stack.gpu_memory_bytes - used
        fits = free >= need
        verdict = "co-residing" if fits else "time-sharing"
        self._log(f"auto: the TTS needs {format_gib(need)} GiB, {format_gib(free)} GiB is free: {verdict}")
        return fits

    def _adopted(self, spec: TenantSpec) -> TenantState:
        pid = 0
        if spec.memory_path:
            try:
                pid = release.read_memory(spec.url, spec.memory_path).pid
            except ServerError:
                pid = 0
        pgid = os.getpgid(pid) if pid and _alive(pid) else 0
        return TenantState(
            spec.name,
            spec.role,
            pid,
            pgid,
            spec.url,
            spec.health_path,
            "",
            spec.command,
            True,
            time.time(),
            spec.memory_path,
            spec.stop_command,
        )

    def _release(self, tts: TenantSpec) -> None:
        if not tts.release_path:
            self._log(f"{tts.name}: running, and has no release endpoint: its cached blocks stay")
            return
        try:
            report = release.request_release(tts.url, tts.release_path)
        except ServerError as exc:
            self._log(f"{tts.name}: release failed ({exc}); its cached blocks stay")
            return
        self._log(
            f"{tts.name}: released {format_gib(report.released_bytes)} GiB of cached blocks "
            f"(reserved {format_gib(report.reserved_before_bytes)} -> {format_gib(report.reserved_after_bytes)} GiB, "
            f"pid {report.pid}, {report.backend})"
        )

    def _with_sleep_mode(self, llm: TenantSpec) -> TenantSpec:
        changes = [FlagChange("--enable-sleep-mode", None, "time-share")]
        if flag_value(llm.command, "--mm-processor-cache-gb") is None:
            # A woken vLLM 0.20 has lost the images its API server's cache says it holds (doctor: mm-cache-after-sleep).
            changes.append(FlagChange("--mm-processor-cache-gb", "0", "time-share: images survive a sleep"))
        command = apply_flag_changes(llm.command, tuple(changes))
        return replace(llm, command=command, env=(*llm.env, ("VLLM_SERVER_DEV_MODE", "1")))

    def _preflight(self, llm: TenantSpec, snap: GpuSnapshot | None) -> TenantSpec:
        if snap is None or not self.stack.preflight:
            why = "disabled in the stack file" if snap is not None else "no NVML reading of free memory"
            self._log(f"{llm.name}: preflight skipped ({why})")
            return llm
        text = flag_value(llm.command, "--gpu-memory-utilization")
        utilization = float(text) if text else DEFAULT_GPU_MEMORY_UTILIZATION
        wanted = requested_bytes(snap.total_bytes, utilization)
        seen = snap.free_bytes - CUDA_CONTEXT_BYTES
        if seen >= wanted:
            self._log(
                f"{llm.name}: preflight ok: utilisation {utilization:g} requests {format_gib(wanted)} GiB; "
                f"{format_gib(seen)} GiB will be free after its CUDA context"
            )
            return llm
        fitting = utilization_within(snap.total_bytes, max(seen, 0))
        message = (
            f"{llm.name}: preflight: vLLM would see {format_gib(seen)}/{format_gib(snap.total_bytes)} GiB free, "
            f"less than utilisation {utilization:g} requests ({format_gib(wanted)} GiB)"
        )
        if not self.stack.auto_fix or fitting <= 0:
            raise GpuError(f"{message}; free memory or pass --gpu-memory-utilization {fitting:.2f}")
        self._log(f"{message}; using --gpu-memory-utilization {fitting:.2f}")
        change = FlagChange("--gpu-memory-utilization", f"{fitting:.2f}", "preflight")
        return replace(llm, command=apply_flag_changes(llm.command, (change,)))

    def _boot(self, spec: TenantSpec) -> TenantState:
        command = spec.command
        for attempt in range(1, spec.retries + 2):
            log_path = self.stack.state_dir / f"{spec.name}-{attempt}.log"
            self._log(f"{spec.name}: attempt {attempt}: {' '.join(command)} (log {log_path})")
            started = time.monotonic()
            state, outcome = self._start_and_wait(spec, command, log_path)
            elapsed = time.monotonic() - started
            self.attempts.append(BootAttempt(spec.name, attempt, command, log_path, outcome, elapsed))
            if state is not None:
                self._log(f"{spec.name}: ready after {elapsed:.1f} s (pid {state.pid})")
                return state
            report = doctor.diagnose(log_path.read_text(encoding="utf-8", errors="replace"))
            fixes = tuple(fix for found in report.failures for fix in found.fixes[:1])
            causes = "; ".join(f"{d.kind}: {d.cause}" for d in report.failures) or outcome
            self._log(f"{spec.name}: attempt {attempt} failed after {elapsed:.1f} s: {causes}")
            if spec.role != "llm" or not fixes or not self.stack.auto_fix or attempt > spec.retries:
                break
            fixed = apply_flag_changes(command, fixes)
            if fixed == command:  # e.g. "remove --moe-backend" when the environment, not a flag, chose the kernel
                self._log(f"{spec.name}: the doctor's fix ({' '.join(f.render() for f in fixes)}) changes nothing")
                break
            command = fixed
            self._log(f"{spec.name}: retrying with {' '.join(f.render() for f in fixes)}")
        last = self.attempts[-1]
        raise ServerError(f"{spec.name} did not start ({last.outcome}); see {last.log_path}")

    def _start_and_wait(
        self, spec: TenantSpec, command: tuple[str, ...], log_path: Path
    ) -> tuple[TenantState | None, str]:
        log_path.parent.mkdir(parents=True, exist_ok=True)
        env = {**os.environ, **dict(spec.env)}
        with log_path.open("wb") as log_file:
            try:
                proc = subprocess.Popen(
                    command,
                    stdout=log_file,
                    stderr=subprocess.STDOUT,
                    stdin=subprocess.DEVNULL,
                    env=env,
                    cwd=spec.cwd,
                    start_new_session=True,
                )
            except OSError as exc:
                return None, f"cannot run {command[0]!r} ({exc.strerror})"
        deadline = time.monotonic() + spec.boot_timeout_s
        while time.monotonic() < deadline:
            code = proc.poll()
            if code is not None:
                return None, f"exited with status {code}"
            healthy = http_ok(spec.url + spec.health_path)
            logged = spec.ready_pattern is None or spec.ready_pattern in log_path.read_text(errors="replace")
            if healthy and logged:
                state = TenantState(
                    spec.name,
                    spec.role,
                    proc.pid,
                    proc.pid,
                    spec.url,
                    spec.health_path,
                    str(log_path),
                    command,
                    False,
                    time.time(),
                    spec.memory_path,
                    spec.stop_command,
                )
                return state, "ready"
            time.sleep(self._poll_s)
        _stop_group(proc.pid, grace_s=10.0)
        return None, f"not healthy within {spec.boot_timeout_s:.0f} s"

    # -- time-share (vLLM sleep mode) -----------------------------------------------------------------
    def sleep_llm(self, level: int = 1) -> float:
        """Put the LLM to sleep (level 1 keeps weights in CPU memory, level 2 drops them); returns seconds taken."""
        started = time.monotonic()
        _post(f"{self.stack.llm.url}/sleep?level={level}", timeout_s=900)
        return time.monotonic() - started

    def wake_llm(self) -> float:
        """Wake the LLM from sleep mode; returns seconds taken (measured ~1.4 s for 59 GiB of weights)."""
        started = time.monotonic()
        _post(f"{self.stack.llm.url}/wake_up", timeout_s=900)
        return time.monotonic() - started

    # -- down ----------------------------------------------------------------------------------------
    def down(self, grace_s: float = 30.0) -> tuple[str, ...]:
        """Stop what this stack started, TTS first, then the LLM; adopted servers are left running."""
        state = read_state(self.stack.state_dir)
        if state is None:
            return ("nothing is up (no state file)",)
        said: list[str] = []
        for tenant in reversed(state.tenants):
            if tenant.adopted:
                said.append(f"{tenant.name}: adopted at up, left running")
                continue
            if tenant.stop_command:
                subprocess.run(tenant.stop_command, check=False, timeout=grace_s + 30, capture_output=True)
            stopped = _stop_group(tenant.pgid, grace_s)
            said.append(f"{tenant.name}: {'stopped' if stopped else 'was not running'} (pid {tenant.pid})")
        clear_state(self.stack.state_dir)
        return tuple(said)


def _alive(pid: int) -> bool:
    try:
        reaped, _status = os.waitpid(pid, os.WNOHANG)
        if reaped == pid:
            return False
    except ChildProcessError:
        pass
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _stop_group(pgid: int, grace_s: float) -> bool:
    """SIGTERM the tenant's process group, then SIGKILL after grace_s. False if it was already gone."""
    if pgid <= 0 or not _alive(pgid):
        return False
    try:
        os.killpg(pgid, signal.SIGTERM)
    except ProcessLookupError:
        return False
    deadline = time.monotonic() + grace_s
    while time.monotonic() < deadline:
        if not _alive(pgid):
            return True
        time.sleep(0.2)
    try:
        os.killpg(pgid, signal.SIGKILL)
    except ProcessLookupError:
        return True
    time.sleep(0.2)
    _alive(pgid)
    return True
