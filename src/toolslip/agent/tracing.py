"""OpenTelemetry traces of runs, following the GenAI semantic conventions; a hook, off unless added.

    from toolslip.tracing import Tracing
    agent = Agent(model=..., tools=..., hooks=[Tracing()])      # spans go to the global TracerProvider

Each run is a span ``invoke_agent {agent}``; under it, each model call is ``chat {model}`` (its duration is
the model call's) and each tool call ``execute_tool {tool}``. Attributes are the conventions' own
(``gen_ai.operation.name``, ``gen_ai.provider.name``, ``gen_ai.request.model``, ``gen_ai.response.model``,
``gen_ai.response.finish_reasons``, ``gen_ai.usage.*``, ``gen_ai.tool.name``, ``gen_ai.tool.call.id``,
``error.type``) plus ``toolslip.*`` ones for what the conventions have no name for (a tool's declared
effects, a call's outcome, the run's stop reason). Message contents, tool arguments and results are
recorded only with ``capture_content=True``: they often hold personal data.

Nothing is imported from OpenTelemetry until a :class:`Tracing` is made, so runs without it pay nothing.
Put it first in ``hooks`` so its spans enclose what the other hooks do. Needs ``pip install 'toolslip[otel]'``.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ..core.errors import ConfigError
from ..core.messages import (
    File,
    Image,
    Message,
    ModelResponse,
    Part,
    ProviderPart,
    Reasoning,
    Request,
    Text,
    ToolCall,
    ToolResult,
    Usage,
)
from ..core.version import __version__
from .hooks import Hook, RunContext

if TYPE_CHECKING:
    from opentelemetry.trace import Span, Tracer, TracerProvider

    from ..core.result import RunResult
    from .tools import Tool

__all__ = ["Tracing"]

_STATE = "tracing"


@dataclass
class _Spans:
    run: Span
    model: Span | None = None
    tools: dict[str, Span] = field(default_factory=dict)


class Tracing(Hook):
    """A hook that records each run, model call and tool call as an OpenTelemetry span."""

    def __init__(
        self,
        tracer_provider: TracerProvider | None = None,
        *,
        capture_content: bool = False,
        agent_name: str = "toolslip",
    ) -> None:
        try:
            from opentelemetry import trace
        except ImportError:
            raise ConfigError("tracing needs OpenTelemetry: pip install 'toolslip[otel]'") from None
        self._trace = trace
        self._tracer: Tracer = trace.get_tracer("toolslip", __version__, tracer_provider=tracer_provider)
        self.capture_content = capture_content
        self.agent_name = agent_name

    # --- the run ------------------------------------------------------------------------------------

    async def prepare_request(self, ctx: RunContext, request: Request) -> Request:
        if _STATE not in ctx.state:  # the first thing the loop does in a run
            provider, model = _split_name(ctx.model_name)
            run = self._tracer.start_span(
                f"invoke_agent {self.agent_name}",
                kind=self._trace.SpanKind.INTERNAL,
                attributes={
                    "gen_ai.operation.name": "invoke_agent",
                    "gen_ai.agent.name": self.agent_name,
                    "gen_ai.conversation.id": ctx.run_id,
                    "gen_ai.provider.name": provider,
                    "gen_ai.request.model": model,
                },
            )
            if self.capture_content:
                run.set_attribute("gen_ai.input.messages", _messages_json(ctx.messages))
            ctx.state[_STATE] = _Spans(run=run)
        return request

    async def on_finish(self, ctx: RunContext, result: RunResult) -> None:
        spans = ctx.state.pop(_STATE, None)
        if spans is None:
            return
        run = spans.run
        run.set_attribute("toolslip.run.stop_reason", str(result.stop_reason))
        run.set_attribute("toolslip.run.steps", result.steps)
        run.set_attribute("toolslip.run.tool_calls", result.tool_calls)
        _set_usage(run, result.usage)
        if self.capture_content and result.messages:
            run.set_attribute("gen_ai.output.messages", _messages_json(result.messages[-1:]))
        run.end()

    async def on_error(self, ctx: RunContext, error: BaseException) -> None:
        spans: _Spans | None = ctx.state.pop(_STATE, None)
        if spans is None:
            return
        spans.run.record_exception(error)
        open_spans = [*spans.tools.values(), *([spans.model] if spans.model else []), spans.run]
        for span in open_spans:
            span.set_attribute("error.type", type(error).__qualname__)
            span.set_status(self._trace.StatusCode.ERROR, str(error)[:300])
            span.end()

    # --- model calls --------------------------------------------------------------------------------

    def _child(self, ctx: RunContext, name: str, client: bool, attributes: dict[str, Any]) -> Span | None:
        spans: _Spans | None = ctx.state.get(_STATE)
        if spans is None:
            return None
        kind = self._trace.SpanKind.CLIENT if client else self._trace.SpanKind.INTERNAL
        parent = self._trace.set_span_in_context(spans.run)
        return self._tracer.start_span(name, context=parent, kind=kind, attributes=attributes)

    async def before_model(self, ctx: RunContext, request: Request) -> ModelResponse | None:
        provider, model = _split_name(ctx.model_name)
        attributes: dict[str, Any] = {
            "gen_ai.operation.name": "chat",
            "gen_ai.provider.name": provider,
            "gen_ai.system": provider,  # the older name, still read by many backends
            "gen_ai.request.model": request.model or model,
            "toolslip.step": ctx.step,
        }
        if request.settings.max_tokens is not None:
            attributes["gen_ai.request.max_tokens"] = request.settings.max_tokens
        if request.settings.temperature is not None:
            attributes["gen_ai.request.temperature"] = request.settings.temperature
        if self.capture_content:
            system = [m for m in request.messages if m.role == "system"]
            if system:
                attributes["gen_ai.system_instructions"] = _parts_json([p for m in system for p in m.parts])
            attributes["gen_ai.input.messages"] = _messages_json([m for m in request.messages if m.role != "system"])
        span = self._child(ctx, f"chat {attributes['gen_ai.request.model']}", True, attributes)
        if span is not None:
            ctx.state[_STATE].model = span
        return None

    async def after_model(self, ctx: RunContext, request: Request, response: ModelResponse) -> ModelResponse:
        spans: _Spans | None = ctx.state.get(_STATE)
        span = spans.model if spans else None
        if spans is None or span is None:  # an earlier hook answered (a journal replay): no call was made
            return response
        spans.model = None
        if response.model:
            span.set_attribute("gen_ai.response.model", response.model)
        if response.id:
            span.set_attribute("gen_ai.response.id", response.id)
        span.set_attribute("gen_ai.response.finish_reasons", [response.raw_stop_reason or response.stop_reason])
        usage = response.usage
        _set_usage(span, usage)
        if usage.cache_read_tokens:
            span.set_attribute("gen_ai.usage.cache_read.input_tokens", usage.cache_read_tokens)
        if usage.cache_write_tokens:
            span.set_attribute("gen_ai.usage.cache_creation.input_tokens", usage.cache_write_tokens)
        if self.capture_content:
            span.set_attribute("gen_ai.output.messages", _messages_json([response.message], response.stop_reason))
        span.end()
        return response

    # --- tool calls ---------------------------------------------------------------------------------

    async def before_tool(self, ctx: RunContext, call: ToolCall, tool: Tool | None) -> None:
        attributes: dict[str, Any] = {
            "gen_ai.operation.name": "execute_tool",
            "gen_ai.tool.name": call.name,
            "gen_ai.tool.call.id": call.id,
            "gen_ai.tool.type": "function",
        }
        if tool is not None:
            attributes["gen_ai.tool.description"] = tool.description
            attributes["toolslip.tool.effects"] = sorted(str(e) for e in tool.effects)
        if self.capture_content:
            attributes["gen_ai.tool.call.arguments"] = call.raw_arguments or json.dumps(
                call.arguments, ensure_ascii=False
            )
        span = self._child(ctx, f"execute_tool {call.name}", False, attributes)
        if span is not None:
            ctx.state[_STATE].tools[call.id] = span
        return None

    async def after_tool(self, ctx: RunContext, call: ToolCall, tool: Tool | None, result: ToolResult) -> ToolResult:
        spans: _Spans | None = ctx.state.get(_STATE)
        span = spans.tools.pop(call.id, None) if spans else None
        if span is None:
            return result
        span.set_attribute("toolslip.tool.outcome", "error" if result.is_error else "ok")
        if result.is_error:
            kind = "unknown_tool" if tool is None else "invalid_arguments" if call.arguments is None else "tool_error"
            span.set_attribute("error.type", kind)
            span.set_status(self._trace.StatusCode.ERROR, result.text[:300])
        if self.capture_content:
            span.set_attribute("gen_ai.tool.call.result", result.text)
        span.end()
        return result


def _split_name(name: str) -> tuple[str, str]:
    """(provider, model) from a model name like ``openai:gpt-4o-mini``; local and test models are toolslip's."""
    provider, colon, model = name.partition(":")
    return (provider, model) if colon else ("toolslip", name)


def _set_usage(span: Span, usage: Usage) -> None:
    # The conventions count cached input inside input_tokens, and report it again on its own.
    span.set_attribute(
        "gen_ai.usage.input_tokens", usage.input_tokens + usage.cache_read_tokens + usage.cache_write_tokens
    )
    span.set_attribute("gen_ai.usage.output_tokens", usage.output_tokens)


def _part(part: Part) -> dict[str, Any]:
    """One part in the conventions' message-part shape."""
    if isinstance(part, Text):
        return {"type": "text", "content": part.text}
    if isinstance(part, ToolCall):
        return {"type": "tool_call", "id": part.id, "name": part.name, "arguments": part.arguments}
    if isinstance(part, ToolResult):
        return {"type": "tool_call_response", "id": part.call_id, "response": part.text}
    if isinstance(part, Image):  # the bytes themselves are left out: a span is no place for megabytes
        if part.url:
            return {"type": "uri", "modality": "image", "uri": part.url}
        return {"type": "blob", "modality": "image", "mime_type": part.media_type}
    if isinstance(part, Reasoning):
        return {"type": "reasoning", "content": part.text}
    if isinstance(part, File):
        return {"type": "file", "mime_type": part.media_type, **({"uri": part.url} if part.url else {})}
    provider: ProviderPart = part
    return {"type": str(provider.data.get("type", provider.format))}


def _parts_json(parts: list[Part]) -> str:
    return json.dumps([_part(p) for p in parts], ensure_ascii=False)


def _messages_json(messages: list[Message], finish: str | None = None) -> str:
    out = []
    for message in messages:
        item: dict[str, Any] = {"role": message.role, "parts": [_part(p) for p in message.parts]}
        if finish is not None:
            item["finish_reason"] = finish
        out.append(item)
    return json.dumps(out, ensure_ascii=False)
