"""A vLLM log as its messages: what Docker, Kubernetes, journald, colours and vLLM itself put before each line, removed.

The doctor matches vLLM's wording, so every line is reduced to the message vLLM raised or logged, whichever tool
captured it. Prefixes handled, outermost first, any number of times:
- `docker compose logs`: `vllm-1  | ` (service name and a bar);
- `docker logs -t` / `kubectl logs --timestamps`: an RFC 3339 time, `2025-01-02T03:04:05.123456789Z `;
- journald: `Jan 02 03:04:05 host vllm[123]: `;
- vLLM's process tags: `(EngineCore pid=7)`, `(EngineCore_DP0 pid=7)`, `(APIServer pid=7)`, `(VllmWorker rank=0 pid=7)`,
  `(Worker_TP0 pid=7)`, Ray's `(RayWorkerWrapper pid=7, ip=10.0.0.2)`;
- vLLM's logger format `LEVEL mm-dd hh:mm:ss [file.py:N] ` (0.10 onwards; `file.py:N] ` without the bracket in
  releases before 0.6, a shortened path such as `[model_executor/.../fp8_utils.py:12]` at DEBUG level);
- ANSI colour codes anywhere in the line (vLLM colours the level and the process tag on a terminal).
"""

from __future__ import annotations

import re

_ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")
_PREFIXES = (
    re.compile(r"^[A-Za-z0-9][\w.-]*\s*\|\s?"),
    re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d+)?(?:Z|[+-]\d\d:?\d\d)\s"),
    re.compile(r"^[A-Z][a-z]{2} [ \d]\d \d\d:\d\d:\d\d \S+ [\w.@/-]+(?:\[\d+\])?: "),
    re.compile(r"^\([\w .=-]*\bpid=\d+(?:, ip=[^)]*)?\)\s?"),
    re.compile(r"^(?:DEBUG|INFO|WARNING|WARN|ERROR|CRITICAL) \d\d-\d\d \d\d:\d\d:\d\d(?:\.\d+)? \[?[\w./-]+:\d+\] ?"),
)
_MAX_PREFIXES = 8


def message_of(line: str) -> str:
    """One log line without its prefixes and colour codes (the message itself, right-stripped)."""
    text = _ANSI.sub("", line).rstrip("\r\n ")
    for _ in range(_MAX_PREFIXES):
        for prefix in _PREFIXES:
            stripped = prefix.sub("", text, count=1)
            if stripped != text:
                text = stripped
                break
        else:
            break
    return text.rstrip()


_LEVEL = re.compile(r"\b(DEBUG|INFO|WARNING|WARN|ERROR|CRITICAL) \d\d-\d\d \d\d:\d\d:\d\d")


def level_of(line: str) -> str | None:
    """vLLM's log level of a line, or None for lines its logger did not write (tracebacks, pasted messages)."""
    match = _LEVEL.search(_ANSI.sub("", line))
    return match.group(1) if match else None


def messages(text: str) -> str:
    """Every line of a log reduced to its message, joined by newlines again."""
    return "\n".join(message_of(line) for line in text.splitlines())


_EXCEPTION = re.compile(r"^(?:[A-Za-z_][\w]*\.)*[A-Za-z_]\w*(?:Error|Exception|Interrupt|Exit)(?::\s.*)?$")
_WRAPPERS = re.compile(
    r"Engine core initialization failed|EngineCore failed to start|Engine process failed to start|"
    r"WorkerProc initialization failed|Worker failed with error|failed to start\.? See"
)


def root_error(text: str) -> str | None:
    """The exception line that names the cause of a crash (vLLM's own wrappers skipped), else the last ERROR line.

    Tracebacks print the root cause first; the API server then raises its generic "Engine core initialization
    failed", which says nothing about why.
    """
    quiet = ("DEBUG", "INFO", "WARNING", "WARN")
    lines = [message_of(line) for line in text.splitlines() if level_of(line) not in quiet]
    exceptions = [line for line in lines if _EXCEPTION.match(line)]
    causes = [line for line in exceptions if not _WRAPPERS.search(line)]
    if causes:
        return causes[0]
    if exceptions:
        return exceptions[0]
    errors = [message_of(line) for line in text.splitlines() if level_of(line) in ("ERROR", "CRITICAL")]
    errors = [line for line in errors if line]
    return errors[-1] if errors else None
