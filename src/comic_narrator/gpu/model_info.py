"""What the planner needs to know about a model: read from its config.json and its safetensors headers."""

from __future__ import annotations

import json
import struct
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Literal

from comic_narrator.errors import GpuError
from comic_narrator.gpu import params

WeightSource = Literal["safetensors", "estimate", "given", "log"]

DTYPE_BYTES: dict[str, int] = {
    "float32": 4,
    "float": 4,
    "bfloat16": 2,
    "float16": 2,
    "half": 2,
    "fp8": 1,
    "fp8_e4m3": 1,
    "fp8_e5m2": 1,
    "fp8_inc": 1,
    "auto": 0,  # resolved to the model dtype by the caller
}

# safetensors dtype names -> bytes per element (https://github.com/huggingface/safetensors, format spec)
SAFETENSORS_DTYPE_BYTES: dict[str, float] = {
    "F64": 8,
    "I64": 8,
    "U64": 8,
    "F32": 4,
    "I32": 4,
    "U32": 4,
    "F16": 2,
    "BF16": 2,
    "I16": 2,
    "U16": 2,
    "F8_E4M3": 1,
    "F8_E5M2": 1,
    "F8_E8M0": 1,
    "I8": 1,
    "U8": 1,
    "BOOL": 1,
    "F4": 0.5,
}


@dataclass(frozen=True)
class MambaLayout:
    """Per-sequence recurrent state of the Mamba layers of a hybrid model (vLLM keeps one block per sequence)."""

    num_layers: int
    conv_state_bytes: int
    """Bytes of one layer's convolution state for one sequence."""
    ssm_state_bytes: int
    """Bytes of one layer's SSM state for one sequence."""

    @property
    def layer_state_bytes(self) -> int:
        return self.conv_state_bytes + self.ssm_state_bytes

    @property
    def sequence_state_bytes(self) -> int:
        return self.num_layers * self.layer_state_bytes


@dataclass(frozen=True)
class VisionEncoder:
    """The image encoder of a multimodal model, enough to size vLLM's encoder profiling pass."""

    hidden_size: int
    depth: int
    intermediate_size: int
    patch_size: int
    spatial_merge_size: int = 1
    max_patches_per_image: int = 16384
    """Patches of the largest image the processor admits (Qwen2.5-VL: max_pixels 12845056 / 14^2 = 65536)."""


@dataclass(frozen=True)
class Weights:
    """How many bytes the weights take and how that figure was obtained."""

    total_bytes: int
    source: WeightSource
    tensor_count: int = 0
    dtypes: tuple[str, ...] = ()


@dataclass(frozen=True)
class ModelInfo:
    """Architecture figures that decide vLLM's memory use."""

    name: str
    architecture: str
    model_type: str
    hidden_size: int
    num_hidden_layers: int
    attention_layers: int
    """Layers that keep a KV cache (all layers of a dense model; the '*' layers of Nemotron-H)."""
    num_attention_heads: int
    num_kv_heads: int
    head_dim: int
    vocab_size: int
    max_position_embeddings: int
    dtype: str
    weights: Weights
    mla_kv_dim: int = 0
    """kv_lora_rank + qk_rope_head_dim for multi-head latent attention (DeepSeek); 0 otherwise."""
    num_experts: int = 0
    experts_per_token: int = 0
    mamba: MambaLayout | None = None
    vision: VisionEncoder | None = None
    quantization: str | None = None
    notes: tuple[str, ...] = field(default=())
    """What could not be read from the checkpoint and was assumed."""

    @property
    def dtype_bytes(self) -> int:
        return DTYPE_BYTES.get(self.dtype, 2) or 2

    def kv_dtype_bytes(self, kv_cache_dtype: str) -> int:
        """Bytes per KV element for vLLM's --kv-cache-dtype ('auto' follows the model dtype)."""
        if kv_cache_dtype == "auto":
            return self.dtype_bytes
        if kv_cache_dtype not in DTYPE_BYTES:
            raise GpuError(f"unknown --kv-cache-dtype {kv_cache_dtype!r}: use auto, fp8, fp8_e4m3 or fp8_e5m2")
        return DTYPE_BYTES[kv_cache_dtype]

    def kv_bytes_per_token_per_layer(self, kv_cache_dtype: str = "auto") -> int:
        per_element = self.kv_dtype_bytes(kv_cache_dtype)
        if self.mla_kv_dim:
            return self.mla_kv_dim * per_element
        return 2 * self.num_kv_heads * self.head_dim * per_element

    def kv_bytes_per_token(self, kv_cache_dtype: str = "auto") -> int:
        """Sum over attention layers of 2 x kv_heads x head_dim x dtype bytes (MLA: latent dim x bytes)."""
        return self.attention_layers * self.kv_bytes_per_token_per_layer(kv_cache_dtype)

    def with_weights(self, weights: Weights) -> ModelInfo:
        return _replace(self, weights=weights)


def _replace(info: ModelInfo, **changes: Any) -> ModelInfo:
    return replace(info, **changes)


def _int(cfg: Mapping[str, Any], *keys: str, default: int | None = None) -> int:
    for key in keys:
        value = cfg.get(key)
        if isinstance(value, int | float) and not isinstance(value, bool):
            return int(value)
    if default is None:
        raise GpuError(f"config.json has none of {', '.join(keys)}: the planner cannot size this model")
    return default


def _text_config(cfg: Mapping[str, Any]) -> Mapping[str, Any]:
    """Multimodal configs nest the language model under text_config (newer transformers) or keep it on top."""
    text = cfg.get("text_config") or cfg.get("llm_config")
    if isinstance(text, Mapping):
        merged = dict(cfg)
        merged.update(text)
        return merged
    return cfg


def _vision(cfg: Mapping[str, Any]) -> VisionEncoder | None:
    vision = cfg.get("vision_config")
    if not isinstance(vision, Mapping):
        return None
    # The tower's own width: Qwen2-VL calls it embed_dim (its hidden_size is the language model's, which the
    # merger projects into); Qwen2.5-VL and SigLIP-style towers call it hidden_size.
    hidden = _int(vision, "embed_dim", "hidden_size", "width", default=1024)
    patch = _int(vision, "patch_size", default=14)
    merge = _int(vision, "spatial_merge_size", default=1)
    # Qwen2-VL / Qwen2.5-VL processors admit up to 12845056 pixels (preprocessor_config.json max_pixels);
    # fixed-resolution encoders (CLIP/SigLIP) see image_size^2 / patch^2 patches.
    image_size = _int(vision, "image_size", default=0)
    max_patches = (image_size // patch) ** 2 if image_size else 12_845_056 // (patch * patch)
    return VisionEncoder(
        hidden_size=hidden,
        depth=_int(vision, "depth", "num_hidden_layers", "num_layers", default=24),
        intermediate_size=_int(vision, "intermediate_size", default=4 * hidden),
        patch_size=patch,
        spatial_merge_size=merge,
        max_patches_per_image=max_patches,
    )


def _mamba(cfg: Mapping[str, Any], num_mamba_layers: int, dtype_bytes: int) -> MambaLayout | None:
    if num_mamba_layers == 0:
        return None
    heads = _int(cfg, "mamba_num_heads")
    head_dim = _int(cfg, "mamba_head_dim")
    state = _int(cfg, "ssm_state_size")
    groups = _int(cfg, "n_groups", default=1)
    kernel = _int(cfg, "conv_kernel", default=4)
    ssm_bytes = DTYPE_BYTES.get(str(cfg.get("mamba_ssm_cache_dtype", "float32")), 4)
    conv_dim = heads * head_dim + 2 * groups * state  # vLLM mamba2 conv state: (conv_dim, kernel - 1)
    return MambaLayout(
        num_layers=num_mamba_layers,
        conv_state_bytes=conv_dim * (kernel - 1) * dtype_bytes,
        ssm_state_bytes=heads * head_dim * state * ssm_bytes,
    )


def model_info_from_config(cfg: Mapping[str, Any], *, name: str = "model", weights: Weights | None = None) -> ModelInfo:
    """Build ModelInfo from a parsed config.json; without `weights` the weight bytes are estimated."""
    text = _text_config(cfg)
    architectures = cfg.get("architectures") or ["?"]
    architecture = str(architectures[0])
    model_type = str(cfg.get("model_type", "?"))
    hidden = _int(text, "hidden_size", "d_model", "n_embd")
    layers = _int(text, "num_hidden_layers", "n_layer", "num_layers")
    heads = _int(text, "num_attention_heads", "n_head")
    kv_heads = _int(text, "num_key_value_heads", "num_kv_heads", default=heads)
    head_dim = _int(text, "head_dim", default=hidden // heads)
    dtype = str(text.get("torch_dtype") or text.get("dtype") or "bfloat16")
    notes: list[str] = []
    pattern = text.get("hybrid_override_pattern")
    mamba_layers = 0
    attention_layers = layers
    if isinstance(pattern, str) and pattern:
        attention_layers = pattern.count("*")
        mamba_layers = pattern.count("M")
    elif "layers_block_type" in text:
        kinds = [str(k) for k in text["layers_block_type"]]
        attention_layers = sum(1 for k in kinds if k in ("attention", "full_attention"))
        mamba_layers = sum(1 for k in kinds if k == "mamba")
    if text.get("sliding_window") and text.get("use_sliding_window", True) and "layer_types" in text:
        notes.append("sliding-window layers are counted as full attention: the KV estimate is an upper bound")
    mla = 0
    if text.get("kv_lora_rank"):
        mla = _int(text, "kv_lora_rank") + _int(text, "qk_rope_head_dim", default=64)
    experts = _int(text, "num_local_experts", "n_routed_experts", "num_experts", default=0)
    quant = text.get("quantization_config")
    quantization = str(quant.get("quant_method")) if isinstance(quant, Mapping) else None
    info = ModelInfo(
        name=name,
        architecture=architecture,
        model_type=model_type,
        hidden_size=hidden,
        num_hidden_layers=layers,
        attention_layers=attention_layers,
        num_attention_heads=heads,
        num_kv_heads=kv_heads,
        head_dim=head_dim,
        vocab_size=_int(text, "vocab_size", default=32000),
        max_position_embeddings=_int(text, "max_position_embeddings", "n_positions", default=4096),
        dtype=dtype,
        weights=Weights(total_bytes=0, source="estimate"),
        mla_kv_dim=mla,
        num_experts=experts,
        experts_per_token=_int(text, "num_experts_per_tok", "moe_topk", default=2 if experts else 0),
        mamba=_mamba(text, mamba_layers, DTYPE_BYTES.get(dtype, 2) or 2),
        vision=_vision(cfg),
        quantization=quantization,
    )
    if weights is None:
        count = params.estimate_parameter_count(text, info)
        weights = Weights(total_bytes=int(count * params.bytes_per_parameter(info)), source="estimate")
        notes.append("weight bytes estimated from config.json (no safetensors): the loaded size can differ")
        if quantization:
            notes.append(f"{quantization} checkpoint: estimated bytes/parameter is approximate")
    return _replace(info, weights=weights, notes=tuple(notes))


def read_safetensors_header(path: Path) -> dict[str, Any]:
    """The JSON header of a .safetensors file: 8-byte little-endian length, then that many bytes of JSON."""
    with path.open("rb") as handle:
        raw_len = handle.read(8)
        if len(raw_len) != 8:
            raise GpuError("not a safetensors file (shorter than 8 bytes)", path=path)
        (header_len,) = struct.unpack("<Q", raw_len)
        if header_len > 100_000_000:
            raise GpuError(f"safetensors header of {header_len} bytes is implausible", path=path)
        try:
            header = json.loads(handle.read(header_len))
        except (json.JSONDecodeError, UnicodeDecodeError) as exc:
            raise GpuError(f"unreadable safetensors header ({exc})", path=path) from exc
    if not isinstance(header, dict):
        raise GpuError("safetensors header is not a JSON object", path=path)
    return header


def safetensors_weights(files: list[Path]) -> Weights:
    """Exact weight bytes: the sum of every tensor's byte range in the headers (no tensor data is read)."""
    total = 0
    count = 0
    dtypes: set[str] = set()
    for path in files:
        for tensor_name, entry in read_safetensors_header(path).items():
            if tensor_name == "__metadata__" or not isinstance(entry, dict):
                continue
            start, end = entry["data_offsets"]
            total += int(end) - int(start)
            count += 1
            dtypes.add(str(entry.get("dtype", "?")))
    return Weights(total_bytes=total, source="safetensors", tensor_count=count, dtypes=tuple(sorted(dtypes)))


def _processor_max_pixels(path: Path) -> int | None:
    """The largest image a dynamic-resolution processor admits (Qwen2-VL's max_pixels or size.longest_edge)."""
    try:
        cfg = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError, UnicodeDecodeError):
        return None
    size = cfg.get("size") if isinstance(cfg.get("size"), Mapping) else {}
    value = cfg.get("max_pixels") or size.get("longest_edge") or size.get("max_pixels")
    return int(value) if isinstance(value, int | float) and value > 0 else None


def load_model_info(model_dir: Path) -> ModelInfo:
    """Read MODEL_DIR/config.json and, when present, the safetensors headers and the image processor's largest
    image (preprocessor_config.json) beside it."""
    config_path = model_dir / "config.json"
    if not config_path.is_file():
        raise GpuError("no config.json here: --model takes a Hugging Face model folder", path=model_dir)
    try:
        cfg = json.loads(config_path.read_text(encoding="utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise GpuError(f"config.json does not parse ({exc})", path=config_path) from exc
    files = sorted(model_dir.glob("model*.safetensors")) or sorted(model_dir.glob("*.safetensors"))
    weights = safetensors_weights(files) if files else None
    info = model_info_from_config(cfg, name=model_dir.name, weights=weights)
    max_pixels = _processor_max_pixels(model_dir / "preprocessor_config.json")
    if info.vision is not None and max_pixels and not _int(cfg.get("vision_config", {}), "image_size", default=0):
        patches = max_pixels // (info.vision.patch_size**2)
        info = _replace(info, vision=replace(info.vision, max_patches_per_image=patches))
    if weights is not None:
        note = "vLLM's loaded size can exceed the checkpoint by a few percent; --calibrate learns it"
        info = _replace(info, notes=(*info.notes, note))
    return info
