"""`comic-narrator gpu ...` through comic_narrator.cli.gpu.main, as the top-level CLI calls it."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from comic_narrator.cli.gpu import main
from tests.conftest import IMPORTED_SRC

from .conftest import CONFIGS, DATA, LOGS, free_ports

NEMOTRON_FLAGS = [
    "--max-num-seqs",
    "2",
    "--max-num-batched-tokens",
    "4096",
    "--max-model-len",
    "32768",
    "--enforce-eager",
]


def _model_dir(tmp_path: Path, name: str) -> Path:
    """A model folder holding only the published config.json (no weights: the planner estimates them)."""
    folder = tmp_path / name
    folder.mkdir()
    shutil.copy(CONFIGS / f"{name}.config.json", folder / "config.json")
    return folder


@pytest.fixture
def nemotron(tmp_path: Path) -> Path:
    return _model_dir(tmp_path, "nemotron-3-nano-30b-a3b")


def _nvml_present() -> bool:
    try:
        import pynvml

        pynvml.nvmlInit()
    except Exception:
        return False
    return True


def _nemotron_plan(model: Path, utilization: str, *extra: str) -> list[str]:
    """`gpu plan` for the Nemotron boots of the H200 logs (139.8 GiB usable) at one utilisation."""
    return ["plan", "--gpu-memory", "139.8GiB", "--model", str(model), "--gpu-memory-utilization", utilization,
            *NEMOTRON_FLAGS, *extra]  # fmt: skip


def test_plan_json_has_the_contract_keys(nemotron: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code = main(_nemotron_plan(nemotron, "0.6", "--calibrate", str(LOGS / "b-bt4096.log"), "--json"))
    data = json.loads(capsys.readouterr().out)
    assert code == 0
    assert data["kv_cache_tokens"] == 844_688 and data["kv_cache_gib"] == pytest.approx(24.21, abs=0.01)
    assert data["fits"] is True and data["max_concurrency"] == 100.9
    assert data["flags"][:2] == ["--gpu-memory-utilization", "0.60"] and "--enforce-eager" in data["flags"]
    assert {line["item"] for line in data["budget"]} >= {"weights", "profiling peak", "CUDA graphs", "KV cache"}


@pytest.mark.parametrize(("profile", "tts_gib"), [("piper", 0.0), ("kokoro", 1.5)])
def test_plan_counts_a_cuda_context_only_for_a_tts_on_the_gpu(
    nemotron: Path, capsys: pytest.CaptureFixture[str], profile: str, tts_gib: float
) -> None:
    # Piper's profile runs on the CPU: neither its footprint nor a CUDA context of its own takes GPU memory.
    assert main(_nemotron_plan(nemotron, "0.6", "--tts-profile", profile, "--json")) == 0
    budget = {line["item"]: line["gib"] for line in json.loads(capsys.readouterr().out)["budget"]}
    assert budget[f"CUDA context ({profile})"] + budget[f"TTS {profile}"] == pytest.approx(tts_gib, abs=0.01)


def test_plan_text_for_the_rtx5090_report(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    folder = _model_dir(tmp_path, "qwen2.5-vl-7b-instruct")
    code = main(
        [
            "plan",
            "--gpu-memory",
            "31.36GiB",
            "--model",
            str(folder),
            "--max-model-len",
            "16384",
            "--max-num-seqs",
            "8",
            "--limit-mm-per-prompt",
            '{"image": 2}',
            "--tts-footprint",
            "1.5GiB",
        ]
    )
    out = capsys.readouterr().out
    assert code == 0
    assert "fits: utilisation 0.90 (chosen for co-residence)" in out
    assert "--limit-mm-per-prompt" in out and "--kv-cache-memory-bytes" in out
    assert "image encoder profiling" in out and "TTS tts" in out


def test_plan_exit_code_and_prediction_when_vllm_would_fail(nemotron: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code = main(_nemotron_plan(nemotron, "0.42"))
    assert code == 1
    assert "vLLM will fail (no-kv-memory): No available memory for the cache blocks" in capsys.readouterr().out


def test_plan_by_hand_without_a_model_folder(capsys: pytest.CaptureFixture[str]) -> None:
    # Llama-3-8B by hand: 32 layers, 8 KV heads of 128; 16.06 GB of bf16 safetensors (the model card's files).
    code = main(
        [
            "plan",
            "--gpu-memory",
            "24GiB",
            "--layers",
            "32",
            "--kv-heads",
            "8",
            "--head-dim",
            "128",
            "--weights",
            "16.06GB",
            "--max-model-len",
            "8192",
            "--tts-profile",
            "kokoro",
            "--json",
        ]
    )
    data = json.loads(capsys.readouterr().out)
    assert code == 0 and data["kv_bytes_per_token"] == 131_072
    assert data["budget"][1]["basis"] == "given"


def test_plan_without_nvml_or_size_says_what_to_give(nemotron: Path, capsys: pytest.CaptureFixture[str]) -> None:
    if _nvml_present():
        pytest.skip("NVML is present here: the message is for machines without it")
    assert main(["plan", "--model", str(nemotron)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: NVML is not available") and "--gpu-memory 32GiB" in err


def test_plan_needs_a_model(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["plan", "--gpu-memory", "24GiB"]) == 2
    assert capsys.readouterr().err.startswith("error: say which model")


def test_doctor_text_and_exit_codes(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["doctor", str(LOGS / "b-bt4096.log")]) == 0
    assert "KV cache tokens         844,688" in capsys.readouterr().out
    assert main(["doctor", str(LOGS / "c-cotenant-cached.log")]) == 1
    out = capsys.readouterr().out
    assert "FAILURE free-memory" in out and "fix:   --gpu-memory-utilization 0.48" in out


def test_doctor_exits_1_on_a_failure_it_does_not_know(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    log = tmp_path / "vllm.log"
    log.write_text("(EngineCore pid=7) ERROR 11-30 16:10:43 [core.py:1136] KeyError: 'lm_head.weight'\n")
    assert main(["doctor", str(log)]) == 1
    assert "FAILURE (not one the doctor knows): KeyError: 'lm_head.weight'" in capsys.readouterr().out


def test_doctor_json(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["doctor", str(DATA / "device-run" / "fail-mamba.log"), "--json"]) == 1
    data = json.loads(capsys.readouterr().out)
    assert data["failures"][0]["kind"] == "mamba-blocks" and data["failures"][0]["fixes"] == ["--max-num-seqs 434"]
    assert data["kv_cache_tokens"] == 180_256 and data["ok"] is False


def test_doctor_missing_file_is_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["doctor", str(tmp_path / "none.log")]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and err.count("\n") == 1


def test_up_status_down_through_the_cli_in_a_subprocess(tmp_path: Path) -> None:
    llm_port, tts_port = free_ports(2)
    standin = str(Path(__file__).with_name("standin_vllm.py"))
    src = IMPORTED_SRC
    stack = {
        "state_dir": str(tmp_path / "state"),
        "llm": {"command": [sys.executable, standin, "--port", str(llm_port)], "url": f"http://127.0.0.1:{llm_port}"},
        "tts": {
            "command": [sys.executable, "-m", "comic_narrator.gpu.tenant", "--port", str(tts_port)],
            "url": f"http://127.0.0.1:{tts_port}",
            "env": {"PYTHONPATH": src, "CUDA_VISIBLE_DEVICES": ""},
        },
    }
    path = tmp_path / "stack.yaml"
    path.write_text(yaml.safe_dump(stack))

    def gpu(*args: str) -> subprocess.CompletedProcess[str]:
        code = "import sys; from comic_narrator.cli.gpu import main; sys.exit(main(sys.argv[1:]))"
        return subprocess.run(
            [sys.executable, "-c", code, *args],
            capture_output=True,
            text=True,
            timeout=60,
            env={"PYTHONPATH": src, "PATH": "/usr/bin:/bin"},
        )

    up = gpu("up", str(path), "--gpu-memory", "32GiB")
    try:
        assert up.returncode == 0, up.stderr
        assert "llm: ready after" in up.stderr and up.stdout.strip() == "stack is up"
        status = gpu("status", str(path), "--gpu-memory", "32GiB", "--json")
        rows = json.loads(status.stdout)
        assert status.returncode == 0 and [r["healthy"] for r in rows] == [True, True]
        assert rows[1]["reported_reserved_bytes"] == 0
        bare = gpu("status", str(path))  # no NVML here and no size given: still a status
        assert bare.returncode == 0 and "healthy" in bare.stdout
    finally:
        down = gpu("down", str(path), "--gpu-memory", "32GiB")
    assert down.returncode == 0 and down.stdout.splitlines()[0].startswith("tts: stopped")
    assert gpu("status", str(path), "--gpu-memory", "32GiB").returncode == 1


def test_plan_calibrated_on_a_vision_boot_counts_the_encoder_once(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`gpu plan --calibrate` on the H200's Qwen2-VL boot for pages of at most 2,048 image tokens (four profiled
    at once), for the processor's largest image (preprocessor_config.json beside config.json): vLLM gave 66.50
    GiB of KV for that boot (qwen2vl-serve.log). The calibrated peak holds the calibration boot's encoder pass,
    which is taken out before this plan's own is added."""
    folder = _model_dir(tmp_path, "qwen2-vl-tiny")
    (folder / "preprocessor_config.json").write_text(json.dumps({"max_pixels": 12_845_056}))
    args = ["plan", "--gpu-memory", "139.8GiB", "--model", str(folder), "--gpu-memory-utilization", "0.5",
            "--max-num-seqs", "32", "--max-model-len", "32768", "--enforce-eager", "--limit-mm-per-prompt", "1",
            "--calibrate", str(LOGS / "qwen2vl-pages2k.log"), "--json"]  # fmt: skip
    assert main(args) == 0
    data = json.loads(capsys.readouterr().out)
    encoder = next(line for line in data["budget"] if line["item"] == "image encoder profiling")
    assert encoder["note"] == "1 max-size image(s)"
    assert data["kv_cache_gib"] == pytest.approx(66.50, abs=0.1)


def _budget(data: dict[str, object], item: str) -> dict[str, object]:
    budget = data["budget"]
    assert isinstance(budget, list)
    return next(entry for entry in budget if entry["item"] == item)


def test_plan_by_hand_needs_every_size_and_defaults_its_length(capsys: pytest.CaptureFixture[str]) -> None:
    hand = ["plan", "--gpu-memory", "24GiB", "--layers", "32", "--kv-heads", "8", "--head-dim", "128"]
    for missing in ("--layers", "--kv-heads", "--head-dim"):
        at = hand.index(missing)
        assert main([*hand[:at], *hand[at + 2 :], "--weights", "16GB"]) == 2, missing
        assert capsys.readouterr().err.startswith("error: say which model")
    assert main([*hand, "--weights", "16.06GB", "--json"]) == 0
    # Without --max-model-len a model given by hand is planned at 8,192 tokens.
    assert "x at 8,192" in str(_budget(json.loads(capsys.readouterr().out), "KV cache")["note"])


def test_plan_weights_given_override_the_model_folders(nemotron: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(_nemotron_plan(nemotron, "0.6", "--json")) == 0
    estimated = _budget(json.loads(capsys.readouterr().out), "weights")
    main(_nemotron_plan(nemotron, "0.6", "--weights", "40GiB", "--json"))
    given = _budget(json.loads(capsys.readouterr().out), "weights")
    assert given["bytes"] == 40 * 2**30 != estimated["bytes"] and given["basis"] == "given"


@pytest.mark.parametrize("value", ['{"image": "two"}', "[2]", "two"])
def test_plan_images_per_prompt_is_a_number_or_vllms_json(value: str, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as usage:
        main(["plan", "--gpu-memory", "24GiB", "--limit-mm-per-prompt", value])
    assert usage.value.code == 2
    assert f"expected JSON such as '{{\"image\": 2}}', got {value!r}" in capsys.readouterr().err


def test_plan_calibrated_on_a_log_without_its_figures_says_so(
    nemotron: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    log = tmp_path / "short.log"
    # A boot log cut before vLLM measured its KV cache: the weights line alone cannot calibrate a plan.
    lines = (LOGS / "b-bt4096.log").read_text(encoding="utf-8").splitlines()
    log.write_text("\n".join(line for line in lines if "Available KV cache memory" not in line) + "\n")
    assert main(_nemotron_plan(nemotron, "0.6", "--calibrate", str(log))) == 2
    err = capsys.readouterr().err
    assert err == f"error: {log}: this log has no 'Model loading took' / 'Available KV cache memory' lines\n"


def test_doctor_on_a_log_cut_short_without_an_error_finds_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A boot still loading when the log was copied is not a failure (exit 0): nothing died."""
    lines = (LOGS / "b-bt4096.log").read_text(encoding="utf-8").splitlines()
    log = tmp_path / "loading.log"
    log.write_text("\n".join(lines[: len(lines) // 4]) + "\n")
    assert main(["doctor", str(log)]) == 0
    assert "FAILURE" not in capsys.readouterr().out


def test_status_with_nothing_up(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    stack = tmp_path / "stack.yaml"
    stack.write_text(
        yaml.safe_dump(
            {"state_dir": str(tmp_path / "state"), "llm": {"command": ["vllm"], "url": "http://127.0.0.1:9"}}
        ),
        encoding="utf-8",
    )
    assert main(["status", str(stack)]) == 1
    assert capsys.readouterr().out == "nothing is up (no state file)\n"


def test_plan_exits_1_when_vllm_boots_but_the_voices_do_not_fit_beside_it(
    nemotron: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(_nemotron_plan(nemotron, "0.6", "--tts-footprint", "70GiB", "--json")) == 1
    data = json.loads(capsys.readouterr().out)
    assert data["boots"] is True and data["fits"] is False
