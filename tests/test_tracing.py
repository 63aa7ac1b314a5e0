"""OpenTelemetry spans of the expenses example, exported to memory and checked name by name."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import SpanKind, StatusCode

from toolslip import Agent, Request
from toolslip.cli.files import load_tools_file
from toolslip.errors import ProviderError
from toolslip.messages import Message, ModelResponse, Usage
from toolslip.testing import FunctionModel, ScriptedModel, StreamedModel, call, raw_call
from toolslip.tracing import Tracing

ROOT = Path(__file__).parents[1]
TOOLS = load_tools_file(str(ROOT / "examples" / "expenses.py"))
QUESTION = "我出差花了 320 美元和 15000 日元，折人民币一共多少？平摊到 4 个人是多少？"
ANSWER = "一共 3002.6 元人民币，每人 750.65 元。"


def expenses(name: str = "scripted") -> ScriptedModel:
    answer = ModelResponse(
        message=Message.assistant(ANSWER),
        stop_reason="end_turn",
        usage=Usage(input_tokens=150, output_tokens=31, cache_read_tokens=256),
        model="claude-sonnet-4-5-20250929",
        id="msg_5",
        raw_stop_reason="end_turn",
    )
    turns = [
        call("fx", amount=320, currency="USD"),
        call("fx", amount=15000, currency="JPY"),
        call("calc", expr="2297.6 + 705.0"),
        call("calc", expr="3002.6 / 4"),
        answer,
    ]
    return ScriptedModel(turns, name=name)


def exporter() -> tuple[InMemorySpanExporter, TracerProvider]:
    memory = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(memory))
    return memory, provider


def by_name(spans: tuple[ReadableSpan, ...]) -> dict[str, list[ReadableSpan]]:
    out: dict[str, list[ReadableSpan]] = {}
    for span in spans:
        out.setdefault(span.name, []).append(span)
    return out


async def test_expenses_run_is_one_agent_span_with_model_and_tool_children() -> None:
    memory, provider = exporter()
    agent = Agent(model=expenses("anthropic:claude-sonnet-4-5"), tools=TOOLS, hooks=[Tracing(provider)])
    result = await agent.arun(QUESTION, run_id="run-42")
    assert result.output == ANSWER
    spans = memory.get_finished_spans()
    named = by_name(spans)
    assert sorted((name, len(group)) for name, group in named.items()) == [
        ("chat claude-sonnet-4-5", 5),
        ("execute_tool calc", 2),
        ("execute_tool fx", 2),
        ("invoke_agent toolslip", 1),
    ]
    (run,) = named["invoke_agent toolslip"]
    assert run.parent is None and run.kind == SpanKind.INTERNAL
    assert all(s.parent is not None and s.parent.span_id == run.context.span_id for s in spans if s is not run)
    assert all(s.context.trace_id == run.context.trace_id for s in spans)
    assert dict(run.attributes or {}) == {
        "gen_ai.operation.name": "invoke_agent",
        "gen_ai.agent.name": "toolslip",
        "gen_ai.conversation.id": "run-42",
        "gen_ai.provider.name": "anthropic",
        "gen_ai.request.model": "claude-sonnet-4-5",
        "toolslip.run.stop_reason": "completed",
        "toolslip.run.steps": 5,
        "toolslip.run.tool_calls": 4,
        "gen_ai.usage.input_tokens": 406,
        "gen_ai.usage.output_tokens": 31,
    }
    chats = sorted(named["chat claude-sonnet-4-5"], key=lambda s: s.start_time or 0)
    assert all(c.kind == SpanKind.CLIENT for c in chats)
    assert [c.attributes["gen_ai.response.finish_reasons"] for c in chats if c.attributes] == [("tool_use",)] * 4 + [
        ("end_turn",)
    ]
    last = dict(chats[-1].attributes or {})
    assert {k: v for k, v in last.items() if k != "gen_ai.response.finish_reasons"} == {
        "gen_ai.operation.name": "chat",
        "gen_ai.provider.name": "anthropic",
        "gen_ai.system": "anthropic",
        "gen_ai.request.model": "claude-sonnet-4-5",
        "toolslip.step": 5,
        "gen_ai.response.model": "claude-sonnet-4-5-20250929",
        "gen_ai.response.id": "msg_5",
        "gen_ai.usage.input_tokens": 406,
        "gen_ai.usage.output_tokens": 31,
        "gen_ai.usage.cache_read.input_tokens": 256,
    }
    fx_usd = sorted(named["execute_tool fx"], key=lambda s: s.start_time or 0)[0]
    calls = [c for m in result.messages for c in m.tool_calls]
    assert dict(fx_usd.attributes or {}) == {
        "gen_ai.operation.name": "execute_tool",
        "gen_ai.tool.name": "fx",
        "gen_ai.tool.call.id": calls[0].id,
        "gen_ai.tool.type": "function",
        "gen_ai.tool.description": TOOLS.get("fx").description,  # type: ignore[union-attr]
        "toolslip.tool.effects": ("read_only",),
        "toolslip.tool.outcome": "ok",
    }
    # each tool span lies inside the run and after the model call that asked for it
    assert all((run.start_time or 0) <= (s.start_time or 0) <= (s.end_time or 0) <= (run.end_time or 0) for s in spans)
    assert not any(k.startswith("gen_ai.input") or k.endswith("arguments") for s in spans for k in s.attributes or {})


async def test_contents_are_recorded_only_when_asked_for() -> None:
    memory, provider = exporter()
    agent = Agent(
        model=expenses(), tools=TOOLS, system="算数必须用工具。", hooks=[Tracing(provider, capture_content=True)]
    )
    await agent.arun(QUESTION)
    named = by_name(memory.get_finished_spans())
    first_chat = min(named["chat scripted"], key=lambda s: s.start_time or 0)
    attributes = dict(first_chat.attributes or {})
    assert json.loads(str(attributes["gen_ai.system_instructions"])) == [
        {"type": "text", "content": "算数必须用工具。"}
    ]
    assert json.loads(str(attributes["gen_ai.input.messages"])) == [
        {"role": "user", "parts": [{"type": "text", "content": QUESTION}]}
    ]
    assert attributes["gen_ai.provider.name"] == "toolslip"
    output = json.loads(str(attributes["gen_ai.output.messages"]))
    assert output[0]["parts"][0]["arguments"] == {"amount": 320, "currency": "USD"}
    fx = min(named["execute_tool fx"], key=lambda s: s.start_time or 0)
    assert (fx.attributes or {})["gen_ai.tool.call.result"] == "320 USD = 2297.6 CNY"


async def test_a_failed_call_and_a_failed_run_are_marked_as_errors() -> None:
    memory, provider = exporter()

    def answer(request: Request) -> object:
        if len(request.messages) == 1:
            return raw_call("fx", '{"amount": 320')
        raise ProviderError("Anthropic answered 529 Overloaded", status=529, retryable=True)

    agent = Agent(model=StreamedModel(FunctionModel(answer)), tools=TOOLS, hooks=[Tracing(provider)])
    with pytest.raises(ProviderError):
        await agent.arun(QUESTION, on_event=lambda e: None)
    named = by_name(memory.get_finished_spans())
    (tool,) = named["execute_tool fx"]
    assert (tool.attributes or {})["error.type"] == "invalid_arguments"
    assert tool.status.status_code == StatusCode.ERROR
    (run,) = named["invoke_agent toolslip"]
    failed_chat = max(named["chat function"], key=lambda s: s.start_time or 0)
    for span in (run, failed_chat):
        assert (span.attributes or {})["error.type"] == "ProviderError"
        assert span.status.status_code == StatusCode.ERROR
    assert [e.name for e in run.events] == ["exception"]


def test_opentelemetry_is_not_imported_unless_tracing_is_used_and_its_absence_is_explained() -> None:
    script = (
        "import sys, toolslip\n"
        "from toolslip.testing import ScriptedModel\n"
        "assert toolslip.run(ScriptedModel(['hi']), 'q').output == 'hi'\n"
        "assert not [m for m in sys.modules if m.startswith('opentelemetry')]\n"
        "sys.modules['opentelemetry'] = None\n"
        "from toolslip.tracing import Tracing\n"
        "try:\n    Tracing()\nexcept toolslip.ConfigError as exc:\n    print(exc)\n"
    )
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "tracing needs OpenTelemetry: pip install 'toolslip[otel]'"
