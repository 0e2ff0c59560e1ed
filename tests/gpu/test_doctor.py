"""The doctor on real vLLM 0.20.0 boot logs (H200), on vLLM's own failure wording across releases, and on the prefixes
that Docker, journald, colours and vLLM put before a line. Kernel failures: test_doctor_kernels.py."""

from __future__ import annotations

import json

import pytest

from comic_narrator.gpu.doctor import diagnose, kv_line_seen
from comic_narrator.gpu.flags import FlagChange, apply_flag_changes, requested_bytes
from comic_narrator.gpu.kv import kv_layout
from comic_narrator.gpu.model_info import model_info_from_config
from comic_narrator.gpu.render import report_json, report_text
from comic_narrator.gpu.sizes import GIB, gib_to_bytes

from .conftest import CONFIGS, DATA, LOGS

RUN = DATA / "device-run"


def _read(path: str) -> str:
    return (DATA / path).read_text()


@pytest.mark.parametrize(
    ("log", "kv_gib", "tokens", "concurrency"),
    [
        ("logs/b-bt4096.log", 24.21, 844_688, 100.90),
        ("logs/d-cotenant-released.log", 24.21, 844_688, 100.90),
        ("logs/g-graphs.log", 23.96, 836_304, 99.85),
        ("logs/h-sleep.log", 24.21, 844_688, 100.90),
        ("device-run/order-vllm.log", 24.21, 844_688, 100.90),
        ("device-run/retry-vllm-attempt2.log", 8.83, 308_112, 36.80),
    ],
)
def test_healthy_boots_report_their_figures(log: str, kv_gib: float, tokens: int, concurrency: float) -> None:
    report = diagnose(_read(log))
    assert report.ok and report.vllm_version == "0.20.0"
    assert report.weights_bytes == gib_to_bytes(58.89)
    assert report.kv_cache_bytes == gib_to_bytes(kv_gib)
    assert report.kv_cache_tokens == tokens and report.max_concurrency == concurrency
    assert report.concurrency_max_model_len == 32768 and report.attention_block_size == 2096
    assert report.args.max_num_batched_tokens == 4096 and report.args.max_num_seqs == 2


def test_graph_memory_is_read() -> None:
    report = diagnose((LOGS / "g-graphs.log").read_text())
    assert report.cudagraph_estimate_bytes == gib_to_bytes(0.09)
    assert report.cudagraph_actual_bytes == gib_to_bytes(0.04)
    assert not report.args.enforce_eager


@pytest.mark.parametrize("log", ["logs/c-cotenant-cached.log", "device-run/retry-vllm-attempt1.log"])
def test_free_memory_failure_from_a_cotenants_cached_blocks(log: str) -> None:
    report = diagnose(_read(log))
    assert not report.ready
    assert [d.kind for d in report.failures] == ["free-memory"]
    found = report.failures[0]
    assert found.line.startswith("ValueError: Free memory on device cuda:0")
    assert report.device_total_bytes == gib_to_bytes(139.8)
    fix = found.fixes[0]
    assert fix.flag == "--gpu-memory-utilization"
    # The fix must pass vLLM's own check (ceil(U x total) <= free) with the 0.5 GiB margin.
    assert report.device_free_bytes is not None
    assert requested_bytes(gib_to_bytes(139.8), float(fix.value or 1)) <= report.device_free_bytes - 512 * 2**20
    assert "empty_cache" in found.advice


def test_the_free_memory_fix_is_what_booted_on_the_device() -> None:
    # The stack applied the doctor's fix of attempt 1 (0.49 then, before the 0.5 GiB margin) and attempt 2 booted.
    first = diagnose((RUN / "retry-vllm-attempt1.log").read_text())
    second = diagnose((RUN / "retry-vllm-attempt2.log").read_text())
    assert second.ok and second.args.gpu_memory_utilization == 0.49
    assert float(first.failures[0].fixes[0].value or 0) <= 0.49


def test_no_kv_memory_real_log() -> None:
    report = diagnose((RUN / "fail-nokv.log").read_text())  # utilisation 0.42 < weights 58.89 GiB / 139.8
    assert report.kv_cache_bytes == gib_to_bytes(-0.96)
    assert [d.kind for d in report.failures] == ["no-kv-memory"]
    fixes = [f.render() for f in report.failures[0].fixes]
    assert fixes[0] == "--max-num-batched-tokens 2048"
    assert "--gpu-memory-utilization 0.47" in fixes


def test_max_model_len_real_log_and_the_fix_fits() -> None:
    report = diagnose((RUN / "fail-maxlen.log").read_text())
    assert [d.kind for d in report.failures] == ["max-model-len"]
    fix = report.failures[0].fixes[0]
    assert fix.render() == "--max-model-len 67072"
    # Our KV arithmetic gives the same longest context for the pool this boot had (0.44 GiB, rounded in the log).
    info = model_info_from_config(json.loads((CONFIGS / "nemotron-3-nano-30b-a3b.config.json").read_text()))
    layout = kv_layout(info)
    assert report.kv_cache_bytes is not None
    estimate = layout.estimated_max_model_len(report.kv_cache_bytes, 262_144)
    assert abs(estimate - 67_072) <= 2 * layout.block_size_tokens


def test_mamba_blocks_real_log() -> None:
    report = diagnose((RUN / "fail-mamba.log").read_text())
    assert report.kv_cache_tokens == 180_256 and report.cudagraph_estimate_bytes == gib_to_bytes(0.64)
    assert [d.kind for d in report.failures] == ["mamba-blocks"]
    assert report.failures[0].fixes[0].render() == "--max-num-seqs 434"


def test_a_fix_is_applied_to_a_vllm_command_line() -> None:
    report = diagnose((RUN / "fail-mamba.log").read_text())
    argv = ("vllm", "serve", "m", "--max-num-seqs=1024", "--gpu-memory-utilization", "0.48")
    fixed = apply_flag_changes(argv, report.failures[0].fixes[:1])
    assert fixed == ("vllm", "serve", "m", "--max-num-seqs", "434", "--gpu-memory-utilization", "0.48")


# The wording below is vLLM 0.20.0's (vllm/config/vllm.py, vllm/platforms/cuda.py, vllm/v1/worker/gpu_worker.py)
# and an older release's for the context length; the H200 cannot produce these failures itself.
@pytest.mark.parametrize(
    ("line", "kind", "fix"),
    [
        (
            "ValueError: The quantization method fp8 is not supported for the current GPU. Minimum capability: 89. "
            "Current capability: 86.",
            "quantization-unsupported",
            None,
        ),
        (
            "ValueError: Bfloat16 is only supported on GPUs with compute capability of at least 8.0. Your Tesla T4 "
            "GPU has compute capability 7.5. You can use float16 instead by explicitly setting the `dtype` flag in "
            "CLI, for example: --dtype=half.",
            "bf16-unsupported",
            "--dtype half",
        ),
        (
            "ValueError: No valid attention backend found for cuda with AttentionSelectorConfig(head_size=128, "
            "dtype=torch.bfloat16, kv_cache_dtype=fp8_e5m2). Reasons: {FLASH_ATTN: [kv_cache_dtype not supported]}.",
            "attention-backend",
            "--kv-cache-dtype auto",
        ),
        (
            "ValueError: The model's max seq len (131072) is larger than the maximum number of tokens that can be "
            "stored in KV cache (54320). Try increasing `gpu_memory_utilization` or decreasing `max_model_len`",
            "max-model-len",
            "--max-model-len 54320",
        ),
        (
            "AssertionError: Error in memory profiling. Initial free memory 20.1 GiB, current free memory 29.3 GiB. "
            "This happens when other processes sharing the same container release GPU memory",
            "profiling-disturbed",
            None,
        ),
    ],
)
def test_failures_in_vllms_wording(line: str, kind: str, fix: str | None) -> None:
    report = diagnose(f"(EngineCore pid=7) ERROR 11-30 16:10:43 [core.py:1136] {line}\n")
    assert [d.kind for d in report.failures] == [kind]
    fixes = report.failures[0].fixes
    assert (fixes[0].render() if fixes else None) == fix
    assert report.failures[0].cause


def test_cuda_oom_during_graph_capture_suggests_eager() -> None:
    text = (
        "non-default args: {'gpu_memory_utilization': 0.9}\n"
        "Capturing CUDA graphs (mixed prefill-decode, PIECEWISE):  40%\n"
        "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 1.50 GiB. GPU 0 has a total capacity of 31.36 "
        "GiB of which 1.02 GiB is free.\n"
    )
    report = diagnose(text)
    assert [f.render() for f in report.failures[0].fixes] == ["--enforce-eager", "--gpu-memory-utilization 0.85"]


def test_kv_line_and_partial_logs() -> None:
    text = (LOGS / "b-bt4096.log").read_text()
    head = text[: text.index("Available KV cache memory")]
    assert not kv_line_seen(head) and kv_line_seen(text)
    partial = diagnose(head)
    assert not partial.ready and not partial.failures and partial.weights_bytes == gib_to_bytes(58.89)


def test_images_lost_by_a_sleep_are_recognised_with_their_fix() -> None:
    # A real time-shared run on an H200 (vLLM 0.20.0, random-weight Qwen2-VL): a page read before a sleep was
    # sent again after the wake, by its hash only, and the woken engine no longer had it.
    report = diagnose((LOGS / "qwen2vl-sleep-mm-cache.log").read_text())
    assert report.args.enable_sleep_mode
    (found,) = [d for d in report.failures if d.kind == "mm-cache-after-sleep"]
    assert "Expected a cached item for mm_hash" in found.line
    assert [(f.flag, f.value) for f in found.fixes] == [("--mm-processor-cache-gb", "0")]
    fixed = apply_flag_changes(("vllm", "serve", "m", "--enable-sleep-mode"), found.fixes)
    assert fixed[-2:] == ("--mm-processor-cache-gb", "0")
    assert not [d for d in diagnose((LOGS / "h-sleep.log").read_text()).failures if d.kind == "mm-cache-after-sleep"]


def test_sleep_log_reports_its_args() -> None:
    report = diagnose((LOGS / "h-sleep.log").read_text())
    assert report.args.enable_sleep_mode and report.ok
    assert report.kv_cache_bytes is not None and report.kv_cache_bytes < 25 * GIB


# --- the free-memory check across vLLM releases, and the log prefixes around any line ---------------------------

FREE_MEMORY = [
    # (releases that print it, the line): 20.09 of 31.36 GiB free (an RTX 5090 with a co-tenant), utilisation 0.68
    (
        "0.14.0-0.20.0",
        "ValueError: Free memory on device cuda:0 (20.09/31.36 GiB) on startup is less than desired GPU memory "
        "utilization (0.68, 21.32 GiB). Decrease GPU memory utilization or reduce GPU memory used by other processes.",
    ),
    (
        "0.10.0-0.13.0",
        "ValueError: Free memory on device (20.09/31.36 GiB) on startup is less than desired GPU memory utilization "
        "(0.68, 21.32 GiB). Decrease GPU memory utilization or reduce GPU memory used by other processes.",
    ),
    ("pasted", "Free memory on device (20.09/31.36 GiB) is less than desired (21.32 GiB)"),
]


@pytest.mark.parametrize(("versions", "line"), FREE_MEMORY, ids=[v for v, _ in FREE_MEMORY])
def test_free_memory_in_every_phrasing_gets_the_utilisation_that_fits(versions: str, line: str) -> None:
    report = diagnose(f"(EngineCore_DP0 pid=9) ERROR 01-02 03:04:05 [core.py:1136] {line}\n")
    assert [d.kind for d in report.failures] == ["free-memory"]
    found = report.failures[0]
    assert found.line == line
    total, free = gib_to_bytes(31.36), gib_to_bytes(20.09)
    assert (report.device_total_bytes, report.device_free_bytes) == (total, free)
    fix = found.fixes[0]
    assert fix.render() == "--gpu-memory-utilization 0.62"  # (20.09 - 0.5) / 31.36 = 0.6247, rounded down
    assert requested_bytes(total, 0.62) <= free - 512 * 2**20 < requested_bytes(total, 0.63)
    assert "11.27 GiB" in found.cause and "21.32 GiB" in found.cause and "0.68" in found.cause


def test_the_short_form_takes_the_utilisation_from_the_args_line() -> None:
    text = "non-default args: {'gpu_memory_utilization': 0.68}\n" + FREE_MEMORY[2][1]
    assert "utilisation 0.68 asks for 21.32 GiB" in diagnose(text).failures[0].cause


def test_vllms_memory_summary_after_a_good_boot_is_not_the_failure() -> None:
    # vLLM 0.10.2 onwards logs this after sizing the KV pool; it starts with the same words.
    line = (
        "(EngineCore_DP0 pid=9) INFO 01-02 03:04:05 [gpu_worker.py:298] Free memory on device (20.09/31.36 GiB) on "
        "startup. Desired GPU memory utilization is (0.6, 18.82 GiB). Actual usage is 15.2 GiB for weight, 1.1 GiB "
        "for peak activation, 0.3 GiB for non-torch memory, and 0.04 GiB for CUDAGraph memory."
    )
    assert diagnose(line).failures == ()


CC = "ValueError: Free memory on device cuda:0 (68.77/139.8 GiB) on startup is less than desired GPU memory "
PREFIXES = [
    ("vllm 0.10 (no process tag)", "ERROR 11-30 16:10:43 [core.py:586] "),
    ("vllm 0.20 EngineCore", "(EngineCore pid=2931) ERROR 11-30 16:10:43 [core.py:1136] "),
    ("vllm 0.20 data parallel", "(EngineCore_DP0 pid=2931) ERROR 11-30 16:10:43 [core.py:1136] "),
    ("vllm API server", "(APIServer pid=2858) "),
    ("vllm worker", "(VllmWorker rank=0 pid=3001) ERROR 11-30 16:10:43 [multiproc_executor.py:546] "),
    ("ray worker", "(RayWorkerWrapper pid=3001, ip=10.0.0.2) ERROR 11-30 16:10:43 [worker_base.py:620] "),
    ("debug file path", "ERROR 11-30 16:10:43 [v1/engine/.../core.py:1136] "),
    ("before vllm 0.6", "ERROR 11-30 16:10:43 core.py:586] "),
    (
        "colour",
        "\x1b[1;36m(EngineCore_DP0 pid=2931)\x1b[0;0m \x1b[1;31mERROR\x1b[0m 11-30 16:10:43 [core.py:1136] ",
    ),
    ("docker compose", "vllm-1  | (EngineCore_DP0 pid=2931) ERROR 11-30 16:10:43 [core.py:1136] "),
    ("compose v1", "comic_vllm_1   | ERROR 11-30 16:10:43 [core.py:1136] "),
    ("docker logs -t", "2025-11-30T16:10:43.123456789Z (EngineCore pid=2931) ERROR 11-30 16:10:43 [core.py:1136] "),
    ("compose -t", "vllm-1  | 2025-11-30T16:10:43.123456789Z (EngineCore pid=2931) "),
    ("journald", "Nov 30 16:10:43 gpu-box vllm[2931]: (EngineCore pid=2931) ERROR 11-30 16:10:43 [core.py:1136] "),
]


@pytest.mark.parametrize("prefix", [p for _, p in PREFIXES], ids=[name for name, _ in PREFIXES])
def test_any_log_prefix_leaves_the_failure_and_its_fix(prefix: str) -> None:
    line = CC + "utilization (0.6, 83.88 GiB). Decrease GPU memory utilization or reduce GPU memory used."
    report = diagnose(f"{prefix}Traceback (most recent call last):\r\n{prefix}{line}\r\n")
    assert [d.kind for d in report.failures] == ["free-memory"]
    assert report.failures[0].line == line and report.failures[0].fixes[0].render() == "--gpu-memory-utilization 0.48"
    assert report.error_line == line


@pytest.mark.parametrize("log", ["logs/b-bt4096.log", "logs/c-cotenant-cached.log", "device-run/fail-mamba.log"])
def test_a_real_log_through_docker_compose_with_colours_reads_the_same(log: str) -> None:
    plain = _read(log)
    dressed = "".join(
        f"vllm-1  | 2025-11-30T16:10:43.{i:09d}Z \x1b[32m{line}\x1b[0m\n" for i, line in enumerate(plain.splitlines())
    )
    assert diagnose(dressed) == diagnose(plain)


def test_an_unknown_failure_still_prints_vllms_own_line() -> None:
    prefix = "(EngineCore_DP0 pid=7) ERROR 11-30 16:10:43 [core.py:1136] "
    text = (
        f"{prefix}EngineCore failed to start.\n"
        f"{prefix}Traceback (most recent call last):\n"
        f'{prefix}  File "/usr/lib/python3/site-packages/vllm/model_executor/models/utils.py", line 210, in load\n'
        f"{prefix}KeyError: 'model.layers.0.mlp.experts.w13_weight_scale_2'\n"
        "(APIServer pid=6) RuntimeError: Engine core initialization failed. See root cause above. Failed core "
        "proc(s): {}\n"
    )
    report = diagnose(text)
    assert report.failures == () and not report.ready
    assert report.error_line == "KeyError: 'model.layers.0.mlp.experts.w13_weight_scale_2'"
    printed = report_text(report)
    assert "FAILURE (not one the doctor knows): KeyError: 'model.layers.0.mlp.experts.w13_weight_scale_2'" in printed
    assert report_json(report)["error_line"] == report.error_line


def test_only_the_wrapper_left_is_still_printed() -> None:
    line = "RuntimeError: Engine core initialization failed. See root cause above. Failed core proc(s): {}"
    assert diagnose(f"(APIServer pid=6) {line}\n").error_line == line


def test_a_log_cut_before_any_error_says_it_may_be_incomplete() -> None:
    text = (LOGS / "b-bt4096.log").read_text()
    head = text[: text.index("Available KV cache memory")]
    report = diagnose(head)
    assert report.error_line is None and "it may be incomplete" in report_text(report)


@pytest.mark.parametrize(
    ("argv", "change", "expected"),
    [
        (
            ("serve", "m", "--moe-backend", "triton", "--port", "8000"),
            ("--moe-backend", "triton"),
            ("serve", "m", "--port", "8000"),
        ),
        (("serve", "m", "--moe-backend=triton"), ("--moe-backend", ""), ("serve", "m")),
        (("serve", "--moe_backend", "cutlass", "m"), ("--moe-backend", ""), ("serve", "m")),
        (("serve", "m", "--enable-eplb", "--port", "8000"), ("--enable-eplb", None), ("serve", "m", "--port", "8000")),
        (("serve", "--enable-lora", "m"), ("--enable-lora", None), ("serve", "m")),
        (("serve", "m"), ("--moe-backend", ""), ("serve", "m")),
    ],
)
def test_a_removal_fix_takes_the_flag_out_of_the_command(
    argv: tuple[str, ...], change: tuple[str, str | None], expected: tuple[str, ...]
) -> None:
    removal = FlagChange(change[0], change[1], "test", remove=True)
    assert removal.render() == f"remove {change[0]}"
    assert apply_flag_changes(argv, (removal,)) == expected
