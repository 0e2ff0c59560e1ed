"""model_info's own rules, each on its own, on the published configs of tests/data/gpu/configs and real files in a
model folder: the dtype and where it is written, unknown names, the other hybrid layout, the sliding-window note,
what a folder's safetensors and processor files give, and broken or foreign headers."""

from __future__ import annotations

import json
import struct
from pathlib import Path

import pytest

from comic_narrator.errors import GpuError
from comic_narrator.gpu.model_info import load_model_info, model_info_from_config, read_safetensors_header

from .conftest import CONFIGS
from .test_model_info import _config, _write_safetensors

LLAMA_KV = 32 * 2 * 8 * 128 * 2
"""Llama-3-8B's KV bytes per token in bf16 (test_model_info.py): 32 layers, 8 KV heads of 128."""
SLIDING_NOTE = "sliding-window layers are counted as full attention: the KV estimate is an upper bound"
LOADED_NOTE = "vLLM's loaded size can exceed the checkpoint by a few percent; --calibrate learns it"


def test_the_architecture_and_dtype_are_read_as_written() -> None:
    info = model_info_from_config(_config("llama-3-8b"))
    assert (info.architecture, info.dtype) == ("LlamaForCausalLM", "bfloat16")
    bare = {k: v for k, v in _config("llama-3-8b").items() if k not in ("architectures", "torch_dtype")}
    assert (model_info_from_config(bare).architecture, model_info_from_config(bare).dtype) == ("?", "bfloat16")


@pytest.mark.parametrize("key", ["torch_dtype", "dtype"])  # transformers 4.56 renamed the field `dtype`
def test_a_float32_checkpoint_keeps_four_bytes_per_kv_element(key: str) -> None:
    cfg = {k: v for k, v in _config("llama-3-8b").items() if k != "torch_dtype"}
    info = model_info_from_config({**cfg, key: "float32"})
    assert info.dtype == "float32" and info.dtype_bytes == 4
    assert info.kv_bytes_per_token() == 2 * LLAMA_KV
    assert info.kv_bytes_per_token("fp8") == LLAMA_KV // 2


def test_a_float32_hybrid_keeps_four_bytes_per_conv_state_element() -> None:
    # test_model_info.py's bf16 figure is 36,864 bytes: (64*64 + 2*8*128) x (4-1) x 2; the SSM state is fp32 anyway.
    info = model_info_from_config({**_config("nemotron-3-nano-30b-a3b"), "torch_dtype": "float32"})
    assert info.mamba is not None
    assert (info.mamba.conv_state_bytes, info.mamba.ssm_state_bytes) == (73_728, 2_097_152)


def test_an_unknown_kv_cache_dtype_is_a_clear_error() -> None:
    info = model_info_from_config(_config("llama-3-8b"))
    with pytest.raises(GpuError, match=r"unknown --kv-cache-dtype 'int4': use auto, fp8"):
        info.kv_bytes_per_token("int4")


def test_a_config_without_a_width_is_a_clear_error() -> None:
    cfg = {k: v for k, v in _config("llama-3-8b").items() if k != "hidden_size"}
    with pytest.raises(GpuError, match=r"config\.json has none of hidden_size, d_model, n_embd"):
        model_info_from_config(cfg)


def test_the_layers_block_type_list_gives_the_same_hybrid_as_the_pattern() -> None:
    """Nemotron-3-Nano's pattern written out as transformers' NemotronH config lists it (M mamba, * attention,
    E moe, - mlp): 6 attention layers and 23 Mamba layers either way."""
    cfg = _config("nemotron-3-nano-30b-a3b")
    names = {"M": "mamba", "*": "attention", "E": "moe", "-": "mlp"}
    pattern = str(cfg.pop("hybrid_override_pattern"))
    listed = model_info_from_config({**cfg, "layers_block_type": [names[c] for c in pattern]})
    from_pattern = model_info_from_config(_config("nemotron-3-nano-30b-a3b"))
    assert listed.attention_layers == from_pattern.attention_layers == 6
    assert listed.mamba == from_pattern.mamba and listed.mamba is not None and listed.mamba.num_layers == 23


def test_the_sliding_window_note_needs_the_window_switched_on_and_per_layer_types() -> None:
    # Qwen2.5-VL publishes sliding_window 32768 with use_sliding_window false: every layer is full attention.
    assert SLIDING_NOTE not in model_info_from_config(_config("qwen2.5-vl-7b-instruct")).notes
    # The tiny Qwen2-VL with the window on above layer 2, written as transformers 4.53+ writes it (layer_types).
    cfg = _config("qwen2-vl-tiny")
    text = {**dict(cfg["text_config"]), "use_sliding_window": True, "max_window_layers": 2}
    assert SLIDING_NOTE not in model_info_from_config({**cfg, "text_config": text}).notes  # nothing says which slide
    text["layer_types"] = ["full_attention"] * 2 + ["sliding_attention"] * 2
    assert SLIDING_NOTE in model_info_from_config({**cfg, "text_config": text}).notes


def _folder(tmp_path: Path) -> Path:
    (tmp_path / "config.json").write_text(json.dumps(_config("llama-3-8b")))
    return tmp_path


def test_model_shards_are_read_and_a_consolidated_copy_beside_them_is_not(tmp_path: Path) -> None:
    """Mistral's repositories ship both the sharded model-*.safetensors and consolidated.safetensors."""
    folder = _folder(tmp_path)
    shard = _write_safetensors(folder / "model-00001-of-00001.safetensors", {"embed": ("BF16", [100, 64], 2)})
    _write_safetensors(folder / "consolidated.safetensors", {"tok_embeddings": ("BF16", [100, 64], 2)})
    info = load_model_info(folder)
    assert (info.weights.source, info.weights.total_bytes, info.weights.tensor_count) == ("safetensors", shard, 1)
    assert info.notes == (LOADED_NOTE,)


def test_safetensors_of_another_name_are_read_when_no_model_shard_is_there(tmp_path: Path) -> None:
    folder = _folder(tmp_path)
    size = _write_safetensors(folder / "consolidated.safetensors", {"tok_embeddings": ("BF16", [100, 64], 2)})
    assert load_model_info(folder).weights.total_bytes == size


def test_without_safetensors_the_weights_are_an_estimate_and_say_so(tmp_path: Path) -> None:
    info = load_model_info(_folder(tmp_path))
    assert info.weights.source == "estimate"
    assert info.notes == ("weight bytes estimated from config.json (no safetensors): the loaded size can differ",)


def test_a_processor_file_without_a_largest_image_changes_nothing(tmp_path: Path) -> None:
    (tmp_path / "config.json").write_text((CONFIGS / "qwen2-vl-tiny.config.json").read_text())
    (tmp_path / "preprocessor_config.json").write_text(json.dumps({"min_pixels": 3136, "patch_size": 14}))
    vision = load_model_info(tmp_path).vision
    assert vision is not None and vision.max_patches_per_image == 12_845_056 // 196


def test_a_git_lfs_pointer_in_place_of_the_weights_is_named_implausible(tmp_path: Path) -> None:
    """A clone without git-lfs leaves this text where the weights belong; its first 8 bytes read as a length."""
    pointer = tmp_path / "model.safetensors"
    pointer.write_text(
        "version https://git-lfs.github.com/spec/v1\n"
        "oid sha256:0000000000000000000000000000000000000000000000000000000000000000\nsize 4976698672\n"
    )
    with pytest.raises(GpuError, match=r"safetensors header of \d+ bytes is implausible"):
        read_safetensors_header(pointer)


def test_a_header_that_is_no_json_object_is_a_clear_error(tmp_path: Path) -> None:
    path = tmp_path / "model.safetensors"
    path.write_bytes(struct.pack("<Q", 2) + b"[]")
    with pytest.raises(GpuError, match="safetensors header is not a JSON object"):
        read_safetensors_header(path)
