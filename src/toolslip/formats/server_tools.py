"""Server tools: tools the provider runs, declared next to the client tools the loop runs.

Client tools run on your machine: you declare them, implement them, run them and send the result back.
Server tools run on the provider's infrastructure: you only declare them, and their use and results come
back inside the model's answer (Anthropic ``server_tool_use`` + ``web_search_tool_result`` blocks,
Responses ``web_search_call`` items). Formats keep those verbatim as provider parts, so the loop, which
runs only :class:`~toolslip.core.messages.ToolCall` parts, never executes them and never answers them.

    >>> search = toolslip.server_tool("web_search", max_uses=3, allowed_domains=["python.org"])
    >>> agent = toolslip.Agent(model=model, tools=toolbox, server_tools=[search])

A declaration is neutral (:class:`~toolslip.core.messages.ServerTool`); :func:`render` spells it for one
wire format when the request is built:

    kind              anthropic (Messages API)                     openai-responses
    web_search        web_search_20250305 (20260209, 20260318)     web_search
    web_fetch         web_fetch_20250910 (20260209, 20260309, …)   -
    code_execution    code_execution_20250825 (20260120, 20260521) code_interpreter
    tool_search       tool_search_tool_regex|bm25_20251119         -
    advisor           advisor_20260301 (beta header)               -
    file_search       -                                            file_search
    image_generation  -                                            image_generation
    mcp               -                                            mcp (remote MCP server)

OpenAI Chat Completions has no server tools at all. Anthropic's default versions are the first GA
version of each tool, because it runs on the widest range of models; ``version="20260209"`` picks a
newer one (the API says whether the chosen model supports it).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ..core.errors import CannotExpress, ConfigError
from ..core.messages import ServerTool

__all__ = ["KINDS", "anthropic_betas", "declared_server_tools", "render", "server_tool"]

Json = dict[str, Any]

ANTHROPIC = "anthropic"
RESPONSES = "openai-responses"


@dataclass(frozen=True)
class _AnthropicTool:
    name: str
    """The tool's ``name``; ``{variant}`` is filled from the ``variant`` option."""
    versions: tuple[str, ...]
    """Known versions, the default first."""
    options: frozenset[str]
    beta: str | None = None
    """The ``anthropic-beta`` header the tool needs, if it is still in beta."""


@dataclass(frozen=True)
class _ResponsesTool:
    type: str
    options: frozenset[str]


# From Anthropic's tool reference (platform.claude.com/docs/en/agents-and-tools/tool-use/tool-reference).
_ANTHROPIC: dict[str, _AnthropicTool] = {
    "web_search": _AnthropicTool(
        "web_search",
        ("20250305", "20260209", "20260318"),
        frozenset({"max_uses", "allowed_domains", "blocked_domains", "user_location"}),
    ),
    "web_fetch": _AnthropicTool(
        "web_fetch",
        ("20250910", "20260209", "20260309", "20260318"),
        frozenset({"max_uses", "allowed_domains", "blocked_domains", "citations", "max_content_tokens"}),
    ),
    "code_execution": _AnthropicTool("code_execution", ("20250825", "20260120", "20260521"), frozenset()),
    "tool_search": _AnthropicTool("tool_search_tool_{variant}", ("20251119",), frozenset({"variant"})),
    "advisor": _AnthropicTool("advisor", ("20260301",), frozenset({"model"}), beta="advisor-tool-2026-03-01"),
}

# From the OpenAI Responses API reference (hosted tools).
_RESPONSES: dict[str, _ResponsesTool] = {
    "web_search": _ResponsesTool("web_search", frozenset({"allowed_domains", "user_location", "search_context_size"})),
    "file_search": _ResponsesTool(
        "file_search", frozenset({"vector_store_ids", "max_num_results", "filters", "ranking_options"})
    ),
    "code_execution": _ResponsesTool("code_interpreter", frozenset({"container", "file_ids"})),
    "image_generation": _ResponsesTool(
        "image_generation",
        frozenset(
            {
                "model",
                "quality",
                "size",
                "background",
                "output_format",
                "output_compression",
                "partial_images",
                "moderation",
                "input_fidelity",
            }
        ),
    ),
    "mcp": _ResponsesTool(
        "mcp",
        frozenset(
            {
                "server_label",
                "server_url",
                "connector_id",
                "require_approval",
                "allowed_tools",
                "headers",
                "authorization",
                "server_description",
            }
        ),
    ),
}

KINDS: tuple[str, ...] = tuple(sorted({*_ANTHROPIC, *_RESPONSES}))
"""Every server-tool kind some format can declare."""

_ALIASES = {"code_interpreter": "code_execution"}
_REQUIRED: dict[str, tuple[str, ...]] = {
    "file_search": ("vector_store_ids",),
    "mcp": ("server_label",),
    "advisor": ("model",),
}
_INTS = frozenset({"max_uses", "max_content_tokens", "max_num_results"})
_STR_LISTS = frozenset({"allowed_domains", "blocked_domains", "vector_store_ids", "file_ids"})
_LOCATION_KEYS = frozenset({"city", "region", "country", "timezone"})
_VERSION = re.compile(r"\d{8}|\d{4}_\d{2}_\d{2}|preview")


def server_tool(
    kind: str, *, version: str | None = None, extra: Mapping[str, Any] | None = None, **options: Any
) -> ServerTool:
    """Declare a provider-run tool; options set to ``None`` are left out.

    Raises :class:`~toolslip.core.errors.ConfigError` for an unknown kind or option, or a bad value. Fields
    this library does not know go in ``extra`` and are sent verbatim.
    """
    kind = _ALIASES.get(kind, kind)
    if kind not in KINDS:
        raise ConfigError(f"unknown server tool {kind!r}; known server tools: {', '.join(KINDS)}")
    accepted = _options_of(kind)
    given = {k: v for k, v in options.items() if v is not None}
    unknown = sorted(given.keys() - accepted)
    if unknown:
        known = ", ".join(sorted(accepted)) or "none"
        raise ConfigError(
            f"server tool {kind} has no option {unknown[0]!r} (its options: {known}); "
            "put wire fields this library does not know in extra={...}"
        )
    for key in _REQUIRED.get(kind, ()):
        if key not in given:
            raise ConfigError(f"server tool {kind} needs {key}=...")
    if kind == "mcp" and "server_url" not in given and "connector_id" not in given:
        raise ConfigError("server tool mcp needs server_url=... (or connector_id=... for an OpenAI connector)")
    if "allowed_domains" in given and "blocked_domains" in given:
        raise ConfigError(f"server tool {kind}: give allowed_domains or blocked_domains, not both")
    if version is not None and not _VERSION.fullmatch(version):
        raise ConfigError(f"server tool {kind}: version {version!r} is not a tool version such as '20260209'")
    return ServerTool(
        kind=kind, options={k: _checked(kind, k, v) for k, v in given.items()}, version=version, extra=dict(extra or {})
    )


def _options_of(kind: str) -> frozenset[str]:
    anthropic = _ANTHROPIC.get(kind)
    responses = _RESPONSES.get(kind)
    return (anthropic.options if anthropic else frozenset()) | (responses.options if responses else frozenset())


def _checked(kind: str, key: str, value: Any) -> Any:
    where = f"server tool {kind}: {key}"
    if key in _INTS and (type(value) is not int or value < 1):
        raise ConfigError(f"{where} must be a positive whole number, got {value!r}")
    if key in _STR_LISTS:
        if not isinstance(value, list | tuple) or not all(isinstance(v, str) for v in value):
            raise ConfigError(f"{where} must be a list of strings, got {value!r}")
        return list(value)
    if key == "user_location":
        if not isinstance(value, Mapping) or not value.keys() <= _LOCATION_KEYS:
            raise ConfigError(f"{where} must be a mapping with keys among {', '.join(sorted(_LOCATION_KEYS))}")
        return dict(value)
    if key == "variant" and value not in ("regex", "bm25"):
        raise ConfigError(f"{where} must be 'regex' or 'bm25', got {value!r}")
    if key == "citations" and type(value) is not bool:
        raise ConfigError(f"{where} must be true or false, got {value!r}")
    return value


# --- rendering -----------------------------------------------------------------------------------------


def render(tools: Iterable[ServerTool], format_name: str) -> list[Json]:
    """The wire declarations of ``tools`` in format ``format_name``, for its ``tools`` array.

    Raises :class:`~toolslip.core.errors.CannotExpress` when the format has no such tool or option.
    """
    tools = tuple(tools)
    if not tools:
        return []
    if format_name == ANTHROPIC:
        return [_to_anthropic(t) for t in tools]
    if format_name == RESPONSES:
        return [_to_responses(t) for t in tools]
    hint = (
        " (its search models take web_search_options, which a request's extra settings send verbatim)"
        if format_name == "openai-chat"
        else ""
    )
    raise CannotExpress(
        f"the {format_name} format has no server tools{hint}; {_kinds(tools)} runs only with the anthropic "
        "or openai-responses formats. Remove server_tools or use one of those formats.",
        "tools",
    )


def _to_anthropic(tool: ServerTool) -> Json:
    spec = _ANTHROPIC.get(tool.kind)
    if spec is None:
        raise CannotExpress(f"Anthropic has no {tool.kind} server tool; {_where(tool.kind)}", "tools")
    _refuse_options(tool, spec.options, "Anthropic")
    version = tool.version or spec.versions[0]
    if not version.isdigit():
        raise CannotExpress(f"Anthropic tool versions are dates such as {spec.versions[-1]}, not {version!r}", "tools")
    name = spec.name.format(variant=tool.options.get("variant", "regex"))
    out: Json = {"type": f"{name}_{version}", "name": name}
    for key, value in tool.options.items():
        if key == "user_location":
            out[key] = {"type": "approximate", **value}
        elif key == "citations":
            out[key] = {"enabled": value}
        elif key != "variant":  # the variant is spelled in the type and name
            out[key] = value
    return {**out, **tool.extra}


def _to_responses(tool: ServerTool) -> Json:
    spec = _RESPONSES.get(tool.kind)
    if spec is None:
        raise CannotExpress(f"the Responses API has no hosted {tool.kind} tool; {_where(tool.kind)}", "tools")
    _refuse_options(tool, spec.options, "the Responses API")
    out: Json = {"type": f"{spec.type}_{tool.version}" if tool.version else spec.type}
    options = dict(tool.options)
    if "allowed_domains" in options:
        out["filters"] = {"allowed_domains": options.pop("allowed_domains")}
    if "user_location" in options:
        out["user_location"] = {"type": "approximate", **options.pop("user_location")}
    if tool.kind == "code_execution":
        # The code interpreter always runs in a container: an id, or {"type": "auto"} to have one made.
        container = options.pop("container", {"type": "auto"})
        if "file_ids" in options:
            if not isinstance(container, Mapping):
                raise CannotExpress("file_ids go with an automatic container, not a container id", "tools")
            container = {**container, "file_ids": options.pop("file_ids")}
        out["container"] = container
    return {**out, **options, **tool.extra}


def _refuse_options(tool: ServerTool, accepted: frozenset[str], provider: str) -> None:
    unknown = sorted(tool.options.keys() - accepted)
    if unknown:
        raise CannotExpress(
            f"{provider}'s {tool.kind} tool has no {', '.join(unknown)} option; remove it for this format", "tools"
        )


def _where(kind: str) -> str:
    formats = [name for name, table in ((ANTHROPIC, _ANTHROPIC), (RESPONSES, _RESPONSES)) if kind in table]
    if not formats:
        return f"no format has one (known server tools: {', '.join(KINDS)})"
    return f"it is available with the {' and '.join(formats)} format"


def _kinds(tools: Sequence[ServerTool]) -> str:
    return ", ".join(t.kind for t in tools)


def anthropic_betas(tools: Iterable[ServerTool]) -> list[str]:
    """The ``anthropic-beta`` header values the declared tools need (empty for GA tools)."""
    return sorted({spec.beta for t in tools if (spec := _ANTHROPIC.get(t.kind)) and spec.beta})


# --- server-tool declarations arriving at a local server -------------------------------------------------

_ANTHROPIC_NAMES = "|".join(t.name.format(variant="(?:regex|bm25)") for t in _ANTHROPIC.values())
_ANTHROPIC_TYPE = re.compile(rf"(?:{_ANTHROPIC_NAMES})_\d{{8}}")
_HOSTED_BODY_FIELDS = {ANTHROPIC: ("mcp_servers",), "openai-chat": ("web_search_options",)}


def declared_server_tools(format_name: str, tools: Iterable[Mapping[str, Any]], body: Mapping[str, Any]) -> list[str]:
    """What in a wire request asks the provider to run a tool itself: server-tool types and body fields.

    ``tools`` are the declarations a format kept verbatim (``Request.extra_tools``). Anthropic-defined
    client tools (bash, text editor, memory, computer use) are not server tools: the client runs them.
    """
    found: list[str] = []
    for item in tools:
        kind = str(item.get("type", ""))
        if format_name == ANTHROPIC:
            if _ANTHROPIC_TYPE.fullmatch(kind) or kind == "mcp_toolset":
                found.append(kind)
        elif kind not in ("function", "custom"):
            found.append(kind)  # OpenAI: every non-function tool is hosted by OpenAI
    found += [key for key in _HOSTED_BODY_FIELDS.get(format_name, ()) if key in body]
    return found
