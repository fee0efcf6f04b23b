"""A multi-turn agent loop on verl's public ``AgentLoopBase``, with the token stream of verl's ``ToolAgentLoop``.

verl 0.9.1's ``ToolAgentLoop`` (``verl/experimental/agent_loop/tool_agent_loop.py``) runs a private state machine
(``_handle_pending_state`` / ``_handle_generating_state`` / ``_handle_processing_tools_state``) that ends on a text
reply. Normal mode needs a text reply to go to the simulated user instead, so rather than override those private
methods, :class:`TurnLoop` subclasses the public base class and builds the same token stream with verl's public
pieces: the tool parser (``ToolParser``), the LLM server client, the tool-call schemas, and the base class's
Continuous Token helpers (reached through :mod:`verl_rewards.verl_compat`, as verl does not document them).

What a subclass gets (the rules of ``ToolAgentLoop``, kept token for token, ``tests/tau2/test_tau2_loop_tokens.py``
compares the two):

- :meth:`TurnLoop.start_tokens`: the prompt tokens of the opening messages (tool schemas in the template);
- :meth:`TurnLoop.generate`: one generation (tool-parser stop tokens added), appended with mask 1; ``None`` when a
  verl budget (``response_length``, ``multi_turn.max_assistant_turns``, ``multi_turn.max_user_turns``) ends the
  run, else the assistant message (at most ``multi_turn.max_parallel_calls`` tool calls);
- :meth:`TurnLoop.append_messages`: messages appended with mask 0, tool results cut to
  ``multi_turn.max_tool_response_length`` (``tool_response_truncate_side``); ``False`` when they would reach
  ``response_length`` (the stream is then left as it was);
- :meth:`TurnLoop.output`: verl's ``AgentLoopOutput`` (response cut at ``response_length``).

Text only: the rows of normal mode carry no images, videos or audio.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from typing import Any
from uuid import uuid4

from verl.experimental.agent_loop.agent_loop import AgentLoopBase, AgentLoopMetrics, AgentLoopOutput
from verl.experimental.agent_loop.tool_parser import ToolParser
from verl.tools.schemas import OpenAIFunctionCallSchema, OpenAIFunctionParsedSchema
from verl.utils.profiler import simple_timer

from .. import verl_compat

logger = logging.getLogger(__name__)


@dataclass
class TokenStream:
    """One trajectory's messages and tokens (``prompt_ids`` holds the prompt and the response so far)."""

    messages: list[dict[str, Any]]
    request_id: str
    tools: dict[str, Any]
    tool_schemas: list[dict[str, Any]]
    prompt_ids: list[int] = field(default_factory=list)
    response_mask: list[int] = field(default_factory=list)
    response_logprobs: list[float] = field(default_factory=list)
    metrics: dict[str, Any] = field(default_factory=dict)
    extra_fields: dict[str, Any] = field(default_factory=dict)
    routed_experts: Any = None
    user_turns: int = 0
    assistant_turns: int = 0


class TurnLoop(AgentLoopBase):
    """verl's ``AgentLoopBase`` with ``ToolAgentLoop``'s token handling as public steps (see the module docstring);
    a subclass writes ``run``."""

    def __init__(self, *args: Any, tools: Any = None, **kwargs: Any):
        super().__init__(*args, **kwargs)
        multi_turn = self.rollout_config.multi_turn
        self.max_user_turns = multi_turn.max_user_turns
        self.max_assistant_turns = multi_turn.max_assistant_turns
        self.max_parallel_calls = multi_turn.max_parallel_calls
        self.max_tool_response_length = multi_turn.max_tool_response_length
        self.tool_response_truncate_side = multi_turn.tool_response_truncate_side
        tool_list = tools.tools if tools else []  # verl's ToolListWrap
        self.tools = {tool.name: tool for tool in tool_list}
        self.tool_schemas = [tool.tool_schema.model_dump(exclude_unset=True, exclude_none=True) for tool in tool_list]
        self.tool_parser = ToolParser.get_tool_parser(multi_turn.format, self.tokenizer)
        self.prompt_length = self.rollout_config.prompt_length
        self.response_length = self.rollout_config.response_length

    # --------------------------------------------------------------------------------------------- the stream
    def new_stream(self, messages: list[dict[str, Any]], row: dict[str, Any], priority: int = 0) -> TokenStream:
        """A trajectory's stream over the row's tools (``extra_info.tool_selection`` picks some, as verl does)."""
        full_determinism = self.rollout_config.full_determinism
        request_id = f"det-{priority}" if full_determinism else uuid4().hex
        selection = (row.get("extra_info") or {}).get("tool_selection")
        tools, schemas = self.tools, self.tool_schemas
        if selection and self.tools:
            tools = {name: self.tools[name] for name in selection if name in self.tools}
            schemas = [t.tool_schema.model_dump(exclude_unset=True, exclude_none=True) for t in tools.values()]
        return TokenStream(messages=messages, request_id=request_id, tools=tools, tool_schemas=schemas)

    async def start_tokens(self, stream: TokenStream) -> None:
        """The prompt tokens of the stream's messages."""
        stream.prompt_ids = await verl_compat.build_initial_tokens(self, stream.messages, stream.tool_schemas)

    async def generate(
        self, stream: TokenStream, sampling_params: dict[str, Any], ignore_termination: bool = False
    ) -> dict[str, Any] | None:
        """One generation appended with mask 1; the assistant message (also appended to the stream's messages),
        or ``None`` when a verl budget ends the run first."""
        if self.tool_parser.stop_token_ids:
            stop = list(set((sampling_params.get("stop_token_ids") or []) + self.tool_parser.stop_token_ids))
            sampling_params = {**sampling_params, "stop_token_ids": stop}
        with simple_timer("generate_sequences", stream.metrics):
            output = await self.server_manager.generate(
                request_id=stream.request_id,
                prompt_ids=stream.prompt_ids,
                sampling_params=sampling_params,
                image_data=None,
                video_data=None,
                mm_processor_output=None,
                audio_data=None,
                mm_processor_kwargs=dict(self.mm_processor_kwargs or {}),
            )
        preempted = output.num_preempted
        if stream.metrics.get("num_preempted") is None:
            stream.metrics["num_preempted"] = preempted if preempted is not None else -1
        else:
            stream.metrics["num_preempted"] += preempted if preempted is not None else 0
        if not stream.extra_fields:
            stream.extra_fields.update(output.extra_fields)
        else:  # later turns: the newest max_global_steps, summed speculative-decoding counters
            if output.extra_fields.get("max_global_steps", None):
                stream.extra_fields["max_global_steps"] = output.extra_fields["max_global_steps"]
            for key in verl_compat.spec_decode_extra_keys():
                if key in output.extra_fields and key in stream.extra_fields:
                    stream.extra_fields[key] = int(stream.extra_fields[key]) + int(output.extra_fields[key])

        stream.assistant_turns += 1
        merged, mask, logprobs = await verl_compat.merge_assistant_tokens(
            self,
            stream.prompt_ids,
            output.token_ids,
            stream.response_mask,
            stream.response_logprobs if (stream.response_logprobs or output.log_probs) else None,
            output.log_probs if output.log_probs else None,
        )
        stream.prompt_ids = merged.token_ids
        stream.response_mask = mask
        if logprobs is not None:
            stream.response_logprobs = logprobs
        if output.routed_experts is not None:
            stream.routed_experts = output.routed_experts

        if not ignore_termination and len(stream.response_mask) >= self.response_length:
            return None
        if self.max_assistant_turns and stream.assistant_turns >= self.max_assistant_turns:
            return None
        if self.max_user_turns and stream.user_turns >= self.max_user_turns:
            return None

        schemas = [tool.tool_schema for tool in stream.tools.values()]
        content, calls = await self.tool_parser.extract_tool_calls(output.token_ids, schemas)
        message = self.assistant_message(content, calls)
        stream.messages.append(message)
        return message

    def assistant_message(self, content: str, calls: list[Any]) -> dict[str, Any]:
        """The assistant message of a generation, as verl's ``ToolAgentLoop`` writes it (the chat template renders
        it again when later messages are appended): arguments parsed to an object, kept raw when they are not
        JSON."""
        message: dict[str, Any] = {"role": "assistant", "content": content or ""}
        if not calls:
            return message
        tool_calls = []
        for call in calls[: self.max_parallel_calls]:
            function, bad = OpenAIFunctionCallSchema.from_openai_function_parsed_schema(
                OpenAIFunctionParsedSchema(name=call.name, arguments=call.arguments)
            )
            if bad:
                logger.warning("invalid tool call arguments for %r: %r (kept raw)", call.name, call.arguments)
                function_dict: dict[str, Any] = {"name": call.name, "arguments": call.arguments}
            else:
                function_dict = function.model_dump()
            entry: dict[str, Any] = {"type": "function", "function": function_dict}
            if call.tool_call_id is not None:
                entry["id"] = call.tool_call_id
            tool_calls.append(entry)
        message["tool_calls"] = tool_calls
        return message

    async def append_messages(self, stream: TokenStream, messages: list[dict[str, Any]]) -> bool:
        """Append ``messages`` (tool results cut as verl cuts them) with mask 0 and count a user turn; ``False``
        when the stream would reach ``response_length`` (its tokens are then left as they were)."""
        previous = list(stream.messages)
        stream.messages.extend(self.truncated(m) for m in messages)
        merged, mask, logprobs = await verl_compat.merge_context_messages(
            self,
            previous,
            stream.messages,
            stream.prompt_ids,
            stream.response_mask,
            stream.response_logprobs if stream.response_logprobs else None,
            stream.tool_schemas,
        )
        if len(mask) >= self.response_length:
            return False
        stream.prompt_ids = merged.token_ids
        stream.response_mask = mask
        if stream.response_logprobs:
            stream.response_logprobs = logprobs or []
        stream.user_turns += 1
        return True

    def truncated(self, message: dict[str, Any]) -> dict[str, Any]:
        """A tool result cut to ``multi_turn.max_tool_response_length`` as ``ToolAgentLoop`` cuts its tool answers
        (what the agent sees)."""
        text = message.get("content")
        limit = self.max_tool_response_length
        if message.get("role") != "tool" or not isinstance(text, str) or not limit or len(text) <= limit:
            return message
        side = self.tool_response_truncate_side
        if side == "left":
            text = "(truncated)..." + text[-limit:]
        elif side == "right":
            text = text[:limit] + "...(truncated)"
        else:
            half = limit // 2
            text = text[:half] + "...(truncated)..." + text[-half:]
        return dict(message, content=text)

    def output(self, stream: TokenStream) -> AgentLoopOutput:
        """verl's output of the stream: prompt and response split, the response cut at ``response_length``."""
        response_ids = stream.prompt_ids[-len(stream.response_mask) :]
        prompt_ids = stream.prompt_ids[: len(stream.prompt_ids) - len(stream.response_mask)]
        output = AgentLoopOutput(
            prompt_ids=prompt_ids,
            response_ids=response_ids[: self.response_length],
            response_mask=stream.response_mask[: self.response_length],
            multi_modal_data={},
            mm_processor_kwargs=dict(self.mm_processor_kwargs or {}),
            mm_processor_output=None,
            response_logprobs=stream.response_logprobs[: self.response_length] if stream.response_logprobs else None,
            num_turns=stream.user_turns + stream.assistant_turns + 1,
            metrics=AgentLoopMetrics.model_validate(stream.metrics),
            routed_experts=(
                stream.routed_experts[: len(prompt_ids) + self.response_length]
                if stream.routed_experts is not None
                else None
            ),
            extra_fields=stream.extra_fields,
        )
        output.extra_fields.update({"turn_scores": [], "tool_rewards": []})
        return output
