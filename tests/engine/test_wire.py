"""What a tau2 conversation's requests carry (``engine/wire.py``): tau2's ``to_litellm_messages`` as litellm sends it.
The whole-request comparison with litellm's recorded bodies is ``tests/tau2/test_tau2_runs_parity.py``; here, the
cases a scripted server does not produce."""

from __future__ import annotations

import pytest

from verl_rewards.engine.wire import encode

CALL = {"id": "c1", "type": "function", "function": {"name": "f", "arguments": '{"city":"Zürich","n":1}'}}


def test_tau2_wire_leaves_out_null_content_and_names_each_call_with_arguments_written_by_json_dumps() -> None:
    view = [
        {"role": "system", "content": "policy"},
        {"role": "assistant", "content": None, "tool_calls": [CALL]},
        {"role": "tool", "tool_call_id": "c1", "content": "ok"},
        {"role": "assistant", "content": "Done."},
    ]
    assert encode(view, "tau2") == [
        {"role": "system", "content": "policy"},
        {
            "role": "assistant",
            "tool_calls": [
                {
                    "id": "c1",
                    "name": "f",
                    "function": {"name": "f", "arguments": '{"city": "Z\\u00fcrich", "n": 1}'},
                    "type": "function",
                }
            ],
        },
        {"role": "tool", "content": "ok", "tool_call_id": "c1"},
        {"role": "assistant", "content": "Done."},
    ]


def test_tau2_wire_keeps_text_next_to_calls_and_unparseable_arguments_as_sent() -> None:
    bad = dict(CALL, function={"name": "f", "arguments": "{not json"})
    (out,) = encode([{"role": "assistant", "content": "Let me check.", "tool_calls": [bad]}], "tau2")
    assert out["content"] == "Let me check." and out["tool_calls"][0]["function"]["arguments"] == "{not json"


def test_plain_wire_is_the_view_and_an_unknown_wire_is_an_error() -> None:
    view = [{"role": "assistant", "content": None, "tool_calls": [CALL]}]
    assert encode(view, "plain") == view
    with pytest.raises(ValueError, match="wire must be one of"):
        encode(view, "litellm")
