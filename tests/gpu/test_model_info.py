"""Model figures from real published config.json files and real safetensors headers."""

from __future__ import annotations

import json
import struct
from pathlib import Path

import pytest

from comic_narrator.errors import GpuError
from comic_narrator.gpu import params
from comic_narrator.gpu.model_info import load_model_info, model_info_from_config, read_safetensors_header
from comic_narrator.gpu.sizes import GIB

from .conftest import CONFIGS


def _config(name: str) -> dict[str, object]:
    return dict(json.loads((CONFIGS / f"{name}.config.json").read_text()))


# Published parameter counts (model cards, see tests/data/gpu/configs/SOURCES.md).
@pytest.mark.parametrize(
    ("name", "published_params"),
    [
        ("llama-3-8b", 8.03e9),
        ("mixtral-8x7b", 46.7e9),
        ("qwen2.5-vl-7b-instruct", 8.29e9),
        ("deepseek-v2-lite", 15.7e9),
        ("nemotron-3-nano-30b-a3b", 31.6e9),
    ],
)
def test_parameter_estimate_matches_the_published_count(name: str, published_params: float) -> None:
    cfg = _config(name)
    count = params.estimate_parameter_count(cfg, model_info_from_config(cfg))
    assert abs(count - published_params) / published_params < 0.01


def test_nemotron_estimate_is_within_half_a_percent_of_what_vllm_loaded() -> None:
    # b-bt4096.log: "Model loading took 58.89 GiB" (vLLM 0.20.0, bf16, H200).
    info = model_info_from_config(_config("nemotron-3-nano-30b-a3b"))
    assert info.weights.source == "estimate"
    assert abs(info.weights.total_bytes / GIB - 58.89) / 58.89 < 0.005


@pytest.mark.parametrize(
    ("name", "kv_bytes_per_token"),
    [
        ("llama-3-8b", 32 * 2 * 8 * 128 * 2),  # 32 layers, 8 KV heads of 128, bf16: 128 KiB
        ("mixtral-8x7b", 32 * 2 * 8 * 128 * 2),  # the same attention as Mistral-7B: experts add no KV
        ("qwen2.5-vl-7b-instruct", 28 * 2 * 4 * 128 * 2),  # 28 layers, 4 KV heads of 128: 56 KiB
        ("deepseek-v2-lite", 27 * (512 + 64) * 2),  # MLA: kv_lora_rank + qk_rope_head_dim per layer
        ("nemotron-3-nano-30b-a3b", 6 * 2 * 2 * 128 * 2),  # only the 6 '*' layers of 52 keep KV
    ],
)
def test_kv_bytes_per_token(name: str, kv_bytes_per_token: int) -> None:
    info = model_info_from_config(_config(name))
    assert info.kv_bytes_per_token() == kv_bytes_per_token
    assert info.kv_bytes_per_token("fp8") == kv_bytes_per_token // 2


def test_hybrid_mamba_state_per_sequence() -> None:
    info = model_info_from_config(_config("nemotron-3-nano-30b-a3b"))
    assert info.mamba is not None and info.attention_layers == 6 and info.mamba.num_layers == 23
    # conv: (64*64 + 2*8*128) x (4-1) x bf16; ssm: 64 heads x 64 x 128 state x fp32 (mamba_ssm_cache_dtype)
    assert info.mamba.conv_state_bytes == 36_864
    assert info.mamba.ssm_state_bytes == 2_097_152
    assert 46 < info.mamba.sequence_state_bytes / 2**20 < 47.5  # DESIGN.md: ~47 MiB per sequence


def test_vision_tower_is_read_from_a_multimodal_config() -> None:
    info = model_info_from_config(_config("qwen2.5-vl-7b-instruct"))
    assert info.vision is not None
    assert (info.vision.hidden_size, info.vision.depth, info.vision.spatial_merge_size) == (1280, 32, 2)
    assert info.vision.max_patches_per_image == 12_845_056 // 196  # processor max_pixels / 14^2


def test_nested_text_config_is_read() -> None:
    cfg = _config("llama-3-8b")
    nested = {"architectures": ["LlavaForConditionalGeneration"], "model_type": "llava", "text_config": cfg}
    assert model_info_from_config(nested).kv_bytes_per_token() == 131_072


def _write_safetensors(path: Path, tensors: dict[str, tuple[str, list[int], int]]) -> int:
    """A real safetensors file: header length, JSON header, then the tensor bytes (zeros)."""
    header: dict[str, object] = {"__metadata__": {"format": "pt"}}
    offset = 0
    for name, (dtype, shape, itemsize) in tensors.items():
        size = itemsize
        for dim in shape:
            size *= dim
        header[name] = {"dtype": dtype, "shape": shape, "data_offsets": [offset, offset + size]}
        offset += size
    raw = json.dumps(header).encode()
    path.write_bytes(struct.pack("<Q", len(raw)) + raw + bytes(offset))
    return offset


def test_safetensors_headers_give_exact_weight_bytes(tmp_path: Path) -> None:
    (tmp_path / "config.json").write_text(json.dumps(_config("llama-3-8b")))
    first = _write_safetensors(
        tmp_path / "model-00001-of-00002.safetensors",
        {"embed": ("BF16", [1000, 64], 2), "q_proj": ("F8_E4M3", [64, 64], 1)},
    )
    second = _write_safetensors(tmp_path / "model-00002-of-00002.safetensors", {"scale": ("F32", [64], 4)})
    info = load_model_info(tmp_path)
    assert info.weights.source == "safetensors"
    assert info.weights.total_bytes == first + second == 1000 * 64 * 2 + 64 * 64 + 64 * 4
    assert info.weights.tensor_count == 3
    assert info.weights.dtypes == ("BF16", "F32", "F8_E4M3")


def test_a_truncated_safetensors_file_is_a_clear_error(tmp_path: Path) -> None:
    bad = tmp_path / "model.safetensors"
    bad.write_bytes(b"\x01\x02")
    with pytest.raises(GpuError, match="not a safetensors file"):
        read_safetensors_header(bad)


def test_a_folder_without_config_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(GpuError, match=r"no config\.json"):
        load_model_info(tmp_path)


def test_quantised_checkpoint_without_weights_is_flagged_as_approximate() -> None:
    cfg = {**_config("llama-3-8b"), "quantization_config": {"quant_method": "awq", "bits": 4}}
    info = model_info_from_config(cfg)
    assert info.quantization == "awq"
    assert 4.0 < info.weights.total_bytes / GIB < 4.5  # 8.03 B params at ~0.56 bytes each
    assert any("approximate" in note for note in info.notes)


def test_qwen2_vl_tower_width_and_the_processors_largest_image(tmp_path: Path) -> None:
    """Qwen2-VL's vision_config.hidden_size is the language model's width; the tower's is embed_dim. The
    processor's max_pixels (preprocessor_config.json beside config.json) sets the largest image's patches."""
    (tmp_path / "config.json").write_text((CONFIGS / "qwen2-vl-tiny.config.json").read_text())
    info = load_model_info(tmp_path)
    assert info.vision is not None
    assert (info.vision.hidden_size, info.vision.max_patches_per_image) == (1280, 12_845_056 // 196)
    (tmp_path / "preprocessor_config.json").write_text(json.dumps({"max_pixels": 1_605_632, "patch_size": 14}))
    smaller = load_model_info(tmp_path).vision
    assert smaller is not None and smaller.max_patches_per_image == 8192
    (tmp_path / "preprocessor_config.json").write_text(json.dumps({"size": {"longest_edge": 802_816}}))
    by_size = load_model_info(tmp_path).vision
    assert by_size is not None and by_size.max_patches_per_image == 4096
