"""Write a Qwen2-VL model folder that vLLM can serve with random weights (`--load-format dummy`), offline: the
config, the image and video processor configs, a tokenizer trained here and the chat template.

    python benchmarks/gpu_make_tiny_vlm.py OUT_DIR [--text-layers 4] [--text-hidden 512] [--vision-depth 32]

The vision tower is Qwen2-VL's own (1280 wide, 32 blocks, 16 heads, 14 px patches merged 2 x 2: the 675M tower of
Qwen2-VL-2B, 7B and 72B), so the image encoder's memory and time are those of the real family; the language model
is small (4 layers of 512 by default) and its vocabulary is a 4,096-token byte-level BPE trained on this
repository's own documentation, plus Qwen's special tokens. Only printable ASCII is in the vocabulary (other
characters read as <|unk|>), so every generated token is at least one character: an answer bounded to N
characters in the schema never needs more than N tokens. Nothing is downloaded; only the `tokenizers` package is
needed. The answers such a model gives are nonsense; the request path, the engine's schema enforcement, the image
token counts and the memory are real.
"""

from __future__ import annotations

import argparse
import json
import string
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
SPECIAL_TOKENS = [
    "<|endoftext|>",
    "<|im_start|>",
    "<|im_end|>",
    "<|vision_start|>",
    "<|vision_end|>",
    "<|vision_pad|>",
    "<|image_pad|>",
    "<|video_pad|>",
    "<|unk|>",
]
VOCAB = 4096
# Qwen2-VL's chat layout: ChatML turns, each image as <|vision_start|><|image_pad|><|vision_end|> where it stands.
CHAT_TEMPLATE = (
    "{% for message in messages %}"
    "{% if loop.first and message['role'] != 'system' %}<|im_start|>system\nYou read comics.<|im_end|>\n{% endif %}"
    "<|im_start|>{{ message['role'] }}\n"
    "{% if message['content'] is string %}{{ message['content'] }}"
    "{% else %}{% for part in message['content'] %}"
    "{% if part['type'] in ('image', 'image_url') or 'image' in part or 'image_url' in part %}"
    "<|vision_start|><|image_pad|><|vision_end|>"
    "{% elif part['type'] == 'video' or 'video' in part %}<|vision_start|><|video_pad|><|vision_end|>"
    "{% elif 'text' in part %}{{ part['text'] }}{% endif %}"
    "{% endfor %}{% endif %}<|im_end|>\n"
    "{% endfor %}"
    "{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}"
)
PIXELS = {"min_pixels": 56 * 56, "max_pixels": 28 * 28 * 16384}
"""Qwen2-VL's processor defaults: at most 16,384 image tokens (12,845,056 pixels) per image."""
CLIP_MEAN = [0.48145466, 0.4578275, 0.40821073]
CLIP_STD = [0.26862954, 0.26130258, 0.27577711]


def training_text() -> str:
    """This repository's own prose, reduced to printable ASCII (the vocabulary's alphabet)."""
    files = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]
    text = "\n".join(path.read_text(encoding="utf-8") for path in files if path.exists())
    allowed = set(string.printable)
    return "".join(char for char in text if char in allowed) + "\n" + string.printable


def build_tokenizer(out: Path) -> int:
    """tokenizer.json and tokenizer_config.json; returns the vocabulary size including the special tokens."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers

    tok = Tokenizer(models.BPE(unk_token="<|unk|>"))
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=True)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(vocab_size=VOCAB, special_tokens=SPECIAL_TOKENS, show_progress=False)
    text = training_text()
    tok.train_from_iterator([text[i : i + 4000] for i in range(0, len(text), 4000)], trainer)
    tok.save(str(out / "tokenizer.json"))
    ids = {token: tok.token_to_id(token) for token in SPECIAL_TOKENS}
    config = {
        "tokenizer_class": "PreTrainedTokenizerFast",
        "model_max_length": 32768,
        "bos_token": None,
        "eos_token": "<|im_end|>",
        "pad_token": "<|endoftext|>",
        "unk_token": "<|unk|>",
        "clean_up_tokenization_spaces": False,
        "add_bos_token": False,
        "add_eos_token": False,
        "chat_template": CHAT_TEMPLATE,
        "added_tokens_decoder": {
            str(i): {"content": t, "special": True, "normalized": False, "lstrip": False, "rstrip": False}
            for t, i in ids.items()
        },
    }
    (out / "tokenizer_config.json").write_text(json.dumps(config, indent=1))
    (out / "chat_template.jinja").write_text(CHAT_TEMPLATE)
    return int(tok.get_vocab_size())


def model_config(vocab: int, ids: dict[str, int], args: argparse.Namespace) -> dict[str, object]:
    heads = args.text_hidden // 64  # head_dim 64: mrope sections of 8 + 12 + 12 rotary pairs
    text = {
        "model_type": "qwen2_vl_text",
        "vocab_size": vocab,
        "hidden_size": args.text_hidden,
        "intermediate_size": args.text_hidden * 11 // 4,
        "num_hidden_layers": args.text_layers,
        "num_attention_heads": heads,
        "num_key_value_heads": max(1, heads // 4),
        "hidden_act": "silu",
        "max_position_embeddings": 32768,
        "rms_norm_eps": 1e-6,
        "rope_theta": 1000000.0,
        "rope_scaling": {"type": "mrope", "mrope_section": [8, 12, 12]},
        "use_sliding_window": False,
        "sliding_window": 32768,
        "max_window_layers": args.text_layers,
        "tie_word_embeddings": True,
        "bos_token_id": ids["<|endoftext|>"],
        "eos_token_id": ids["<|im_end|>"],
        "torch_dtype": "bfloat16",
    }
    return {
        "architectures": ["Qwen2VLForConditionalGeneration"],
        "model_type": "qwen2_vl",
        **{key: value for key, value in text.items() if key != "model_type"},
        "text_config": text,
        "vision_config": {
            "model_type": "qwen2_vl_vision",
            "depth": args.vision_depth,
            "embed_dim": 1280,
            "hidden_size": args.text_hidden,  # the merger projects into the language model's width
            "hidden_act": "quick_gelu",
            "mlp_ratio": 4,
            "num_heads": 16,
            "in_chans": 3,
            "in_channels": 3,
            "patch_size": 14,
            "spatial_patch_size": 14,
            "spatial_merge_size": 2,
            "temporal_patch_size": 2,
        },
        "image_token_id": ids["<|image_pad|>"],
        "video_token_id": ids["<|video_pad|>"],
        "vision_start_token_id": ids["<|vision_start|>"],
        "vision_end_token_id": ids["<|vision_end|>"],
        "vision_token_id": ids["<|vision_pad|>"],
        "tie_word_embeddings": True,
        "torch_dtype": "bfloat16",
    }


def processor_configs(out: Path) -> None:
    common = {
        "do_resize": True,
        "do_rescale": True,
        "rescale_factor": 1 / 255,
        "do_normalize": True,
        "do_convert_rgb": True,
        "image_mean": CLIP_MEAN,
        "image_std": CLIP_STD,
        "patch_size": 14,
        "temporal_patch_size": 2,
        "merge_size": 2,
        **PIXELS,
        "size": {"shortest_edge": PIXELS["min_pixels"], "longest_edge": PIXELS["max_pixels"]},
    }
    image = {**common, "image_processor_type": "Qwen2VLImageProcessor", "processor_class": "Qwen2VLProcessor"}
    video = {**common, "video_processor_type": "Qwen2VLVideoProcessor", "processor_class": "Qwen2VLProcessor"}
    (out / "preprocessor_config.json").write_text(json.dumps(image, indent=1))
    (out / "video_preprocessor_config.json").write_text(json.dumps(video, indent=1))
    (out / "processor_config.json").write_text(json.dumps({"processor_class": "Qwen2VLProcessor"}, indent=1))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("out", type=Path)
    parser.add_argument("--text-layers", type=int, default=4)
    parser.add_argument("--text-hidden", type=int, default=512)
    parser.add_argument("--vision-depth", type=int, default=32)
    args = parser.parse_args()
    out: Path = args.out
    out.mkdir(parents=True, exist_ok=True)
    size = build_tokenizer(out)
    tokenizer = json.loads((out / "tokenizer.json").read_text())
    ids = {entry["content"]: entry["id"] for entry in tokenizer["added_tokens"]}
    vocab = -(-size // 128) * 128  # the embedding rows, padded as checkpoints pad them
    (out / "config.json").write_text(json.dumps(model_config(vocab, ids, args), indent=1))
    generation = {"eos_token_id": [ids["<|im_end|>"], ids["<|endoftext|>"]], "pad_token_id": ids["<|endoftext|>"]}
    (out / "generation_config.json").write_text(json.dumps(generation, indent=1))
    processor_configs(out)
    print(f"wrote {out}: vocabulary {size} (embedding rows {vocab}), special tokens {ids}")


if __name__ == "__main__":
    main()
