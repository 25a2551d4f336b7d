"""A tiny random-weight Qwen3 and a byte-level BPE tokenizer trained here, with Qwen3's special tokens
and chat template: a real model folder for the trainers' tests, with no download."""

from __future__ import annotations

from pathlib import Path

SPECIAL = ["<|endoftext|>", "<|im_start|>", "<|im_end|>", "<tool_call>", "</tool_call>", "<tool_response>",
           "</tool_response>", "<think>", "</think>"]


def qwen3_chat_template() -> str:
    """Qwen3's own chat template, as TRL ships it (TRL swaps in its training variant for assistant-only loss)."""
    from importlib.resources import files

    return files("trl").joinpath("chat_templates/qwen3.jinja").read_text(encoding="utf-8")


def train_tokenizer(texts: list[str], vocab_size: int = 2000):
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast

    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(vocab_size=vocab_size, special_tokens=SPECIAL,
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet(), show_progress=False)
    tok.train_from_iterator(texts, trainer=trainer)
    fast = PreTrainedTokenizerFast(tokenizer_object=tok, eos_token="<|im_end|>", pad_token="<|endoftext|>",
                                   additional_special_tokens=SPECIAL[1:])
    fast.chat_template = qwen3_chat_template()
    return fast


def make_tiny_qwen(out: Path, texts: list[str], vocab_size: int = 2000, hidden: int = 64, layers: int = 2,
                   seed: int = 0) -> Path:
    """Save a tiny Qwen3 (random weights from a config) with a tokenizer trained on `texts` into `out`."""
    import torch
    from transformers import Qwen3Config, Qwen3ForCausalLM

    tokenizer = train_tokenizer(texts, vocab_size)
    config = Qwen3Config(vocab_size=len(tokenizer), hidden_size=hidden, intermediate_size=hidden * 2,
                         num_hidden_layers=layers, num_attention_heads=4, num_key_value_heads=2, head_dim=hidden // 4,
                         max_position_embeddings=8192, tie_word_embeddings=True,
                         eos_token_id=tokenizer.convert_tokens_to_ids("<|im_end|>"),
                         pad_token_id=tokenizer.pad_token_id, bos_token_id=None)
    torch.manual_seed(seed)
    Qwen3ForCausalLM(config).save_pretrained(out)
    tokenizer.save_pretrained(out)
    return out
