"""What `gpu plan` and `gpu doctor` print, line by line, for the real boot logs and published configs: each line
the text shows only in some plans or reports (the free memory, the time-share, the unknowns, the version, the
concurrency, an environment's choice, the advice) shows exactly there."""

from __future__ import annotations

from pathlib import Path

import pytest

from comic_narrator.cli.gpu import main
from comic_narrator.gpu.plan import DeviceMemory, PlanRequest, TtsTenant, VllmFlags, make_plan
from comic_narrator.gpu.render import plan_text
from comic_narrator.gpu.sizes import GIB, gib_to_bytes

from .conftest import DATA, LOGS
from .test_cli import _model_dir
from .test_doctor_kernels import _in_a_traceback
from .test_plan import _model

# `gpu plan` as run on the H200 with NVML (tests/data/gpu/device-run/plan-nvml.txt): Nemotron-3-Nano at 0.6, the
# flags of the b-bt4096 boot, a measured 2 GiB TTS.
NVML_PLAN = (DATA / "device-run" / "plan-nvml.txt").read_text().splitlines()


def _doctor(path: Path, capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    code = main(["doctor", str(path)])
    return code, capsys.readouterr().out


def test_a_plan_on_a_probed_gpu_shows_its_free_memory_and_one_given_a_size_does_not() -> None:
    flags = VllmFlags(0.6, 32768, 2, 4096, enforce_eager=True)
    tts = TtsTenant("tts", 2 * GIB, "measured")
    probed = DeviceMemory(gib_to_bytes(139.8), "NVIDIA H200", gib_to_bytes(139.8))
    text = plan_text(make_plan(PlanRequest(probed, _model("nemotron-3-nano-30b-a3b"), flags, tts)))
    lines = text.splitlines()
    assert lines[0] == NVML_PLAN[0] == "GPU NVIDIA H200: 139.80 GiB (139.80 GiB free now)"
    # The unknowns end the plan, as the device run printed them.
    start = NVML_PLAN.index("not known exactly:")
    assert lines[lines.index("not known exactly:") :] == NVML_PLAN[start:]
    assert len(NVML_PLAN) - start == 3  # the estimated weights and the hybrid model's max-num-seqs
    given = DeviceMemory(gib_to_bytes(139.8), "(size given)")
    text = plan_text(make_plan(PlanRequest(given, _model("nemotron-3-nano-30b-a3b"), flags, tts)))
    assert text.splitlines()[0] == "GPU (size given): 139.80 GiB"


def test_a_plan_that_cannot_co_reside_offers_the_time_share_and_lists_why(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # Mixtral-8x7B's ~87 GiB of weights on an RTX 5090 (31.36 GiB): nothing fits, the planner chose the utilisation.
    folder = _model_dir(tmp_path, "mixtral-8x7b")
    code = main(["plan", "--gpu-memory", "31.36GiB", "--model", str(folder), "--max-model-len", "4096"])
    out = capsys.readouterr().out
    assert code == 1 and "\nDOES NOT FIT: utilisation" in out
    assert "\ntime-share instead: vLLM with --enable-sleep-mode (VLLM_SERVER_DEV_MODE=1); POST /sleep?level=1" in out
    unknowns = out.split("\nnot known exactly:\n", 1)[1].splitlines()
    assert unknowns and all(line.startswith("  - ") for line in unknowns)
    assert any("time-share (vLLM sleep mode)" in line for line in unknowns)


def test_a_ready_boot_shows_its_version_and_concurrency_and_no_failure(capsys: pytest.CaptureFixture[str]) -> None:
    code, out = _doctor(LOGS / "b-bt4096.log", capsys)
    lines = out.splitlines()
    assert code == 0 and lines[0] == "vLLM 0.20.0: ready"
    # b-bt4096.log: "Maximum concurrency for 32,768 tokens per request: 100.90x"
    assert "  max concurrency         100.90x at 32,768 tokens" in lines
    assert "FAILURE" not in out and "no known failure" not in out


def test_a_log_without_vllms_banner_shows_a_question_mark_for_the_version(capsys: pytest.CaptureFixture[str]) -> None:
    # The TTS tenant's log: no vLLM at all, so no version and no failure the doctor knows.
    code, out = _doctor(LOGS / "tenant.log", capsys)
    assert code == 0
    assert out.splitlines() == [
        "vLLM ?: did not become ready",
        "",
        "no known failure found in this log; it may be incomplete",
    ]


def test_a_failure_the_environment_chose_names_no_flag_the_variable_and_vllms_advice(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    line = (
        "ValueError: FlashInfer FP8 MoE throughput backend does not support block quantization. Please use "
        "VLLM_FLASHINFER_MOE_BACKEND=latency instead."
    )
    log = tmp_path / "vllm.log"
    log.write_text(_in_a_traceback(line))
    code, out = _doctor(log, capsys)
    assert code == 1
    after = out.split("\nFAILURE ", 1)[1].splitlines()
    assert after[2] == "  fix:   no vLLM flag; the environment chose this"
    assert after[3].startswith("  env:   unset VLLM_USE_FLASHINFER_MOE_FP8")
    assert after[4].startswith("  also:  ") and "VLLM_FLASHINFER_MOE_BACKEND=latency" in after[4]


def test_a_known_failure_with_a_flag_prints_the_fix_and_the_advice(capsys: pytest.CaptureFixture[str]) -> None:
    code, out = _doctor(DATA / "device-run" / "fail-mamba.log", capsys)
    assert code == 1
    assert out.splitlines()[-2:] == ["  fix:   --max-num-seqs 434", "  also:  or raise --gpu-memory-utilization"]
