"""Shared fixtures: locally built tokenizers, verl configs composed from verl's own YAML, a local Ray cluster."""

from __future__ import annotations

import os

import pytest

# no downloads, no telemetry: everything the tests need is built locally
for _key, _value in {"HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", "RAY_USAGE_STATS_ENABLED": "0"}.items():
    os.environ.setdefault(_key, _value)


@pytest.fixture(scope="session")
def small_tokenizer_dir(tmp_path_factory: pytest.TempPathFactory) -> str:
    from verl_rewards.local_tokenizer import build_small_tokenizer

    return build_small_tokenizer(tmp_path_factory.mktemp("tok_small"))


@pytest.fixture(scope="session")
def small_tokenizer(small_tokenizer_dir: str):
    from transformers import AutoTokenizer

    return AutoTokenizer.from_pretrained(small_tokenizer_dir)


@pytest.fixture(scope="session")
def qwen_tokenizer_dir(tmp_path_factory: pytest.TempPathFactory) -> str:
    from verl_rewards.local_tokenizer import build_qwen_tokenizer

    return build_qwen_tokenizer(tmp_path_factory.mktemp("tok_qwen"))


@pytest.fixture(scope="session")
def qwen_tokenizer(qwen_tokenizer_dir: str):
    from transformers import AutoTokenizer

    return AutoTokenizer.from_pretrained(qwen_tokenizer_dir)


@pytest.fixture(scope="session")
def ray_cluster():
    ray = pytest.importorskip("ray")
    if not ray.is_initialized():
        ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    yield ray
    ray.shutdown()
