"""Count what the extracted corpus exercises: per format, how many bodies hold each notable field.

    python count_features.py DIR > FEATURES.md     # DIR holds the *.jsonl.gz and streams.jsonl.gz
Also writes DIR/features.json with every key counted (request / response / stream sides).
"""

from __future__ import annotations

import gzip
import json
import sys
from collections import Counter, defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from extract import stream_events

FREEFORM = {"args", "input", "arguments", "partialArgs", "properties", "$defs", "definitions"}
ENUMS = {
    "finishReason",
    "stopReason",
    "done_reason",
    "mode",
    "role",
    "status",
    "modality",
    "blockReason",
    "type",
    "thinkingLevel",
    "format",
    "stop_reason",
    "mimeType",
    "media_type",
}

NOTABLE = {
    "gemini": {
        "request": [
            "contents",
            "systemInstruction",
            "tools",
            "functionDeclarations",
            "parameters",
            "parametersJsonSchema",
            "response",
            "behavior",
            "toolConfig",
            "functionCallingConfig",
            "mode=AUTO",
            "mode=ANY",
            "mode=NONE",
            "mode=VALIDATED",
            "allowedFunctionNames",
            "functionCall",
            "functionCall.id",
            "functionResponse",
            "functionResponse.id",
            "thoughtSignature",
            "thought",
            "inlineData",
            "fileData",
            "googleSearch",
            "googleSearchRetrieval",
            "codeExecution",
            "urlContext",
            "executableCode",
            "codeExecutionResult",
            "generationConfig",
            "responseMimeType",
            "responseSchema",
            "responseJsonSchema",
            "thinkingConfig",
            "thinkingBudget",
            "includeThoughts",
            "thinkingLevel",
            "maxOutputTokens",
            "temperature",
            "topP",
            "topK",
            "stopSequences",
            "candidateCount",
            "seed",
            "responseModalities",
            "safetySettings",
            "cachedContent",
            "labels",
            "role=user",
            "role=model",
            "role=function",
        ],
        "response": [
            "candidates",
            "functionCall",
            "functionCall.id",
            "parallel functionCall",
            "thoughtSignature",
            "thought",
            "text",
            "executableCode",
            "codeExecutionResult",
            "inlineData",
            "groundingMetadata",
            "webSearchQueries",
            "groundingChunks",
            "groundingSupports",
            "searchEntryPoint",
            "urlContextMetadata",
            "citationMetadata",
            "finishReason=STOP",
            "finishReason=MAX_TOKENS",
            "finishReason=SAFETY",
            "finishReason=RECITATION",
            "finishReason=MALFORMED_FUNCTION_CALL",
            "finishReason=OTHER",
            "finishMessage",
            "safetyRatings",
            "avgLogprobs",
            "promptFeedback",
            "usageMetadata",
            "promptTokenCount",
            "candidatesTokenCount",
            "totalTokenCount",
            "thoughtsTokenCount",
            "cachedContentTokenCount",
            "toolUsePromptTokenCount",
            "promptTokensDetails",
            "candidatesTokensDetails",
            "cacheTokensDetails",
            "trafficType",
            "modelVersion",
            "responseId",
            "createTime",
        ],
    },
    "bedrock": {
        "request": [
            "messages",
            "system",
            "text",
            "image",
            "document",
            "video",
            "toolUse",
            "toolResult",
            "json",
            "status=error",
            "status=success",
            "reasoningContent",
            "reasoningText",
            "signature",
            "redactedContent",
            "cachePoint",
            "guardContent",
            "toolConfig",
            "toolSpec",
            "inputSchema",
            "toolChoice",
            "auto",
            "any",
            "tool",
            "inferenceConfig",
            "maxTokens",
            "temperature",
            "topP",
            "stopSequences",
            "additionalModelRequestFields",
            "additionalModelResponseFieldPaths",
            "guardrailConfig",
            "promptVariables",
            "requestMetadata",
            "performanceConfig",
            "s3Location",
            "bytes",
            "format",
            "role=user",
            "role=assistant",
        ],
        "response": [
            "output",
            "message",
            "text",
            "toolUse",
            "parallel toolUse",
            "reasoningContent",
            "reasoningText",
            "signature",
            "redactedContent",
            "citationsContent",
            "stopReason=end_turn",
            "stopReason=tool_use",
            "stopReason=max_tokens",
            "stopReason=stop_sequence",
            "stopReason=guardrail_intervened",
            "stopReason=content_filtered",
            "usage",
            "inputTokens",
            "outputTokens",
            "totalTokens",
            "cacheReadInputTokens",
            "cacheWriteInputTokens",
            "cacheReadInputTokenCount",
            "metrics",
            "latencyMs",
            "trace",
            "guardrail",
            "additionalModelResponseFields",
            "performanceConfig",
        ],
        "stream": [
            "messageStart",
            "contentBlockStart",
            "contentBlockDelta",
            "contentBlockStop",
            "messageStop",
            "metadata",
            "delta.text",
            "delta.toolUse",
            "delta.reasoningContent",
            "start.toolUse",
            "internalServerException",
            "modelStreamErrorException",
            "validationException",
            "throttlingException",
            "serviceUnavailableException",
            "trace",
            "p",
        ],
    },
    "ollama": {
        "request": [
            "model",
            "messages",
            "tools",
            "tool_calls",
            "role=tool",
            "tool_name",
            "images",
            "thinking",
            "think",
            "format",
            "options",
            "stream",
            "keep_alive",
            "role=system",
            "role=assistant",
        ],
        "response": [
            "message",
            "content",
            "thinking",
            "tool_calls",
            "done",
            "done_reason=stop",
            "done_reason=length",
            "done_reason=load",
            "total_duration",
            "load_duration",
            "prompt_eval_count",
            "prompt_eval_duration",
            "eval_count",
            "eval_duration",
            "created_at",
        ],
    },
}


def camel(name: str) -> str:
    head, *rest = name.split("_")
    return head + "".join(w[:1].upper() + w[1:] for w in rest)


def keys(value, found: Counter, parent: str = "", snake: bool = False) -> None:
    """Count key names; with ``snake`` (Gemini) a snake_case key counts as its camelCase twin, and as itself."""
    if isinstance(value, dict):
        for k, v in value.items():
            if snake and "_" in k.strip("_") and parent not in ("properties", "$defs", "defs"):
                found["snake_case:" + k] += 1
                k = camel(k)
            found[k] += 1
            if k in ENUMS and isinstance(v, str):
                found[f"{k}={v}"] += 1
            if parent == "functionCall" and k == "id" or parent == "functionResponse" and k == "id":
                found[f"{parent}.id"] += 1
            if k in FREEFORM or (parent == "functionResponse" and k == "response"):
                continue
            if k == "json" and parent == "toolResult":
                continue
            keys(v, found, k, snake)
    elif isinstance(value, list):
        for v in value:
            keys(v, found, parent, snake)


def present(value, fmt: str = "") -> set[str]:
    c: Counter = Counter()
    keys(value, c, snake=fmt == "gemini")
    return set(c)


def parallel(fmt: str, body) -> bool:
    if not isinstance(body, dict):
        return False
    if fmt == "gemini":
        return any(
            sum("functionCall" in p for p in ((c.get("content") or {}).get("parts") or [])) > 1
            for c in body.get("candidates") or []
        )
    if fmt == "bedrock":
        content = ((body.get("output") or {}).get("message") or {}).get("content") or []
        return sum("toolUse" in b for b in content) > 1
    if fmt == "ollama":
        return len((body.get("message") or {}).get("tool_calls") or []) > 1
    return False


def main() -> None:
    d = Path(sys.argv[1])
    recs = []
    for f in sorted(d.glob("*.jsonl.gz")):
        if f.name == "streams.jsonl.gz":
            continue
        recs += [json.loads(x) for x in gzip.open(f)]
    streams = [json.loads(x) for x in gzip.open(d / "streams.jsonl.gz")]
    side = defaultdict(Counter)  # (format, side) -> feature -> bodies holding it
    totals = Counter()
    for r in recs:
        fmt = r["format"]
        if r["request"] is not None:
            totals[(fmt, "request")] += 1
            for k in present(r["request"], fmt):
                side[(fmt, "request")][k] += 1
        if r["response"] is not None:
            totals[(fmt, "response")] += 1
            got = present(r["response"], fmt)
            if parallel(fmt, r["response"]):
                got.add(
                    "parallel functionCall"
                    if fmt == "gemini"
                    else "parallel toolUse"
                    if fmt == "bedrock"
                    else "parallel tool_calls"
                )
            for k in got:
                side[(fmt, "response")][k] += 1
    for s in streams:
        fmt = s["format"]
        totals[(fmt, "stream")] += 1
        evs = stream_events(s["stream_kind"], s.get("stream_text"), s.get("stream_b64"))
        got: set[str] = set()
        for ev in evs:
            got |= present(ev, fmt)
            if fmt == "bedrock" and isinstance(ev, dict):
                for name, body in ev.items():
                    if isinstance(body, dict):
                        for k in ("delta", "start"):
                            if isinstance(body.get(k), dict):
                                got |= {f"{k}.{x}" for x in body[k]}
            if fmt == "gemini" and parallel(fmt, ev):
                got.add("parallel functionCall")
        got.add("kind=" + s["stream_kind"])
        for k in got:
            side[(fmt, "stream")][k] += 1
    print("# Feature counts\n")
    print("Bodies (not occurrences) holding each field, counted by `count_features.py`. Request and response")
    print("sides are the JSON bodies of `*.jsonl.gz`; the stream side is the decoded events of `streams.jsonl.gz`")
    print("(a field is counted once per stream). `features.json` has every key.\n")
    for fmt in ("gemini", "bedrock", "ollama"):
        print(f"## {fmt}\n")
        print(
            f"requests: {totals[(fmt, 'request')]}, JSON responses: {totals[(fmt, 'response')]}, streams: {totals[(fmt, 'stream')]}\n"
        )
        for sd in ("request", "response", "stream"):
            names = NOTABLE[fmt].get(sd) or (NOTABLE[fmt]["response"] if sd == "stream" else [])
            if sd == "stream" and fmt == "gemini":
                names = NOTABLE["gemini"]["response"]
            if sd == "stream" and fmt == "ollama":
                names = NOTABLE["ollama"]["response"]
            row = [(n, side[(fmt, sd)][n]) for n in names]
            kinds = sorted(k for k in side[(fmt, sd)] if k.startswith("kind="))
            row += [(k, side[(fmt, sd)][k]) for k in kinds]
            print(f"**{sd}** — " + ", ".join(f"`{n}` {c}" for n, c in row) + "\n")
            snakes = sorted((k, c) for k, c in side[(fmt, sd)].items() if k.startswith("snake_case:"))
            if snakes:
                print(
                    f"**{sd}, snake_case spellings** (accepted by the service; counted above under their camelCase"
                    " name too) — " + ", ".join(f"`{k[11:]}` {c}" for k, c in snakes) + "\n"
                )
    out = {f"{a}/{b}": dict(sorted(c.items(), key=lambda kv: -kv[1])) for (a, b), c in side.items()}
    (d / "features.json").write_text(json.dumps(out, indent=1, ensure_ascii=False) + "\n")


if __name__ == "__main__":
    main()
