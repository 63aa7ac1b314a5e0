"""What a wire body *says*, counted straight from its JSON, independently of toolslip's format modules.

The real-traffic test compares the content of a body before and after ``toolslip.convert`` with this
extractor, so the check does not trust the code it checks: nothing here imports toolslip. Each body
becomes a bag (multiset) of items per category:

    text        ("in" | "out", text)        what the user/system side or the model wrote
    call        (name, arguments)           the model's function calls
    result      (text, is_error)            function results ("Error: " prefix and is_error flag are one fact)
    reasoning   text                        readable reasoning or its summary (whitespace removed)
    opaque      value                       signatures and encrypted reasoning, kept verbatim or reported
    tool        (name, description, schema) function tool declarations
    hosted      type                        server / hosted tool declarations and their blocks or items
    citation    url or title                citations and annotations
    media       (kind, data)                images, files, documents, audio
    setting     (knob, value)               knobs every format has: stream, temperature, top_p, stop, max
                                            tokens, tool_choice, parallel calls, user (and the OpenAI
                                            formats' reasoning effort)
    field       key                         any other request field, and message fields with no meaning
                                            elsewhere (participant names, provider extras)
    flag        (flag, name)                namespace, defer_loading
    schema      schema                      the answer's JSON Schema (structured output), whichever field
                                            holds it: response_format, text.format, output_config.format,
                                            output_format, Gemini's responseJsonSchema / responseSchema,
                                            Converse's outputConfig.textFormat, Ollama's format

Texts are compared with their whitespace removed, so splitting one text into two parts (or joining
reasoning summaries) does not count as a change, but any changed character does.
"""

from __future__ import annotations

import base64
import json
from collections import Counter
from collections.abc import Iterable
from typing import Any

Content = dict[str, Counter[Any]]

CATEGORIES = (
    "text",
    "call",
    "result",
    "reasoning",
    "opaque",
    "tool",
    "hosted",
    "citation",
    "media",
    "setting",
    "field",
    "flag",
    "schema",
)


def _squash(text: str) -> str:
    return "".join(text.split())


def _canon(value: Any) -> str:
    return json.dumps(value, sort_keys=True, ensure_ascii=False)


def _args(raw: Any) -> str:
    if isinstance(raw, str):
        if not raw.strip():
            return "{}"
        try:
            return _canon(json.loads(raw))
        except json.JSONDecodeError:
            return raw
    return _canon(raw if raw is not None else {})


class _Bag:
    def __init__(self) -> None:
        self.c: Content = {k: Counter() for k in CATEGORIES}

    def add(self, category: str, item: Any) -> None:
        self.c[category][item] += 1

    def text(self, side: str, text: Any) -> None:
        if isinstance(text, str) and text.strip():
            self.add("text", (side, _squash(text)))

    def reasoning(self, text: Any) -> None:
        if isinstance(text, str) and text.strip():
            self.add("reasoning", _squash(text))

    def opaque(self, value: Any) -> None:
        if isinstance(value, str) and value:
            self.add("opaque", value)

    def result(self, text: str, is_error: bool) -> None:
        if text.startswith("Error: "):
            text, is_error = text[len("Error: ") :], True
        elif text.startswith("Error:") and is_error:
            text = text[len("Error:") :]
        self.add("result", (_squash(text), is_error))

    def setting(self, knob: str, value: Any) -> None:
        if value is not None:
            self.add("setting", (knob, _canon(value)))

    def tool(self, name: Any, description: Any, schema: Any) -> None:
        self.add("tool", (name, description or "", _canon(schema if schema is not None else {"type": "object"})))


# --- OpenAI Chat Completions (and legacy functions) ---------------------------------------------------

_CHAT_MESSAGE = {"role", "content", "tool_calls", "tool_call_id", "function_call", "name", "refusal"}
_CHAT_BODY = {
    "reasoning_effort",
    "model",
    "messages",
    "tools",
    "tool_choice",
    "functions",
    "function_call",
    "stream",
    "temperature",
    "top_p",
    "stop",
    "max_tokens",
    "max_completion_tokens",
    "parallel_tool_calls",
    "user",
}


def _chat_parts(bag: _Bag, side: str, content: Any) -> list[str]:
    """Texts of a content list (also added to the bag); other parts become media."""
    texts: list[str] = []
    if isinstance(content, str):
        return [content]
    for part in content if isinstance(content, list) else ():
        kind = part.get("type")
        if kind == "text":
            texts.append(part.get("text", ""))
            for note in part.get("annotations") or ():
                bag.add("citation", _citation(note))
        elif kind == "image_url":
            bag.add("media", ("image", _image_key(part["image_url"].get("url"))))
        elif kind == "input_audio":
            bag.add("media", ("audio", part["input_audio"].get("data")))
        elif kind == "file":
            file = part.get("file") or {}
            bag.add("media", ("file", _file_key(file.get("file_data") or file.get("file_id"))))
        elif kind == "refusal":
            texts.append(part.get("refusal", ""))
        else:
            bag.add("field", f"part:{kind}")
    return texts


def _image_key(url: Any) -> Any:
    if isinstance(url, str) and url.startswith("data:") and ";base64," in url:
        return url.split(";base64,", 1)[1]
    return url


def _file_key(data: Any) -> Any:
    return _image_key(data)


def _citation(note: Any) -> Any:
    if not isinstance(note, dict):
        return _canon(note)
    inner = note.get("url_citation") if isinstance(note.get("url_citation"), dict) else note
    return inner.get("url") or inner.get("title") or inner.get("file_id") or inner.get("document_title") or _canon(note)


def _chat_message(bag: _Bag, message: dict[str, Any]) -> None:
    role = message.get("role")
    if role in ("tool", "function"):
        content = message.get("content")
        texts = _chat_parts(bag, "in", content) if content is not None else []
        bag.result("".join(t for t in texts), False)
        for key in message.keys() - {"role", "content", "tool_call_id", "name"}:
            bag.add("field", f"message:{key}")
        return
    side = "out" if role == "assistant" else "in"
    for text in _chat_parts(bag, side, message.get("content")):
        bag.text(side, text)
    if isinstance(message.get("refusal"), str):
        bag.text("out", message["refusal"])
    for call in message.get("tool_calls") or ():
        fn = call.get("function") or {}
        bag.add("call", (fn.get("name"), _args(fn.get("arguments"))))
    if isinstance(message.get("function_call"), dict):
        fn = message["function_call"]
        bag.add("call", (fn.get("name"), _args(fn.get("arguments"))))
    if message.get("name") is not None:
        bag.add("field", "message:name")
    _chat_reasoning(bag, message)
    for note in message.get("annotations") or ():
        bag.add("citation", _citation(note))
    if message.get("audio"):
        bag.add("media", ("audio", _canon(message["audio"])))
    for key in message.keys() - _CHAT_MESSAGE - {"reasoning_content", "reasoning", "reasoning_details"}:
        if key == "annotations" or (key == "audio" and not message["audio"]):
            continue
        if message[key] not in (None, [], {}):
            bag.add("field", f"message:{key}")


def _chat_reasoning(bag: _Bag, message: dict[str, Any]) -> None:
    """DeepSeek's reasoning_content, OpenRouter's reasoning (plain) and reasoning_details (which win)."""
    details = message.get("reasoning_details")
    if isinstance(details, list) and details:
        for detail in details:
            bag.reasoning(detail.get("text") or detail.get("summary"))
            bag.opaque(detail.get("signature"))
            bag.opaque(detail.get("data"))
    else:
        bag.reasoning(message.get("reasoning_content"))
        if isinstance(message.get("reasoning"), str):
            bag.reasoning(message["reasoning"])


def _chat_tools(bag: _Bag, tools: Iterable[Any]) -> None:
    for tool in tools:
        fn = tool.get("function")
        if isinstance(fn, dict) and tool.get("type", "function") == "function":
            bag.tool(fn.get("name"), fn.get("description"), fn.get("parameters"))
        else:
            bag.add("hosted", tool.get("type"))


def _choice_value(choice: Any) -> Any:
    if isinstance(choice, dict):
        if choice.get("type") in ("function", "tool"):
            fn = choice.get("function") if isinstance(choice.get("function"), dict) else choice
            return "name:" + str(fn.get("name"))
        if choice.get("type") in ("auto", "none"):
            return choice["type"]
        if choice.get("type") == "any":
            return "required"
        if "name" in choice and len(choice) == 1:
            return "name:" + str(choice["name"])
        if choice.get("type") == "allowed_tools":  # Responses spells it flat, Chat in "allowed_tools"
            inner = choice.get("allowed_tools") if isinstance(choice.get("allowed_tools"), dict) else choice
            tools = [t.get("function", t) for t in inner.get("tools") or () if isinstance(t, dict)]
            return _allowed(inner.get("mode"), [t.get("name") for t in tools if isinstance(t, dict)])
        return _canon(choice)
    return choice


def _allowed(mode: Any, names: list[Any]) -> str:
    return f"allowed:{mode}:" + ",".join(sorted(map(str, names)))


def _fields(bag: _Bag, body: dict[str, Any], known: set[str]) -> None:
    """Other request fields; an empty one (``"include": []``) says nothing."""
    body = _schema(bag, body)
    for key in body.keys() - known:
        if body[key] not in (None, [], {}, ""):
            bag.add("field", key)


def _schema(bag: _Bag, body: dict[str, Any]) -> dict[str, Any]:
    """Count a structured-output schema as ``schema`` and return the body without the field that held it
    (a field left holding something else, such as ``text.verbosity``, still counts as a field)."""
    body = dict(body)
    if body.get("modalities") == ["text"]:
        del body["modalities"]  # Chat's default: text answers only
    for key in ("response_format", "format"):  # Chat's JSON mode, and Ollama's (Responses' is text.format)
        mode = _json_mode(body.get(key))
        if mode is not None:
            bag.setting("json_mode", mode or None)  # "": the default, plain text, says nothing
            del body[key]
    chat = body.get("response_format")
    if isinstance(chat, dict) and chat.get("type") == "json_schema":
        bag.add("schema", _canon((chat.get("json_schema") or {}).get("schema")))
        del body["response_format"]
    beta = body.get("output_format")
    if isinstance(beta, dict) and beta.get("type") == "json_schema":
        bag.add("schema", _canon(beta.get("schema")))
        del body["output_format"]
    for key in ("text", "output_config"):
        holder = body.get(key)
        fmt = holder.get("format") if isinstance(holder, dict) else None
        if isinstance(fmt, dict) and fmt.get("type") == "json_schema":
            bag.add("schema", _canon(fmt.get("schema")))
            body[key] = {k: v for k, v in holder.items() if k != "format"}  # type: ignore[union-attr]
        elif _json_mode(fmt) is not None:
            bag.setting("json_mode", _json_mode(fmt) or None)
            body[key] = {k: v for k, v in holder.items() if k != "format"}  # type: ignore[union-attr]
        if key == "output_config" and isinstance(body.get(key), dict) and "effort" in body[key]:
            bag.setting("reasoning_effort", body[key]["effort"])  # Anthropic's effort: Chat's reasoning_effort
            body[key] = {k: v for k, v in body[key].items() if k != "effort"}
    if isinstance(body.get("format"), dict):  # Ollama: the schema itself ("json" is JSON mode, a field)
        bag.add("schema", _canon(body.pop("format")))
    converse = body.get("outputConfig")
    fmt = converse.get("textFormat") if isinstance(converse, dict) else None
    if isinstance(fmt, dict) and fmt.get("type") == "json_schema":
        text = ((fmt.get("structure") or {}).get("jsonSchema") or {}).get("schema")
        try:
            bag.add("schema", _canon(json.loads(text)))  # Converse sends the schema as JSON text
        except (TypeError, ValueError):
            bag.add("schema", text)
        body["outputConfig"] = {k: v for k, v in converse.items() if k != "textFormat"}  # type: ignore[union-attr]
    return body


def _json_mode(value: Any) -> str | None:
    """``"json"`` for JSON mode without a schema, ``""`` for plain text (every format's default), else None."""
    if value in ({"type": "json_object"}, "json", "application/json"):
        return "json"
    return "" if value in ({"type": "text"}, "text/plain") else None


def _gemini_output(bag: _Bag, generation: dict[str, Any]) -> set[str]:
    """Gemini's structured output (JSON with a schema: ``responseJsonSchema``, or the older OpenAPI-flavoured
    ``responseSchema``) counted as ``schema``, JSON mode as a setting; the keys that said it (with
    ``responseModalities: ["TEXT"]``, the default, which says nothing)."""
    said = {"responseModalities"} if generation.get("responseModalities") in (["TEXT"], ["text"]) else set()
    if generation.get("responseMimeType") != "application/json":
        if generation.get("responseMimeType") == "text/plain":
            said.add("responseMimeType")
        return said
    if not isinstance(generation.get("responseJsonSchema"), dict) and not isinstance(
        generation.get("responseSchema"), dict
    ):
        bag.setting("json_mode", "json")
        return said | {"responseMimeType"}
    if isinstance(generation.get("responseJsonSchema"), dict):
        bag.add("schema", _canon(generation["responseJsonSchema"]))
        return said | {"responseMimeType", "responseJsonSchema"}
    if isinstance(generation.get("responseSchema"), dict):
        bag.add("schema", _canon(_gemini_schema(generation["responseSchema"])))
        return said | {"responseMimeType", "responseSchema"}
    return said


def chat_request(body: dict[str, Any]) -> Content:
    bag = _Bag()
    for message in body.get("messages") or ():
        _chat_message(bag, message)
    _chat_tools(bag, body.get("tools") or ())
    for fn in body.get("functions") or ():
        bag.tool(fn.get("name"), fn.get("description"), fn.get("parameters"))
    for knob in ("stream", "temperature", "top_p", "user"):
        bag.setting(knob, body.get(knob))
    stop = body.get("stop")
    bag.setting("stop", [stop] if isinstance(stop, str) else stop or None)
    bag.setting("max_tokens", body.get("max_completion_tokens", body.get("max_tokens")))
    bag.setting("tool_choice", _choice_value(body.get("tool_choice", body.get("function_call"))))
    bag.setting("parallel_tool_calls", body.get("parallel_tool_calls"))
    bag.setting("reasoning_effort", body.get("reasoning_effort"))
    _fields(bag, body, _CHAT_BODY)
    return bag.c


def chat_response(body: dict[str, Any]) -> Content:
    bag = _Bag()
    for choice in body.get("choices") or ():
        if isinstance(choice.get("message"), dict):
            _chat_message(bag, choice["message"])
    usage = body.get("usage") or {}
    _usage(
        bag,
        usage.get("prompt_tokens"),
        usage.get("completion_tokens"),
        (usage.get("completion_tokens_details") or {}).get("reasoning_tokens"),
    )
    return bag.c


def _usage(bag: _Bag, total_in: Any, out: Any, reasoning: Any) -> None:
    bag.setting("usage.input", total_in or 0)
    bag.setting("usage.output", out or 0)
    if reasoning:
        bag.setting("usage.reasoning", reasoning)


# --- OpenAI Responses ---------------------------------------------------------------------------------

_RESPONSES_BODY = {
    "model",
    "input",
    "instructions",
    "tools",
    "tool_choice",
    "stream",
    "temperature",
    "top_p",
    "max_output_tokens",
    "parallel_tool_calls",
    "user",
}


def _responses_content(bag: _Bag, side: str, content: Any) -> None:
    if isinstance(content, str):
        bag.text(side, content)
        return
    for part in content if isinstance(content, list) else ():
        kind = part.get("type")
        if kind in ("input_text", "output_text", "text"):
            bag.text(side, part.get("text"))
            for note in part.get("annotations") or ():
                bag.add("citation", _citation(note))
        elif kind == "refusal":
            bag.text("out", part.get("refusal"))
        elif kind == "input_image":
            bag.add("media", ("image", _image_key(part.get("image_url") or part.get("file_id"))))
        elif kind == "input_file":
            bag.add("media", ("file", _file_key(part.get("file_data") or part.get("file_id") or part.get("file_url"))))
        elif kind == "input_audio":
            bag.add("media", ("audio", (part.get("input_audio") or {}).get("data")))
        else:
            bag.add("field", f"part:{kind}")


def _responses_items(bag: _Bag, items: Any) -> None:
    if isinstance(items, str):
        bag.text("in", items)
        return
    for item in items or ():
        kind = item.get("type", "message" if "role" in item else None)
        if kind == "message":
            side = "out" if item.get("role") == "assistant" else "in"
            _responses_content(bag, side, item.get("content"))
        elif kind == "function_call":
            bag.add("call", (item.get("name"), _args(item.get("arguments"))))
            if item.get("namespace"):
                bag.add("flag", ("namespace", item["namespace"]))
        elif kind == "function_call_output":
            output = item.get("output")
            if isinstance(output, list):
                texts = []
                for part in output:
                    if part.get("type") in ("input_text", "output_text"):
                        texts.append(part.get("text", ""))
                    else:
                        _responses_content(bag, "in", [part])
                output = "".join(texts)
            bag.result(output if isinstance(output, str) else "", False)
        elif kind == "reasoning":
            texts = [s.get("text", "") for s in item.get("summary") or ()]
            texts += [c.get("text", "") for c in item.get("content") or ()]
            bag.reasoning("".join(texts))
            bag.opaque(item.get("encrypted_content"))
        else:
            bag.add("hosted", kind)


def _responses_tools(bag: _Bag, tools: Iterable[Any]) -> None:
    for tool in tools:
        if tool.get("type") == "function":
            bag.tool(tool.get("name"), tool.get("description"), tool.get("parameters"))
            if tool.get("defer_loading"):
                bag.add("flag", ("defer_loading", tool.get("name")))
        else:
            bag.add("hosted", tool.get("type"))


def responses_request(body: dict[str, Any]) -> Content:
    bag = _Bag()
    bag.text("in", body.get("instructions"))
    _responses_items(bag, body.get("input"))
    _responses_tools(bag, body.get("tools") or ())
    for knob in ("stream", "temperature", "top_p", "user"):
        bag.setting(knob, body.get(knob))
    bag.setting("max_tokens", body.get("max_output_tokens"))
    bag.setting("tool_choice", _choice_value(body.get("tool_choice")))
    bag.setting("parallel_tool_calls", body.get("parallel_tool_calls"))
    reasoning = body.get("reasoning")
    if isinstance(reasoning, dict) and "effort" in reasoning:  # Chat's reasoning_effort
        bag.setting("reasoning_effort", reasoning["effort"])
        reasoning = {k: v for k, v in reasoning.items() if k != "effort" and v is not None}
    _fields(bag, {**body, "reasoning": reasoning}, _RESPONSES_BODY)
    return bag.c


def responses_response(body: dict[str, Any]) -> Content:
    bag = _Bag()
    _responses_items(bag, body.get("output"))
    usage = body.get("usage") or {}
    _usage(
        bag,
        usage.get("input_tokens"),
        usage.get("output_tokens"),
        (usage.get("output_tokens_details") or {}).get("reasoning_tokens"),
    )
    return bag.c


# --- Anthropic Messages ------------------------------------------------------------------------------

_ANTHROPIC_BODY = {
    "model",
    "messages",
    "system",
    "tools",
    "tool_choice",
    "stream",
    "temperature",
    "top_p",
    "stop_sequences",
    "max_tokens",
    "cache_control",  # automatic prompt caching: a cache hint, as a block's cache_control is
}


def _anthropic_blocks(bag: _Bag, side: str, content: Any) -> None:
    if isinstance(content, str):
        bag.text(side, content)
        return
    for block in content or ():
        kind = block.get("type")
        if kind == "text":
            bag.text(side, block.get("text"))
            for cite in block.get("citations") or ():
                bag.add("citation", _citation(cite))
        elif kind == "tool_use":
            bag.add("call", (block.get("name"), _args(block.get("input"))))
        elif kind == "tool_result":
            inner = block.get("content")
            texts = []
            if isinstance(inner, str):
                texts.append(inner)
            for part in inner if isinstance(inner, list) else ():
                if part.get("type") == "text":
                    texts.append(part.get("text", ""))
                else:
                    _anthropic_blocks(bag, "in", [part])
            bag.result("".join(texts), block.get("is_error") is True)
        elif kind == "thinking":
            bag.reasoning(block.get("thinking"))
            bag.opaque(block.get("signature"))
        elif kind == "redacted_thinking":
            bag.opaque(block.get("data"))
        elif kind == "image":
            source = block.get("source") or {}
            bag.add("media", ("image", source.get("data") or source.get("url") or source.get("file_id")))
        elif kind == "document":
            bag.add("media", ("file", _document_key(block.get("source") or {})))
        else:  # server_tool_use, *_tool_result, tool_reference, search_result, container_upload...
            bag.add("hosted", kind)


def _document_key(source: dict[str, Any]) -> Any:
    key = source.get("data") or source.get("url") or source.get("file_id")
    if source.get("type") == "text" and isinstance(key, str):  # a plain-text document holds the text itself
        key = base64.b64encode(key.encode()).decode()
    return key if isinstance(key, str) else _canon(source)


def anthropic_request(body: dict[str, Any]) -> Content:
    bag = _Bag()
    _anthropic_blocks(bag, "in", body.get("system"))
    for message in body.get("messages") or ():
        side = "out" if message.get("role") == "assistant" else "in"
        _anthropic_blocks(bag, side, message.get("content"))
    for tool in body.get("tools") or ():
        if tool.get("type", "custom") == "custom" and "input_schema" in tool:
            bag.tool(tool.get("name"), tool.get("description"), tool.get("input_schema"))
            if tool.get("defer_loading"):
                bag.add("flag", ("defer_loading", tool.get("name")))
        else:
            bag.add("hosted", tool.get("type"))
    for knob in ("stream", "temperature", "top_p"):
        bag.setting(knob, body.get(knob))
    bag.setting("stop", body.get("stop_sequences") or None)
    bag.setting("max_tokens", body.get("max_tokens"))
    choice = body.get("tool_choice")
    bag.setting("tool_choice", _choice_value(choice))
    if isinstance(choice, dict) and "disable_parallel_tool_use" in choice:
        bag.setting("parallel_tool_calls", not choice["disable_parallel_tool_use"])
    metadata = body.get("metadata")
    if isinstance(metadata, dict) and "user_id" in metadata:
        bag.setting("user", metadata["user_id"])
        metadata = {k: v for k, v in metadata.items() if k != "user_id"}
    _fields(bag, {**body, "metadata": metadata}, _ANTHROPIC_BODY)
    return bag.c


def anthropic_response(body: dict[str, Any]) -> Content:
    bag = _Bag()
    _anthropic_blocks(bag, "out", body.get("content"))
    usage = body.get("usage") or {}
    total = sum(usage.get(k) or 0 for k in ("input_tokens", "cache_read_input_tokens", "cache_creation_input_tokens"))
    _usage(bag, total, usage.get("output_tokens"), None)
    return bag.c


# --- Gemini generateContent ---------------------------------------------------------------------------
# Gemini's parameters schema is OpenAPI-flavoured (upper-case types, the proto's type numbers, nullable);
# it is compared as the JSON Schema it means, so a faithful translation does not count as a change.

_GEMINI_TYPES = ("TYPE_UNSPECIFIED", "STRING", "NUMBER", "INTEGER", "BOOLEAN", "ARRAY", "OBJECT", "NULL")


def _camel_keys(data: Any) -> Any:
    """The service accepts snake_case keys: compare them under their camelCase names."""
    if not isinstance(data, dict):
        return data
    out = {}
    for key, value in data.items():
        head, *rest = key.split("_") if "_" in key.strip("_") else (key,)
        out[head + "".join(w[:1].upper() + w[1:] for w in rest)] = value
    return out


def _gemini_schema(schema: Any) -> Any:
    if not isinstance(schema, dict):
        return schema
    out = {}
    for key, value in schema.items():
        if key == "type":
            if isinstance(value, int) and 0 < value < len(_GEMINI_TYPES):
                value = _GEMINI_TYPES[value]
            value = value.lower() if isinstance(value, str) else value
            if schema.get("nullable") is True and isinstance(value, str):
                value = [value, "null"]
        elif key == "nullable" and value is True and "type" in schema:
            continue
        elif key == "properties" and isinstance(value, dict):
            value = {k: _gemini_schema(v) for k, v in value.items()}
        elif key == "items":
            value = _gemini_schema(value)
        elif key == "anyOf" and isinstance(value, list):
            value = [_gemini_schema(v) for v in value]
        out[key] = value
    return out


def _gemini_response_value(response: Any) -> tuple[str, bool]:
    """functionResponse.response: {"output"|"error"|any one key: text} is that text; another object its JSON."""
    if isinstance(response, dict) and len(response) == 1:
        ((key, value),) = response.items()
        if isinstance(value, str):
            return value, key == "error"
    return json.dumps(response, ensure_ascii=False), False


def _standard_base64(data: Any) -> Any:
    """Base64 in the standard alphabet, padded: google-genai sends the same bytes URL-safe (``-``, ``_``)."""
    if not isinstance(data, str):
        return data
    return data.replace("-", "+").replace("_", "/") + "=" * (-len(data) % 4)


def _gemini_parts(bag: _Bag, side: str, parts: Any) -> None:
    if isinstance(parts, dict):
        parts = [parts]
    for raw in parts or ():
        part = _camel_keys(raw)
        bag.opaque(part.get("thoughtSignature"))
        if isinstance(part.get("text"), str):
            if part.get("thought") is True:
                bag.reasoning(part["text"])
            else:
                bag.text(side, part["text"])
        elif "functionCall" in part:
            call = part["functionCall"]
            bag.add("call", (call.get("name"), _args(call.get("args"))))
        elif "functionResponse" in part:
            answer = part["functionResponse"]
            text, is_error = _gemini_response_value(answer.get("response")) if "response" in answer else ("", False)
            bag.result(text, is_error)
            for key in answer.keys() - {"name", "id", "response"}:
                bag.add("field", f"functionResponse:{key}")
        elif "inlineData" in part or "fileData" in part:
            data = _camel_keys(part.get("inlineData") or part.get("fileData") or {})
            kind = "image" if str(data.get("mimeType", "")).startswith("image/") else "file"
            bag.add("media", (kind, _standard_base64(data.get("data")) or data.get("fileUri")))
        else:  # executableCode, codeExecutionResult...
            bag.add("hosted", next(iter(part), "?"))
            continue
        for key in part.keys() - {
            "text",
            "thought",
            "thoughtSignature",
            "functionCall",
            "functionResponse",
            "inlineData",
            "fileData",
        }:
            if part[key] not in (None, [], {}, False, ""):
                bag.add("field", f"part:{key}")


def _gemini_tools(bag: _Bag, entries: Any) -> None:
    for entry in entries:
        for key, value in _camel_keys(entry).items():
            if key != "functionDeclarations":
                bag.add("hosted", key)
                continue
            for declaration in value:
                declaration = _camel_keys(declaration)
                schema = declaration.get("parametersJsonSchema")
                if schema is None and "parameters" in declaration:
                    schema = _gemini_schema(declaration["parameters"])
                bag.tool(declaration.get("name"), declaration.get("description"), schema)


_GEMINI_MODES = {"AUTO": "auto", "NONE": "none", "ANY": "required"}


def gemini_request(body: dict[str, Any]) -> Content:
    bag = _Bag()
    system = body.get("systemInstruction")
    if isinstance(system, str):
        bag.text("in", system)
    elif isinstance(system, dict):
        _gemini_parts(bag, "in", system.get("parts"))
    for content in body.get("contents") or ():
        _gemini_parts(bag, "out" if content.get("role") == "model" else "in", content.get("parts"))
    _gemini_tools(bag, body.get("tools") or ())
    config = body.get("toolConfig") or {}
    calling = config.get("functionCallingConfig")
    if isinstance(calling, dict):
        names = calling.get("allowedFunctionNames")
        if calling.get("mode") == "ANY" and isinstance(names, list) and len(names) == 1:
            bag.setting("tool_choice", "name:" + str(names[0]))
        elif calling.keys() == {"mode"} and calling["mode"] in _GEMINI_MODES:
            bag.setting("tool_choice", _GEMINI_MODES[calling["mode"]])
        elif calling.get("mode") == "ANY" and isinstance(names, list):  # ANY among these: OpenAI's allowed_tools
            bag.setting("tool_choice", _allowed(_GEMINI_MODES["ANY"], names))
        else:
            bag.add("field", "toolConfig.functionCallingConfig")
    for key in config.keys() - {"functionCallingConfig"}:
        bag.add("field", f"toolConfig.{key}")
    generation = {_camel(k): v for k, v in (body.get("generationConfig") or {}).items()}  # SDKs send either
    output = _gemini_output(bag, generation)
    bag.setting("temperature", generation.get("temperature"))
    bag.setting("top_p", generation.get("topP"))
    bag.setting("stop", generation.get("stopSequences") or None)
    bag.setting("max_tokens", generation.get("maxOutputTokens"))
    thinking = _gemini_thinking(generation)
    level = thinking.pop("thinkingLevel", None)
    if isinstance(level, str):
        bag.setting("reasoning_effort", level.lower())  # the API's enum words are upper case
    if thinking == {"includeThoughts": True}:
        bag.add("field", "reasoning")  # thought summaries asked for: Responses' reasoning.summary
    elif thinking:
        bag.add("field", "thinking")  # a budget (and whether thoughts come back): Anthropic's thinking
    for key in (
        generation.keys()
        - {
            "temperature",
            "topP",
            "stopSequences",
            "maxOutputTokens",
            "thinkingConfig",
            "thinking_config",
        }
        - output
    ):
        if generation[key] not in (None, [], {}, ""):
            bag.add("field", _GEMINI_KNOBS.get(key, f"generationConfig.{key}"))
    _fields(bag, body, {"contents", "systemInstruction", "tools", "toolConfig", "generationConfig", "model"})
    return bag.c


def _gemini_thinking(generation: dict[str, Any]) -> dict[str, Any]:
    """The thinkingConfig in camelCase (the API reads thinking_level as thinkingLevel), less the default
    ``includeThoughts: false`` (thoughts are not returned), which says nothing."""
    thinking = dict(generation.get("thinkingConfig") or generation.get("thinking_config") or {})
    thinking = {_camel(k): v for k, v in thinking.items()}
    if thinking.get("includeThoughts") is False:
        del thinking["includeThoughts"]
    return thinking


def _camel(key: str) -> str:
    head, *rest = key.split("_")
    return head + "".join(word.title() for word in rest)


_GEMINI_KNOBS = {
    "seed": "seed",
    "topK": "top_k",
    "frequencyPenalty": "frequency_penalty",
    "presencePenalty": "presence_penalty",
    "candidateCount": "n",
    "responseLogprobs": "logprobs",
    "logprobs": "top_logprobs",
}
"""generationConfig keys that are knobs the OpenAI formats (or Anthropic) have too, by their names there."""
_SHARED_OPTIONS = frozenset({"seed", "top_k", "frequency_penalty", "presence_penalty"})
"""Ollama options that are top-level fields of the OpenAI formats (or Anthropic), with the same names."""


def gemini_response(body: dict[str, Any]) -> Content:
    bag = _Bag()
    for candidate in body.get("candidates") or ():
        _gemini_parts(bag, "out", (candidate.get("content") or {}).get("parts"))
        grounding = candidate.get("groundingMetadata") or {}
        for chunk in grounding.get("groundingChunks") or ():
            bag.add("citation", ((chunk.get("web") or chunk.get("retrievedContext") or {}).get("uri")))
        quiet = {"content", "finishReason", "index", "avgLogprobs"}
        if candidate.get("finishReason") == "STOP":
            quiet.add("finishMessage")  # it explains an ordinary stop ("Model generated function call(s).")
        for key in candidate.keys() - quiet:
            if candidate[key] not in (None, [], {}, ""):
                bag.add("field", f"candidate:{key}")
    if body.get("promptFeedback"):
        bag.add("field", "promptFeedback")
    usage = body.get("usageMetadata") or {}
    thoughts = usage.get("thoughtsTokenCount") or 0
    _usage(bag, usage.get("promptTokenCount"), (usage.get("candidatesTokenCount") or 0) + thoughts, thoughts)
    return bag.c


# --- Bedrock Converse ---------------------------------------------------------------------------------


def _converse_blocks(bag: _Bag, side: str, blocks: Any) -> None:
    for block in blocks or ():
        if "text" in block and len(block) == 1:
            bag.text(side, block["text"])
        elif "toolUse" in block:
            use = block["toolUse"]
            bag.add("call", (use.get("name"), _args(use.get("input"))))
        elif "toolResult" in block:
            result = block["toolResult"]
            texts = []
            for item in result.get("content") or ():
                if "text" in item:
                    texts.append(item["text"])
                elif "json" in item:
                    texts.append(json.dumps(item["json"], ensure_ascii=False))
                else:
                    _converse_blocks(bag, "in", [item])
            bag.result("".join(texts), result.get("status") == "error")
        elif "image" in block or "document" in block:
            media = block.get("image") or block.get("document")
            source = media.get("source") or {}
            key = source.get("bytes") or _canon(source)
            bag.add("media", ("image" if "image" in block else "file", key))
        elif "reasoningContent" in block:
            reasoning = block["reasoningContent"]
            text = reasoning.get("reasoningText") or {}
            bag.reasoning(text.get("text"))
            bag.opaque(text.get("signature"))
            bag.opaque(reasoning.get("redactedContent"))
        elif "cachePoint" not in block:  # a cache point is a cache hint, as Anthropic's cache_control is
            bag.add("hosted", next(iter(block), "?"))  # guardContent, citationsContent, video...


def bedrock_request(body: dict[str, Any]) -> Content:
    bag = _Bag()
    _converse_blocks(bag, "in", body.get("system"))
    for message in body.get("messages") or ():
        _converse_blocks(bag, "out" if message.get("role") == "assistant" else "in", message.get("content"))
    config = body.get("toolConfig") or {}
    for tool in config.get("tools") or ():
        spec = tool.get("toolSpec")
        if isinstance(spec, dict):
            bag.tool(spec.get("name"), spec.get("description"), (spec.get("inputSchema") or {}).get("json"))
        elif "cachePoint" not in tool:  # after a tool, it is that tool's cache_control: a cache hint
            bag.add("hosted", next(iter(tool), "?"))
    choice = config.get("toolChoice")
    if isinstance(choice, dict):
        kind = next(iter(choice), None)
        value = {"auto": "auto", "any": "required"}.get(str(kind)) or "name:" + str(
            (choice.get("tool") or {}).get("name")
        )
        bag.setting("tool_choice", value)
    for key in config.keys() - {"tools", "toolChoice"}:
        bag.add("field", f"toolConfig.{key}")
    inference = body.get("inferenceConfig") or {}
    bag.setting("temperature", inference.get("temperature"))
    bag.setting("top_p", inference.get("topP"))
    bag.setting("stop", inference.get("stopSequences") or None)
    bag.setting("max_tokens", inference.get("maxTokens"))
    for key in inference.keys() - {"temperature", "topP", "stopSequences", "maxTokens"}:
        bag.add("field", f"inferenceConfig.{key}")
    for key, value in (body.get("additionalModelRequestFields") or {}).items():
        if value not in (None, [], {}, ""):  # the model's own fields: Anthropic's, for Claude
            bag.add("field", key if key in ("top_k", "thinking") else f"additionalModelRequestFields.{key}")
    tier = body.get("serviceTier")
    if tier not in (None, {}):
        bag.add("field", "service_tier")  # OpenAI's field, spelled {"type": ...}
    known = {"messages", "system", "toolConfig", "inferenceConfig", "additionalModelRequestFields", "serviceTier"}
    _fields(bag, body, known)
    return bag.c


def bedrock_response(body: dict[str, Any]) -> Content:
    bag = _Bag()
    message = (body.get("output") or {}).get("message") or {}
    _converse_blocks(bag, "out", message.get("content"))
    for key in body.keys() - {"output", "stopReason", "usage", "metrics", "performanceConfig"}:
        if body[key] not in (None, [], {}, ""):
            bag.add("field", key)
    usage = body.get("usage") or {}
    total = sum(usage.get(k) or 0 for k in ("inputTokens", "cacheReadInputTokens", "cacheWriteInputTokens"))
    _usage(bag, total, usage.get("outputTokens"), None)
    return bag.c


# --- Ollama /api/chat ---------------------------------------------------------------------------------


def _ollama_message(bag: _Bag, message: dict[str, Any]) -> None:
    role = message.get("role")
    if role == "tool":
        bag.result(message.get("content") or "", False)
        known = {"role", "content", "tool_name", "tool_call_id"}
    else:
        side = "out" if role == "assistant" else "in"
        bag.text(side, message.get("content"))
        bag.reasoning(message.get("thinking"))
        for image in message.get("images") or ():
            bag.add("media", ("image", image))
        for call in message.get("tool_calls") or ():
            fn = call.get("function") or {}
            bag.add("call", (fn.get("name"), _args(fn.get("arguments"))))
        known = {"role", "content", "thinking", "images", "tool_calls"}
    for key in message.keys() - known:
        if message[key] not in (None, [], {}, ""):
            bag.add("field", f"message:{key}")


def ollama_request(body: dict[str, Any]) -> Content:
    bag = _Bag()
    for message in body.get("messages") or ():
        _ollama_message(bag, message)
    _chat_tools(bag, body.get("tools") or ())
    options = body.get("options") or {}
    bag.setting("stream", body.get("stream"))
    bag.setting("temperature", options.get("temperature"))
    bag.setting("top_p", options.get("top_p"))
    bag.setting("stop", options.get("stop") or None)
    bag.setting("max_tokens", options.get("num_predict"))
    for key in options.keys() - {"temperature", "top_p", "stop", "num_predict"}:
        if options[key] not in (None, [], {}, ""):
            bag.add("field", key if key in _SHARED_OPTIONS else f"options.{key}")
    think = body.get("think")
    if isinstance(think, str):
        bag.setting("reasoning_effort", think)
    elif isinstance(think, bool):
        bag.add("field", "thinking")
    _fields(bag, body, {"model", "messages", "tools", "options", "stream", "think"})
    return bag.c


def ollama_response(body: dict[str, Any]) -> Content:
    bag = _Bag()
    _ollama_message(bag, body.get("message") or {})
    _usage(bag, body.get("prompt_eval_count"), body.get("eval_count"), None)
    return bag.c


READERS = {
    ("openai-chat", "request"): chat_request,
    ("openai-chat", "response"): chat_response,
    ("openai-functions", "request"): chat_request,
    ("openai-functions", "response"): chat_response,
    ("openai-responses", "request"): responses_request,
    ("openai-responses", "response"): responses_response,
    ("anthropic", "request"): anthropic_request,
    ("anthropic", "response"): anthropic_response,
    ("gemini", "request"): gemini_request,
    ("gemini", "response"): gemini_response,
    ("bedrock", "request"): bedrock_request,
    ("bedrock", "response"): bedrock_response,
    ("ollama", "request"): ollama_request,
    ("ollama", "response"): ollama_response,
}


def content(fmt: str, what: str, body: dict[str, Any]) -> Content:
    """The content of ``body`` (a ``what`` of wire format ``fmt``), by category."""
    return READERS[fmt, what](body)
