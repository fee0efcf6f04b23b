"""tau-bench v1's user simulator prompt (``tau_bench/envs/user.py``, strategy ``llm``), as pure functions.

The simulated user's history starts as ``[system: user_system_prompt(instruction), user: GREETING]``; the
model's reply to it is the episode's first observation (the agent never sees the greeting). Each agent
``respond`` text is appended as a ``user`` message and each simulator reply as an ``assistant`` message; the
agent's tool calls are never shown. A reply containing :data:`~.environment.STOP_TOKEN` anywhere ends the episode. No
temperature is set by tau-bench (the provider's default applies).
"""

from __future__ import annotations

from typing import Any

from ..engine.rules import GREETING

_RULES = """Rules:
- Just generate one line at a time to simulate the user's message.
- Do not give away all the instruction at once. Only provide the information that is necessary for the current step.
- Do not hallucinate information that is not provided in the instruction. For example, if the agent asks for the order id but it is not mentioned in the instruction, do not make up an order id, just say you do not remember or have it.
- If the instruction goal is satisified, generate '###STOP###' as a standalone message without anything else to end the conversation.
- Do not repeat the exact instruction in the conversation. Instead, use your own words to convey the same information.
- Try to make the conversation as natural as possible, and stick to the personalities in the instruction."""  # noqa: E501 - prompt data, kept verbatim (including "satisified")


def user_system_prompt(instruction: str | None) -> str:
    """The simulated user's system prompt for a task instruction (None: no instruction block)."""
    shown = f"\n\nInstruction: {instruction}\n" if instruction is not None else ""
    return f"You are a user interacting with an agent.{shown}\n{_RULES}"


def user_start_messages(instruction: str | None) -> list[dict[str, Any]]:
    """The simulated user's history before its first reply."""
    return [{"role": "system", "content": user_system_prompt(instruction)}, {"role": "user", "content": GREETING}]


def user_history(instruction: str | None, agent_texts: list[str], user_replies: list[str]) -> list[dict[str, Any]]:
    """The simulated user's history after ``user_replies[i]`` answered ``agent_texts[i - 1]`` (reply 0: greeting).

    ``len(user_replies)`` must be ``len(agent_texts)`` or one more; the next model call continues this list.
    """
    if len(user_replies) not in (len(agent_texts), len(agent_texts) + 1):
        raise ValueError("user_replies must hold one reply more than agent_texts, or as many")
    messages = user_start_messages(instruction)
    for i, reply in enumerate(user_replies):
        if i > 0:
            messages.append({"role": "user", "content": agent_texts[i - 1]})
        messages.append({"role": "assistant", "content": reply})
    if len(agent_texts) == len(user_replies) and agent_texts:
        messages.append({"role": "user", "content": agent_texts[-1]})
    return messages
