"""verl's multi-turn SFT dataset reading our exports without parquet's null padding.

Parquet stores the ``messages`` and ``tools`` lists as lists of one struct type, so verl's
``MultiTurnSFTDataset`` reads every message and tool schema back with the keys of all the others set to ``None``,
and a chat template renders them (``"properties": {"order_id": {...}, "user_id": null, ...}``). Our exports also
hold the exact JSON text (``messages_json``, ``tools_json``); this subclass uses it and changes nothing else.
Select it in verl's SFT trainer with ``data.custom_cls.path=pkg://verl_rewards.gold.sft_dataset``
``data.custom_cls.name=GoldSFTDataset``.
"""

from __future__ import annotations

import json
from typing import Any

from verl.utils.dataset.multiturn_sft_dataset import MultiTurnSFTDataset

from .sft import MESSAGES_JSON, TOOLS_JSON


class GoldSFTDataset(MultiTurnSFTDataset):
    """:class:`MultiTurnSFTDataset` over ``messages_json`` / ``tools_json`` when the file has them."""

    def _read_files_and_process(self) -> None:
        super()._read_files_and_process()
        columns = self.dataframe.columns
        if MESSAGES_JSON in columns:
            self.messages = [json.loads(text) for text in self.dataframe[MESSAGES_JSON]]
        if TOOLS_JSON in columns:
            self.tools = [json.loads(text) for text in self.dataframe[TOOLS_JSON]]

    def _build_messages(self, example: dict) -> Any:
        if MESSAGES_JSON in example and isinstance(example[MESSAGES_JSON], str):
            example = dict(example)
            example[self.messages_key] = json.loads(example[MESSAGES_JSON])
        return super()._build_messages(example)
