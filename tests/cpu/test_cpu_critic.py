"""The CPU backend's critic: verl's value-model loader asks transformers for flash attention, which a CPU cannot
run; the CPU critic worker registers the model's token-classification class so that the same loader gets SDPA."""

from __future__ import annotations

import pytest
import torch

from verl_rewards.cpu.model import build_tiny_qwen2


def test_verls_value_model_loader_gets_sdpa_on_the_cpu(tmp_path):
    from transformers import AutoConfig
    from verl.utils.model import load_valuehead_model

    from verl_rewards.cpu.training import register_sdpa_value_model

    path = build_tiny_qwen2(tmp_path / "tiny", [])
    config = AutoConfig.from_pretrained(path)
    config.num_labels = 1
    with pytest.raises(RuntimeError, match="is not a value head model"):  # verl's loader as it is, on a CPU
        load_valuehead_model(path, torch.float32, config, False)
    cls = register_sdpa_value_model(config)
    assert register_sdpa_value_model(config) is cls  # idempotent
    model = load_valuehead_model(path, torch.float32, config, False)
    assert isinstance(model, cls) and type(model).__name__ == "Qwen2ForTokenClassification"
    assert model.config._attn_implementation == "sdpa"
    assert model(torch.tensor([[1, 2, 3]])).logits.shape == (1, 3, 1)  # one value per token
