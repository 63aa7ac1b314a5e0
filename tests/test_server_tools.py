"""Server tools next to client tools: declarations, the loop with golden Anthropic answers, the CLI lines."""

from __future__ import annotations

import io
import json
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

import toolslip
from toolslip import Agent, CannotExpress, ConfigError, Request, ServerTool, Tool, Toolbox
from toolslip.cli.render import Renderer
from toolslip.events import Event, ToolStarted
from toolslip.formats import anthropic, anthropic_stream, openai_chat, openai_responses
from toolslip.messages import Message, ProviderPart, ToolResult
from toolslip.server_tools import anthropic_betas, declared_server_tools, describe, render, server_tool
from toolslip.testing import ScriptedModel

FIXTURES = Path(__file__).parent / "fixtures"


def golden(name: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((FIXTURES / "anthropic" / f"{name}.json").read_text())
    return data


def wire_request(request: Request, model: str) -> dict[str, Any]:
    """The body a provider would POST for what the loop asked (the loop leaves the model name to it)."""
    return anthropic.request_to_wire(replace(request, model=model))


def dumped(value: Any) -> bytes:
    return json.dumps(value, ensure_ascii=False).encode()


# --- declarations --------------------------------------------------------------------------------------

CASES = json.loads((FIXTURES / "server_tools" / "declarations.json").read_text())["cases"]


def declare(spec: dict[str, Any]) -> ServerTool:
    options = dict(spec)
    return server_tool(options.pop("kind"), **options)


@pytest.mark.parametrize("case", CASES, ids=[json.dumps(c["declare"])[:60] for c in CASES])
@pytest.mark.parametrize("format_name", ["anthropic", "openai-responses"])
def test_declarations_render_to_each_providers_spelling(case: dict[str, Any], format_name: str) -> None:
    tool = declare(case["declare"])
    expected = case[format_name]
    if "error" in expected:
        with pytest.raises(CannotExpress, match=expected["error"].replace("(", r"\(").replace(")", r"\)")):
            render([tool], format_name)
    else:
        assert render([tool], format_name) == [expected]


def test_server_tool_is_public_and_neutral() -> None:
    tool = toolslip.server_tool("web_search", max_uses=3, allowed_domains=("a.org",), blocked_domains=None)
    assert tool == ServerTool(kind="web_search", options={"max_uses": 3, "allowed_domains": ["a.org"]})


@pytest.mark.parametrize(
    ("kind", "options", "message"),
    [
        ("web_serch", {}, "unknown server tool 'web_serch'; known server tools: advisor, code_execution"),
        ("web_search", {"max_use": 3}, r"web_search has no option 'max_use' \(its options: allowed_domains"),
        ("web_search", {"allowed_domains": ["a.org"], "blocked_domains": ["b.org"]}, "not both"),
        ("web_search", {"max_uses": 0}, "max_uses must be a positive whole number, got 0"),
        ("web_search", {"allowed_domains": "python.org"}, "allowed_domains must be a list of strings"),
        ("web_search", {"blocked_domains": 3}, "blocked_domains must be a list of strings, got 3"),
        ("web_search", {"user_location": {"town": "Paris"}}, "user_location must be a mapping with keys among city"),
        ("web_search", {"version": "latest"}, "version 'latest' is not a tool version such as '20260209'"),
        ("tool_search", {"variant": "fuzzy"}, "variant must be 'regex' or 'bm25'"),
        ("file_search", {}, r"file_search needs vector_store_ids=\.\.\."),
        ("mcp", {"server_label": "x"}, r"mcp needs server_url=\.\.\."),
        ("advisor", {}, r"advisor needs model=\.\.\."),
    ],
)
def test_bad_declarations_say_what_to_fix(kind: str, options: dict[str, Any], message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        server_tool(kind, **options)


def test_chat_completions_has_no_server_tools() -> None:
    request = Request(model="gpt-4o", messages=(Message.user("hi"),), server_tools=(server_tool("web_search"),))
    with pytest.raises(CannotExpress, match="the openai-chat format has no server tools .*web_search_options"):
        openai_chat.request_to_wire(request)
    assert "tools" not in openai_chat.request_to_wire(replace(request, server_tools=()))


def test_an_anthropic_version_must_be_a_date() -> None:
    with pytest.raises(CannotExpress, match="Anthropic tool versions are dates such as 20260318, not 'preview'"):
        render([server_tool("web_search", version="preview")], "anthropic")
    assert render([server_tool("web_search", version="preview")], "openai-responses") == [
        {"type": "web_search_preview"}
    ]


def test_only_beta_tools_ask_for_a_beta_header() -> None:
    assert anthropic_betas([server_tool("web_search"), server_tool("code_execution")]) == []
    tools = [server_tool("advisor", model="claude-opus-4-6"), server_tool("web_fetch")]
    assert anthropic_betas(tools) == ["advisor-tool-2026-03-01"]


def test_anthropic_body_lists_client_then_server_then_verbatim_tools() -> None:
    request = Request(
        model="m",
        messages=(Message.user("hi"),),
        tools=(toolslip.ToolSpec(name="f", description="d", parameters={"type": "object"}),),
        server_tools=(server_tool("web_search", max_uses=1),),
        extra_tools=({"type": "bash_20250124", "name": "bash"},),
    )
    assert [t.get("type", "custom") for t in anthropic.request_to_wire(request)["tools"]] == [
        "custom",
        "web_search_20250305",
        "bash_20250124",
    ]


def test_server_declarations_are_recognised_in_wire_requests() -> None:
    tools = [
        {"type": "web_search_20260209", "name": "web_search"},
        {"type": "tool_search_tool_bm25_20251119", "name": "tool_search_tool_bm25"},
        {"type": "bash_20250124", "name": "bash"},  # an Anthropic-defined tool the client runs
        {"type": "text_editor_20250728", "name": "str_replace_based_edit_tool"},
    ]
    assert declared_server_tools("anthropic", tools, {"mcp_servers": [{"type": "url"}]}) == [
        "web_search_20260209",
        "tool_search_tool_bm25_20251119",
        "mcp_servers",
    ]
    hosted = [{"type": "web_search"}, {"type": "custom", "name": "grammar"}]
    assert declared_server_tools("openai-chat", hosted, {"web_search_options": {}}) == [
        "web_search",
        "web_search_options",
    ]


# --- the loop with golden Anthropic answers ------------------------------------------------------------


def weather_tool(calls: list[dict[str, Any]]) -> Tool:
    schema = golden("server_web_search")["request"]["tools"][0]

    def get_weather(city: str) -> str:
        calls.append({"city": city})
        return f"{city}: 18°C, light rain"

    return Tool.from_schema(schema["name"], schema["description"], schema["input_schema"], get_weather)


async def test_a_mixed_turn_runs_only_the_client_tool_and_sends_server_blocks_back_unchanged() -> None:
    data = golden("server_web_search")
    model = ScriptedModel([anthropic.response_from_wire(data["response"]), "It is 18°C and raining in Petoskey."])
    calls: list[dict[str, Any]] = []
    events: list[Event] = []
    agent = Agent(
        model=model, tools=Toolbox([weather_tool(calls)]), server_tools=[server_tool("web_search", max_uses=3)]
    )

    result = await agent.arun(data["request"]["messages"][0]["content"], on_event=events.append)

    assert result.ok and result.output == "It is 18°C and raining in Petoskey."
    assert calls == [{"city": "Petoskey"}]  # the server's web search was not run here
    assert [e.call.name for e in events if isinstance(e, ToolStarted)] == ["get_weather"]
    first, second = (wire_request(r, data["request"]["model"]) for r in model.requests)
    assert first == data["request"]  # client and server tools declared side by side
    assert second["tools"] == data["request"]["tools"]  # and again on the next step
    user, assistant, results = second["messages"]
    assert dumped(assistant["content"]) == dumped(data["response"]["content"])  # byte for byte
    assert results == {
        "role": "user",
        "content": [
            {
                "type": "tool_result",
                "tool_use_id": "toolu_01T1x1fJ34qAmk2tNTrN7Up6",
                "content": "Petoskey: 18°C, light rain",
            }
        ],
    }
    answered = [p.call_id for m in result.messages for p in m.parts if isinstance(p, ToolResult)]
    assert answered == ["toolu_01T1x1fJ34qAmk2tNTrN7Up6"]  # the srvtoolu_ call is never answered
    assert result.tool_calls == 1
    assert result.usage.server_tool_use == {"web_search_requests": 1, "web_fetch_requests": 0}
    assert result.usage.input_tokens == 6039


async def test_pause_turn_is_continued_until_the_final_answer() -> None:
    data = golden("server_pause_turn")
    turns = [anthropic.response_from_wire(data["response"]), anthropic.response_from_wire(data["final"])]
    model = ScriptedModel(turns)
    search = server_tool("web_search", max_uses=5, allowed_domains=["python.org"])
    agent = Agent(model=model, server_tools=[search])

    result = await agent.arun(data["request"]["messages"][0]["content"])

    assert (result.stop_reason, result.steps, result.tool_calls) == ("completed", 2, 0)
    assert result.output == (
        "The latest release is Python 3.14: it adds template string literals and deferred evaluation of annotations."
    )
    first, second = (wire_request(r, data["request"]["model"]) for r in model.requests)
    assert first == data["request"]
    # As the documentation prescribes: the paused turn goes back as the last assistant message, unchanged.
    assert dumped(second) == dumped(data["followup"])
    assert result.usage.server_tool_use == {"web_search_requests": 2, "web_fetch_requests": 0}
    assert result.usage.input_tokens == 2210 + 3105


async def test_pause_turn_counts_against_the_step_limit() -> None:
    data = golden("server_pause_turn")
    model = ScriptedModel([anthropic.response_from_wire(data["response"])])
    agent = Agent(model=model, max_steps=1, server_tools=[server_tool("web_search")])

    result = await agent.arun("What changed in the latest Python release?")

    assert (result.stop_reason, result.steps, len(model.requests)) == ("max_steps", 1, 1)
    assert not any(m.role == "tool" for m in result.messages)  # nothing to answer: no client call was made


async def test_the_one_call_entry_point_declares_server_tools() -> None:
    model = ScriptedModel(["ok"])
    search = server_tool("web_search", max_uses=1)
    assert (await toolslip.arun(model, "hi", server_tools=[search])).output == "ok"
    assert model.requests[0].server_tools == (search,)


async def test_a_responses_turn_keeps_hosted_items_and_runs_only_the_function_call() -> None:
    data = json.loads((FIXTURES / "openai_responses" / "server_web_search.json").read_text())
    model = ScriptedModel([openai_responses.response_from_wire(data["response"]), "It is 18°C in Petoskey."])
    calls: list[dict[str, Any]] = []
    search = server_tool("web_search", allowed_domains=["wikipedia.org"])
    agent = Agent(model=model, tools=Toolbox([weather_tool(calls)]), server_tools=[search])

    result = await agent.arun(data["request"]["input"][0]["content"])

    assert result.ok and calls == [{"city": "Petoskey"}]
    first, second = (openai_responses.request_to_wire(replace(r, model="gpt-4.1")) for r in model.requests)
    assert first == data["request"]
    assert second == data["followup"]
    # The hosted web_search_call item goes back byte for byte (the message and the call are rebuilt from
    # neutral parts: equal as JSON values, their keys in the format's own order).
    assert dumped(second["input"][1]) == dumped(data["response"]["output"][0])
    assert result.usage.server_tool_use == {"web_search_requests": 1}


# --- what the CLI shows ----------------------------------------------------------------------------------


async def test_the_cli_shows_query_results_and_citations() -> None:
    data = golden("server_web_search")
    model = ScriptedModel([anthropic.response_from_wire(data["response"]), "Done."])
    out = io.StringIO()
    agent = Agent(model=model, tools=Toolbox([weather_tool([])]), server_tools=[server_tool("web_search")])

    await agent.arun("When was Claude Shannon born?", on_event=Renderer(out))

    assert out.getvalue().splitlines()[:4] == [
        "[step 1] web_search(query='claude shannon birth date') [server]",
        "[step 1]   -> 2 results: en.wikipedia.org, britannica.com",
        "[step 1]   [1] Claude Shannon - Wikipedia <https://en.wikipedia.org/wiki/Claude_Shannon>: "
        "Claude Elwood Shannon (April 30, 1916 – February 24, 2001) was an American mathe…",
        "[step 1] get_weather(city='Petoskey') → Petoskey: 18°C, light rain",
    ]


def provider_message(fmt: str, *blocks: dict[str, Any]) -> Message:
    return Message(role="assistant", parts=tuple(ProviderPart(format=fmt, data=b) for b in blocks))


def test_describe_reports_errors_fetches_code_and_hosted_items() -> None:
    anthropic_blocks = provider_message(
        "anthropic",
        {"type": "web_search_tool_result", "content": {"type": "x", "error_code": "max_uses_exceeded"}},
        {"type": "web_fetch_tool_result", "content": {"type": "web_fetch_result", "url": "https://a.org/x"}},
        {
            "type": "bash_code_execution_tool_result",
            "tool_use_id": "s3",
            "content": {"type": "bash_code_execution_result", "stdout": "42\n", "stderr": "", "return_code": 0},
        },
    )
    found = {
        "type": "tool_search_tool_search_result",
        "tool_references": [{"type": "tool_reference", "tool_name": "f"}],
    }
    searched = provider_message("anthropic", {"type": "tool_search_tool_result", "content": found})
    assert describe(anthropic_blocks) + describe(searched) == [
        "  -> error: max_uses_exceeded",
        "  -> fetched https://a.org/x",
        "  -> exit code 0: 42",
        "  -> found tools: f",
    ]
    # Responses hosted items (spelled as in the Responses API reference), kept as provider parts.
    responses_items = provider_message(
        "openai-responses",
        {"type": "web_search_call", "id": "ws_1", "status": "completed", "action": {"type": "search", "query": "q"}},
        {"type": "mcp_call", "server_label": "dmcp", "name": "roll", "arguments": '{"dice":"2d4 + 1"}', "output": "4"},
        {"type": "file_search_call", "status": "completed", "queries": ["deep research"], "results": None},
    )
    assert describe(responses_items) == [
        "web_search(query='q') [server]",
        'dmcp.roll({"dice":"2d4 + 1"}) [server]',
        "file_search(queries=['deep research']) [server]",
    ]


# --- the command line ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("option", "message"),
    [
        ("web_serch", "toolslip run: unknown server tool 'web_serch'; known server tools: advisor,"),
        ("web_search={max_uses: 3}", "toolslip run: --server-tool 'web_search={max_uses: 3}': the options after"),
        ("web_search=[3]", "the options after '=' must be a JSON object"),
        ('web_search={"max_uses": -1}', "server tool web_search: max_uses must be a positive whole number, got -1"),
    ],
)
def test_a_bad_server_tool_option_is_one_sentence(
    option: str, message: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from toolslip.cli import EXIT_USAGE, main

    tools = tmp_path / "tools.py"
    tools.write_text("")
    assert main(["run", str(tools), "question", "--server-tool", option]) == EXIT_USAGE
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err and len(err.strip().splitlines()) == 1


# --- the transcript checker -------------------------------------------------------------------------------


async def test_the_checker_does_not_count_server_blocks_as_unanswered_calls() -> None:
    data = golden("server_web_search")
    model = ScriptedModel([anthropic.response_from_wire(data["response"]), "Done."])
    agent = Agent(
        model=model,
        tools=Toolbox([weather_tool([])]),
        server_tools=[server_tool("web_search", max_uses=3)],
        debug=True,  # the loop checks every request before sending it, as OpenAI Chat and as Anthropic
    )
    assert (await agent.arun("When was Claude Shannon born?")).ok
    followup = wire_request(model.requests[1], "claude-sonnet-4-5")
    assert toolslip.check(followup).problems == ()
    # The same history without the client result: exactly one problem, about the client call only.
    unanswered = {**followup, "messages": followup["messages"][:2]}
    problems = toolslip.check(unanswered).problems
    assert len(problems) == 1 and "toolu_01T1x1fJ34qAmk2tNTrN7Up6" in str(problems[0])
    assert "srvtoolu" not in str(problems[0])


# --- toolslip serve, with the official SDKs as clients ----------------------------------------------------


async def test_serve_answers_server_tools_in_each_providers_error_format() -> None:
    import anthropic as anthropic_sdk
    import openai

    from toolslip.server import serve

    model = ScriptedModel(["never asked"])
    async with serve(model) as base:
        claude = anthropic_sdk.AsyncAnthropic(base_url=base, api_key="not-needed", max_retries=0)
        with pytest.raises(anthropic_sdk.BadRequestError) as bad_claude:
            await claude.messages.create(
                model="claude-sonnet-4-6",
                max_tokens=100,
                messages=[{"role": "user", "content": "When was Claude Shannon born?"}],
                tools=[{"type": "web_search_20250305", "name": "web_search", "max_uses": 3}],
            )
        oai = openai.AsyncOpenAI(base_url=f"{base}/v1", api_key="not-needed", max_retries=0)
        with pytest.raises(openai.BadRequestError) as bad_openai:
            await oai.chat.completions.create(
                model="gpt-4o-search-preview",
                messages=[{"role": "user", "content": "Top story today?"}],
                web_search_options={},
            )
        await claude.close()
        await oai.close()
    assert model.requests == []  # refused before the model was asked
    assert bad_claude.value.status_code == 400
    assert bad_claude.value.body == {
        "type": "error",
        "error": {
            "type": "invalid_request_error",
            "message": "server tools are not available locally: web_search_20250305 would run on the provider's "
            "infrastructure, and toolslip serve runs client tools only. Remove them from the request, "
            "or send it to the provider.",
        },
        "request_id": bad_claude.value.request_id,  # Anthropic's error bodies carry the request-id header's value
    }
    assert bad_openai.value.status_code == 400
    error = bad_openai.value.body
    assert isinstance(error, dict)
    assert (error["type"], error["param"], error["code"]) == ("invalid_request_error", "tools", None)
    assert error["message"].startswith("server tools are not available locally: web_search_options would run")


async def test_serve_still_runs_anthropic_defined_client_tools() -> None:
    import anthropic as anthropic_sdk

    from toolslip.server import serve

    async with serve(ScriptedModel(["ok"])) as base:
        claude = anthropic_sdk.AsyncAnthropic(base_url=base, api_key="not-needed", max_retries=0)
        reply = await claude.messages.create(
            model="claude-sonnet-4-6",
            max_tokens=100,
            messages=[{"role": "user", "content": "list files"}],
            tools=[{"type": "bash_20250124", "name": "bash"}],  # run by the client, so fine locally
        )
        await claude.close()
    assert reply.content[0].type == "text" and reply.content[0].text == "ok"


# --- over HTTP: the bytes on the wire and the beta header -------------------------------------------------


async def post_to_stub(answers: list[dict[str, Any]], agent_for: Any, prompt: str) -> list[tuple[bytes, str | None]]:
    """Run the agent ``agent_for(base_url)`` builds against a loopback Anthropic stub; what each POST carried."""
    from aiohttp import web
    from aiohttp.test_utils import TestServer

    seen: list[tuple[bytes, str | None]] = []

    async def messages(http: web.Request) -> web.StreamResponse:
        body = await http.read()
        seen.append((body, http.headers.get("anthropic-beta")))
        answer = answers[len(seen) - 1]
        if not json.loads(body).get("stream"):
            return web.json_response(answer)
        # Streamed as Anthropic does: message_start, content blocks with their deltas, message_stop.
        out = web.StreamResponse(headers={"Content-Type": "text/event-stream"})
        await out.prepare(http)
        for name, event in anthropic_stream.response_to_events(anthropic.response_from_wire(answer)):
            await out.write(f"event: {name}\ndata: {json.dumps(event)}\n\n".encode())
        await out.write_eof()
        return out

    app = web.Application()
    app.router.add_post("/v1/messages", messages)
    async with TestServer(app, host="127.0.0.1") as server:
        agent = agent_for(str(server.make_url("")).rstrip("/"))
        assert (await agent.arun(prompt)).ok
        await agent.model.aclose()
    return seen


async def test_over_http_the_paused_turn_goes_back_byte_for_byte() -> None:
    import orjson

    from toolslip.providers.anthropic import AnthropicModel

    data = golden("server_pause_turn")
    search = server_tool("web_search", max_uses=5, allowed_domains=["python.org"])

    def agent_for(base: str) -> Agent:
        return Agent(model=AnthropicModel("claude-sonnet-4-5", base_url=base, api_key="k"), server_tools=[search])

    seen = await post_to_stub([data["response"], data["final"]], agent_for, data["followup"]["messages"][0]["content"])
    (first, beta_first), (second, beta_second) = seen
    assert orjson.loads(second) == data["followup"]
    assert orjson.dumps(data["response"]["content"]) in second  # the paused blocks, byte for byte
    assert (beta_first, beta_second) == (None, None)  # web search is generally available: no beta header


async def test_a_beta_server_tool_adds_its_header_next_to_the_callers() -> None:
    from toolslip.providers.anthropic import AnthropicModel

    data = golden("server_pause_turn")
    tools = [server_tool("web_search"), server_tool("advisor", model="claude-opus-4-6")]

    def agent_for(base: str) -> Agent:
        model = AnthropicModel("claude-sonnet-4-6", base_url=base, api_key="k", headers={"anthropic-beta": "own-beta"})
        return Agent(model=model, server_tools=tools)

    seen = await post_to_stub([data["final"]], agent_for, "What changed in the latest Python release?")
    assert [beta for _, beta in seen] == ["own-beta,advisor-tool-2026-03-01"]
    advisor = {"type": "advisor_20260301", "name": "advisor", "model": "claude-opus-4-6"}
    assert json.loads(seen[0][0])["tools"][1] == advisor


def test_toolslip_run_shows_server_blocks_and_counts_searches(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from toolslip import providers
    from toolslip.cli import main

    data = golden("server_web_search")
    seen: list[Request] = []

    def golden_model(model: str, **options: Any) -> ScriptedModel:
        scripted = ScriptedModel([anthropic.response_from_wire(data["response"]), "Sunny."], name="golden")
        scripted.requests = seen
        return scripted

    monkeypatch.setitem(providers._registry, "golden", golden_model)
    tools = tmp_path / "tools.py"
    tools.write_text(
        "from toolslip import tool\n\n"
        "@tool(effects='read_only')\ndef get_weather(city: str) -> str:\n    return 'rain'\n"
    )
    argv = ["run", str(tools), "When was Claude Shannon born?", "--model", "golden:x", "--no-journal"]
    assert main([*argv, "--server-tool", 'web_search={"max_uses": 3}']) == 0
    out = capsys.readouterr().out
    assert "[step 1] web_search(query='claude shannon birth date') [server]\n" in out
    assert "[step 1]   -> 2 results: en.wikipedia.org, britannica.com\n" in out
    assert "1 tool call, 1 web_search_requests; run " in out
    assert seen[0].server_tools == (server_tool("web_search", max_uses=3),)


async def test_streamed_server_blocks_go_back_byte_for_byte() -> None:
    import orjson

    from toolslip.providers.anthropic import AnthropicModel

    data = golden("server_web_search")
    calls: list[dict[str, Any]] = []

    def agent_for(base: str) -> Agent:
        model = AnthropicModel("claude-sonnet-4-5", base_url=base, api_key="k")
        return Agent(
            model=model, tools=Toolbox([weather_tool(calls)]), server_tools=[server_tool("web_search")], stream=True
        )

    final = {**data["response"], "content": [{"type": "text", "text": "Rain."}], "stop_reason": "end_turn"}
    seen = await post_to_stub([data["response"], final], agent_for, data["request"]["messages"][0]["content"])
    assert calls == [{"city": "Petoskey"}]
    assert json.loads(seen[0][0])["stream"] is True
    assert orjson.dumps(data["response"]["content"]) in seen[1][0]
