"""A tool-mode model driven in code mode: each turn of calls it wants becomes one program.

The injection suites judge the harness against :class:`~toolslip.testing.GullibleModel`, which obeys every
instruction it reads by writing tool calls. :class:`ProgramWriter` lets the same model run in code mode
without teaching it Python: it is shown the conversation as tool mode would show it (the real tools, each
program's calls and their results as direct calls and results), and every turn of calls it writes is sent
as one ``run_python`` program that makes those calls in order and prints each result on a marked line, from
which the next turn's view is rebuilt. So an attack it would carry out in tool mode, it carries out in
code mode too, through the program's calls and the gate in front of each.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

from ..code.mode import PROGRAM_TOOL
from ..core.messages import Message, ModelResponse, Request, ToolCall, ToolResult, ToolSpec
from ..core.model import Model
from ..providers.local_code import CODE_FUNCTIONS

__all__ = ["ProgramWriter"]

_MARK = "@@call@@"


@dataclass(eq=False)
class ProgramWriter:
    """Wraps ``model`` (which writes tool calls) so that it answers code mode's requests with programs."""

    model: Model

    @property
    def name(self) -> str:
        return self.model.name

    async def complete(self, request: Request) -> ModelResponse:
        functions = request.tools[0].extra.get(CODE_FUNCTIONS) if len(request.tools) == 1 else None
        if not functions:
            return await self.model.complete(request)
        specs: tuple[ToolSpec, ...] = tuple(functions["specs"])
        view = replace(request, tools=specs, messages=tuple(_as_tool_mode(request.messages)))
        response = await self.model.complete(view)
        calls = response.message.tool_calls
        if not calls:
            return response
        program = ToolCall(id=calls[0].id, name=PROGRAM_TOOL, arguments={"code": _program(calls)})
        return replace(response, message=Message.assistant(response.message.text, [program]))


def _program(calls: Sequence[ToolCall]) -> str:
    """Each call in order, its result (or its error) printed as one marked JSON line; the first line lists
    the calls, so the next turn's view can show them."""
    listed = [{"id": c.id, "name": c.name, "arguments": dict(c.arguments or {})} for c in calls]
    lines = [f"# {_MARK} {json.dumps(listed, ensure_ascii=False)}", "import json"]
    for call in calls:
        arguments = json.dumps(dict(call.arguments or {}), ensure_ascii=False)
        lines += [
            "try:",
            f"    value = {call.name}(**json.loads({arguments!r}))",
            f"    print({_MARK!r} + json.dumps({{'id': {call.id!r}, 'value': value}}))",
            "except RuntimeError as error:",
            f"    print({_MARK!r} + json.dumps({{'id': {call.id!r}, 'error': str(error)}}))",
        ]
    return "\n".join(lines)


def _as_tool_mode(messages: Sequence[Message]) -> list[Message]:
    """The transcript with each program written by :func:`_program` shown as its calls and their results."""
    out: list[Message] = []
    programs: dict[str, list[ToolCall]] = {}
    for message in messages:
        calls = [c for c in message.tool_calls if c.name == PROGRAM_TOOL]
        if calls:
            shown = [c for call in calls for c in _calls_in(str((call.arguments or {}).get("code", "")))]
            programs.update({call.id: shown for call in calls})
            out.append(Message.assistant(message.text, shown))
        elif results := [r for r in message.tool_results if r.call_id in programs]:
            out.append(Message.tool(r for result in results for r in _results_of(result, programs[result.call_id])))
        else:
            out.append(message)
    return out


def _calls_in(code: str) -> list[ToolCall]:
    first = code.partition("\n")[0]
    if not first.startswith(f"# {_MARK} "):
        return []
    listed = json.loads(first.removeprefix(f"# {_MARK} "))
    return [ToolCall(id=c["id"], name=c["name"], arguments=c["arguments"]) for c in listed]


def _results_of(result: ToolResult, calls: Sequence[ToolCall]) -> list[ToolResult]:
    """Each call's result, read from the program's marked lines (a call the program never reached: not run)."""
    said: dict[str, dict[str, Any]] = {}
    for line in result.text.splitlines():
        if line.startswith(_MARK):
            item = json.loads(line.removeprefix(_MARK))
            said[item["id"]] = item
    results = []
    for call in calls:
        item = said.get(call.id)
        if item is None:
            text, error = f"not run: the program stopped before this call ({result.text[-300:]})", True
        elif "error" in item:
            text, error = str(item["error"]), True
        else:
            value = item["value"]
            text, error = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False), False
        results.append(
            ToolResult(call_id=call.id, name=call.name, content=text, is_error=error, untrusted=result.untrusted)
        )
    return results
