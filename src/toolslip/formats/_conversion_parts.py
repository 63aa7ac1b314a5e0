"""Messages and their parts as the target format of ``toolslip.convert`` can carry them, losses reported.

Each part the target has no way to say (another provider's block, reasoning it did not sign, a file or
image it does not take, an error flag) is reported through the plan and left out or marked; each field the
source read but the target will not see is reported after its part. The request, response and tool checks
that call these are in ``conversion``.
"""

from __future__ import annotations

import operator
from collections.abc import Sequence
from dataclasses import replace
from typing import Any

from ..core.messages import File, Image, Message, Part, ProviderPart, Reasoning, Text, ToolCall, ToolResult
from ._anthropic_blocks import plain_text
from ._bedrock_blocks import document_format, image_format
from ._conversion_plan import URL_MODEL, Plan
from ._wire import CHAT_FAMILY, OPENAI_FORMATS, unstash

__all__ = ["message_for", "messages_for"]

_OBJECT_ARGUMENTS = frozenset({"anthropic", *URL_MODEL})
"""Formats whose call arguments are an object, not JSON text."""


def messages_for(plan: Plan, messages: Sequence[Message]) -> list[Message]:
    out = _named(plan, [message_for(plan, m, f"messages[{i}]") for i, m in enumerate(messages)])
    if plan.target == "openai-functions" and plan.source != plan.target:
        for i, message in enumerate(out):
            calls = message.tool_calls
            if calls:
                plan.note(f"messages[{i}]", "call ids (legacy functions have none; re-created when read back)")
            if len(calls) > 1 and plan.split_calls:
                plan.note(f"messages[{i}]", f"{len(calls)} parallel calls", "split into single-call turns")
    return out


_NAME_RESULTS = frozenset({"gemini", "openai-functions"})
"""Formats whose results name their tool (Gemini's functionResponse.name, a legacy function message's name)."""


def _named(plan: Plan, messages: list[Message]) -> list[Message]:
    """The messages less the results a target that names results cannot name: results without a name whose
    call is not in the history (a Responses request continuing a stored response by previous_response_id)."""
    if plan.target not in _NAME_RESULTS or plan.same:
        return messages
    names: set[str] = set()
    out = []
    for i, message in enumerate(messages):
        names.update(c.id for c in message.tool_calls)
        parts: list[Part] = []
        for j, part in enumerate(message.parts):
            if type(part) is ToolResult and part.name is None and part.call_id not in names:
                what = f"a result whose call is not in the history ({plan.target} needs the name of its tool)"
                if plan.cannot(f"messages[{i}].parts[{j}]", what, "replaced by text"):
                    parts.append(Text(text=f"[{what} left out] {part.text}"))
            else:
                parts.append(part)
        same = len(parts) == len(message.parts) and all(map(operator.is_, parts, message.parts))
        out.append(message if same else replace(message, parts=tuple(parts)))
    return out


def message_for(plan: Plan, message: Message, path: str) -> Message:
    if plan.same:
        return message
    message = _cache_marks(plan, message, path)
    unread: dict[str, list[str]] = {}
    for key in unstash(message.extra, plan.source).get("unread", ()):
        head = key.split(".", 1)[0] if key.startswith("parts[") else ""
        unread.setdefault(head, []).append(key)
    parts: list[Part] = []
    for j, part in enumerate(message.parts):
        kept = _part(plan, part, f"{path}.parts[{j}]")
        for key in unread.pop(f"parts[{j}]", ()):  # fields the target will not see, after their part
            plan.cannot(f"{path}.{key}", f"{plan.source} field {key.rsplit('.', 1)[-1]!r}")
        if kept is not None:
            parts.append(kept)
    for key in (key for keys in unread.values() for key in keys):
        plan.cannot(f"{path}.{key}", f"{plan.source} field {key.rsplit('.', 1)[-1]!r}")
    _joined(plan, parts, path)
    _unordered(plan, parts, path)
    name = message.name
    if name is not None and plan.target not in CHAT_FAMILY:
        plan.cannot(f"{path}.name", "a participant name")
        name = None
    if name == message.name and len(parts) == len(message.parts) and all(map(operator.is_, parts, message.parts)):
        return message
    return replace(message, parts=tuple(parts), name=name)


def _cache_marks(plan: Plan, message: Message, path: str) -> Message:
    """Prompt-cache marks: a Converse ``cachePoint`` block marks the end of what to cache, as Anthropic's
    ``cache_control`` on the block before it does; each is written as the other. Other targets cache prompts
    on their own, so a cache point is left out there (reported: the answer is the same without it)."""
    if plan.source == "anthropic" and plan.target == "bedrock":
        kept = unstash(message.extra, "anthropic").get("parts", {})
        marked = {int(k) for k, v in kept.items() if isinstance(v, dict) and v.get("cache_control")}
        if not marked:
            return message
        parts: list[Part] = []
        for j, part in enumerate(message.parts):
            parts.append(part)
            if j in marked:
                parts.append(ProviderPart(format="bedrock", data={"cachePoint": {"type": "default"}}))
        return replace(message, parts=tuple(parts))
    if plan.source != "bedrock" or plan.target == "bedrock":
        return message
    points = {j for j, p in enumerate(message.parts) if type(p) is ProviderPart and "cachePoint" in p.data}
    if not points:
        return message
    parts, marks = [], {}
    for j, part in enumerate(message.parts):
        if j not in points:
            parts.append(part)
        elif plan.target == "anthropic" and parts:
            marks[str(len(parts) - 1)] = {"cache_control": {"type": "ephemeral"}}
        else:
            plan.note(
                f"{path}.parts[{j}]",
                "a cache point (a prompt-cache hint; the answer is the same without it)",
                "left out",
            )
    extra = dict(message.extra)
    if marks:
        kept = unstash(extra, "anthropic")
        extra["anthropic"] = {**kept, "shape": "list", "parts": {**kept.get("parts", {}), **marks}}
    return replace(message, parts=tuple(parts), extra=extra)


def _joined(plan: Plan, parts: list[Part], path: str) -> None:
    """Report the parts a target spells as one string: Chat's and Ollama's reasoning, Ollama's text."""
    for kind, joins in ((Reasoning, (*CHAT_FAMILY, "ollama")), (Text, ("ollama",))):
        if plan.target in joins:
            at = [j for j, p in enumerate(parts) if type(p) is kind]
            if len(at) > 1:
                for j in at:
                    what = f"a {kind.kind} part joined with {len(at) - 1} more into one string"
                    plan.note(f"{path}.parts[{j}]", what, f"{plan.target} has one such field")


def _unordered(plan: Plan, parts: list[Part], path: str) -> None:
    """Report an image before text going to Ollama: a message's images travel apart from its one string of
    text, and the model reads the text first."""
    if plan.target != "ollama":
        return
    texts = [j for j, p in enumerate(parts) if type(p) is Text]
    for j in (j for j, p in enumerate(parts) if type(p) is Image and texts and j < texts[-1]):
        plan.note(f"{path}.parts[{j}]", "an image before text (Ollama keeps images apart from the text)", "order lost")


def _part(plan: Plan, part: Part, where: str) -> Part | None:
    """``part`` as the target can carry it; ``None`` when it is left out (after reporting it)."""
    kind = type(part)
    if kind is ProviderPart:
        return _foreign(plan, part, where)  # type: ignore[arg-type]  # kind is ProviderPart
    if kind is Reasoning:
        return _reasoning(plan, part, where)  # type: ignore[arg-type]  # kind is Reasoning
    if kind is File:
        return _file(plan, part, where, in_result=False)  # type: ignore[arg-type]  # kind is File
    if kind is ToolResult:
        return _result(plan, part, where)  # type: ignore[arg-type]  # kind is ToolResult
    if kind is Image:
        return _image(plan, part, where, in_result=False)  # type: ignore[arg-type]  # kind is Image
    if kind is ToolCall and part.arguments is None and plan.target in _OBJECT_ARGUMENTS:  # type: ignore[union-attr]
        plan.cannot(where, "arguments that are not a JSON object", "sent as input {}", "sent as input {}")
    return part


def _foreign(plan: Plan, part: ProviderPart, where: str) -> Part | None:
    if part.format == plan.target or (part.format in CHAT_FAMILY and plan.family):
        return part
    # Gemini parts and Converse blocks have no "type": the one key that names the kind is first.
    kind = part.data.get("type") or next(iter(part.data), "?")
    what = f"{part.format} block {str(kind)!r}"
    return Text(text=f"[{what} left out]") if plan.cannot(where, what, "replaced by text") else None


def _reasoning(plan: Plan, part: Reasoning, where: str) -> Part | None:
    # A signature or encrypted reasoning means something only to the format (provider) that wrote it.
    own = part.source == plan.target or {part.source, plan.target} <= CHAT_FAMILY
    if plan.target == "anthropic" and not own:
        what = f"reasoning from {part.source or 'another format'} (Anthropic takes back only thinking it signed)"
        return Text(text=f"[reasoning left out] {part.text}") if plan.cannot(where, what, "replaced by text") else None
    if not part.text and not own:
        plan.cannot(where, f"encrypted reasoning from {part.source or 'another format'}")
        return None
    if own:
        return part
    if part.signature is not None:
        plan.cannot(f"{where}.signature", "the reasoning's signature (only its text is carried)")
    if part.encrypted is not None:
        plan.cannot(f"{where}.encrypted", "the reasoning's encrypted content (only its text is carried)")
    # The target writes its own reasoning only: the text becomes the target's, the opaque parts stay behind.
    return Reasoning(text=part.text, summary=part.summary, source=plan.target)


def _file(plan: Plan, file: File, where: str, *, in_result: bool) -> File | Text | None:
    """``file`` if the target can carry it; else reported, and left out or marked."""
    target = plan.target
    problem = None
    if target in CHAT_FAMILY and in_result:
        problem = "a file in a tool result (Chat tool messages hold text)"
    elif file.file_id is not None and not (file.source == target or {file.source, target} <= OPENAI_FORMATS):
        problem = f"a file id of {file.source or 'another provider'}"
    elif file.url is not None and file.data is None and target in CHAT_FAMILY:
        problem = "a file by URL (Chat takes files inline or by file id)"
    elif (
        target == "anthropic"
        and file.data is not None
        and file.media_type != "application/pdf"
        and plain_text(file) is None
    ):
        problem = f"a {file.media_type or 'typeless'} file (Anthropic documents are PDFs or UTF-8 plain text)"
    elif target == "anthropic" and file.data is None and file.url is not None and file.media_type not in _PDF:
        problem = f"a {file.media_type} file by URL (Anthropic takes PDFs by URL)"
    elif target == "ollama":
        problem = "a file (Ollama messages carry text and images only)"
    elif target == "bedrock" and (file.data is None or document_format(file.media_type) is None):
        how = "by reference" if file.data is None else (file.media_type or "typeless")
        problem = f"a file ({how}; Converse documents are inline pdf, csv, doc(x), xls(x), html, txt or md)"
    if problem is None:
        if target == "anthropic" and file.media_type.startswith("text/") and file.media_type != "text/plain":
            what = f"the {file.media_type} type of a text file (Anthropic takes text as a plain-text document)"
            plan.note(f"{where}.media_type", what, "sent as text/plain")
        if target == "openai-responses" and file.data is None and file.url is not None and file.media_type:
            what = f"the {file.media_type} type of a file by URL (Responses' input_file has no type field)"
            plan.note(f"{where}.media_type", what, "left to the service to tell")
        return file
    return Text(text=f"[{problem} left out]") if plan.cannot(where, problem, "replaced by text") else None


_PDF = ("", "application/pdf")
"""The types of a file Anthropic reads by URL (a URL document is a PDF; no type says nothing more)."""


def _image(plan: Plan, image: Image, where: str, *, in_result: bool) -> Image | Text | None:
    """``image`` if the target can carry it; else reported, and left out or marked."""
    target = plan.target
    problem = None
    if in_result and target == "ollama":
        problem = "an image in a tool result (ollama results hold text)"
    elif in_result and target in CHAT_FAMILY:
        problem = "an image in a tool result (Chat tool messages hold text)"
    elif image.data is None and target in ("bedrock", "ollama"):
        problem = f"an image by URL ({target} takes images inline)"
    elif target == "bedrock" and image_format(image.media_type) is None:
        problem = f"a {image.media_type} image (Converse takes png, jpeg, gif and webp)"
    if problem is None:
        return image
    return Text(text=f"[{problem} left out]") if plan.cannot(where, problem, "replaced by text") else None


def _result(plan: Plan, result: ToolResult, where: str) -> ToolResult:
    if result.is_error and plan.target in OPENAI_FORMATS:
        plan.note(where, "is_error flag", 'marked: a first text part "Error: " before the content')
    elif result.is_error and plan.target == "ollama":
        plan.note(where, "is_error flag", 'marked: "Error: " before the content')
    if isinstance(result.content, str):
        return result
    texts = [k for k, inner in enumerate(result.content) if type(inner) is Text]
    if plan.target in ("gemini", "ollama") and len(texts) > 1:
        for k in texts:  # Gemini's response object and Ollama's tool message hold one string
            what = f"a result's text part joined with {len(texts) - 1} more into one string"
            plan.note(f"{where}.content[{k}]", what, f"{plan.target} results hold one string")
    content: list[Any] = []
    for k, inner in enumerate(result.content):
        at = f"{where}.content[{k}]"
        kept: Part | None = inner
        if isinstance(inner, ProviderPart):
            kept = _foreign(plan, inner, at)
        elif isinstance(inner, File):
            kept = _file(plan, inner, at, in_result=True)
        elif isinstance(inner, Image) and not plan.same:
            kept = _image(plan, inner, at, in_result=True)
        if kept is not None:
            content.append(kept)
    if len(content) == len(result.content) and all(map(operator.is_, content, result.content)):
        return result
    return replace(result, content=tuple(content))
