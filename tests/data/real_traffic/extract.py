"""Extract recorded Chat Completions, Responses and Anthropic Messages traffic from public repositories.

Not run at test time: it wrote the ``*.jsonl.gz`` files next to it, and the README says from which
commits. It reads git snapshots of the repositories in :data:`SOURCES`, walks their recorded-HTTP files
(VCR YAML cassettes, HAR files, JSON fixtures of response bodies), keeps the POST interactions with the
three endpoints whose request body (and, when present, response body) is JSON, and writes one gzipped
JSONL file per source, one interaction a line:

    {"id": "crewai-17", "format": "openai-chat", "path": "lib/crewai/tests/cassettes/x.yaml",
     "request": {...}, "response": {...}}

HTTP headers are dropped (secrets live there); bodies are kept whole, byte for byte as JSON values. A
streamed response (SSE text) is not a JSON body, so only its request is kept. Interactions answered
with an HTTP error are left out: the service did not accept them. A Chat body that uses the June-2023
``functions`` / ``function_call`` fields is labelled ``openai-functions``.

To keep the corpus small, at most ``cap`` interactions are kept per recorded file (the ones with the
rarest features first) and interactions over 30 kB of JSON are left out unless they hold a feature
(a block or item type) nothing else kept holds.

    python tests/data/real_traffic/extract.py OUT_DIR NAME=GIT_DIR ...   # NAME as in SOURCES
"""

from __future__ import annotations

import base64
import gzip
import hashlib
import json
import subprocess
import sys
from collections import Counter
from pathlib import Path
from typing import Any

import yaml

SOURCES = {
    # name: (path substrings to read, interactions kept per recorded file)
    "crewai": (("tests/cassettes",), 1),
    "mirascope": (("tests/e2e/", "tests/ops/"), 2),
    "openllmetry": (("tests/cassettes", "tests/traces/cassettes"), 2),
    "otel-contrib": (("instrumentation-genai/",), 99),
    "vercel-ai": (("__fixtures__/",), 99),
}
MAX_BYTES = 30_000
MAX_RARE_BYTES = 150_000
ENDPOINTS = (("/chat/completions", "openai-chat"), ("/responses", "openai-responses"), ("/v1/messages", "anthropic"))
"""URL path endings -> wire format (any host: OpenAI, Azure, OpenRouter, Groq... speak the same bodies)."""
Record = dict[str, Any]


def git(repo: str, *args: str) -> bytes:
    return subprocess.run(["git", f"--git-dir={repo}", *args], check=True, capture_output=True).stdout


def endpoint_format(url: str) -> str | None:
    path = url.split("?", 1)[0].rstrip("/")
    if "/threads/" in path:  # the Assistants API's /threads/{id}/messages is another thing
        return None
    return next((name for tail, name in ENDPOINTS if path.endswith(tail)), None)


def as_text(value: Any) -> str | None:
    if isinstance(value, bytes):
        if value[:2] == b"\x1f\x8b":
            value = gzip.decompress(value)
        try:
            return value.decode("utf-8")
        except UnicodeDecodeError:
            return None
    if isinstance(value, dict):  # VCR: {"string": ...} or {"base64_string": ...}
        if "base64_string" in value:
            return as_text(base64.b64decode(value["base64_string"]))
        return as_text(value.get("string"))
    return value if isinstance(value, str) else None


def as_json(value: Any) -> Any:
    text = as_text(value)
    if text is None or not text.strip().startswith(("{", "[")):
        return None
    try:
        return json.loads(text)
    except json.JSONDecodeError:
        return None


def vcr_interactions(doc: Any) -> list[tuple[str, str, Any, Any, int]]:
    out = []
    for it in doc.get("interactions") or ():
        if not isinstance(it, dict):
            continue
        req, resp = it.get("request") or {}, it.get("response") or {}
        status = resp.get("status")
        code = status.get("code") if isinstance(status, dict) else status
        out.append((req.get("method", ""), req.get("uri", ""), req.get("body"), resp.get("body"), int(code or 0)))
    return out


def har_interactions(doc: Any) -> list[tuple[str, str, Any, Any, int]]:
    out = []
    for entry in (doc.get("log") or {}).get("entries") or ():
        req, resp = entry.get("request") or {}, entry.get("response") or {}
        content = resp.get("content") or {}
        body: Any = content.get("text")
        if content.get("encoding") == "base64" and isinstance(body, str):
            body = base64.b64decode(body)
        post = (req.get("postData") or {}).get("text")
        out.append((req.get("method", ""), req.get("url", ""), post, body, int(resp.get("status") or 0)))
    return out


def response_format(body: Any) -> str | None:
    """The wire format of a response body; ``None`` for anything else (errors, other APIs)."""
    if not isinstance(body, dict):
        return None
    if isinstance(body.get("choices"), list) and body["choices"] and "error" not in body:
        return "openai-chat"
    if body.get("object") == "response" and isinstance(body.get("output"), list):
        return "openai-responses"
    if body.get("type") == "message" and body.get("role") == "assistant" and isinstance(body.get("content"), list):
        return "anthropic"
    return None


def legacy(request: Any, response: Any) -> bool:
    """A Chat body written with June-2023 function calling."""
    messages = request.get("messages") or [] if isinstance(request, dict) else []
    if isinstance(request, dict) and ("functions" in request or "function_call" in request):
        return True
    if any(isinstance(m, dict) and (m.get("role") == "function" or m.get("function_call")) for m in messages):
        return True
    choices = response.get("choices") or [] if isinstance(response, dict) else []
    return any(
        isinstance(c, dict) and isinstance(c.get("message"), dict) and c["message"].get("function_call")
        for c in choices
    )


def records(repo: str, commit: str, path: str) -> list[Record]:
    try:
        raw = git(repo, "show", f"{commit}:{path}")
    except subprocess.CalledProcessError:
        return []  # a file the snapshot lacks (too large to be stored)
    if path.endswith(".gz"):
        raw = gzip.decompress(raw)
    try:
        doc = yaml.load(raw, Loader=yaml.CSafeLoader) if path.endswith((".yaml", ".yml")) else json.loads(raw)
    except (yaml.YAMLError, json.JSONDecodeError, UnicodeDecodeError):
        return []
    if isinstance(doc, dict) and "interactions" in doc:
        interactions = vcr_interactions(doc)
    elif isinstance(doc, dict) and "log" in doc:
        interactions = har_interactions(doc)
    else:  # a fixture holding one response body
        fmt = response_format(doc)
        if fmt == "openai-chat" and legacy(None, doc):
            fmt = "openai-functions"
        return [{"format": fmt, "path": path, "request": None, "response": doc}] if fmt else []
    out: list[Record] = []
    for method, url, req_body, resp_body, status in interactions:
        fmt = endpoint_format(url)
        if method.upper() != "POST" or fmt is None or not 200 <= status < 300:
            continue
        request, response = as_json(req_body), as_json(resp_body)
        if not isinstance(request, dict) or ("messages" not in request and "input" not in request):
            continue
        if response_format(response) != fmt:
            response = None  # streamed (SSE), or not this API's body
        if fmt == "openai-chat" and legacy(request, response):
            fmt = "openai-functions"
        out.append({"format": fmt, "path": path, "request": request, "response": response})
    return out


def features(rec: Record) -> set[str]:
    """What a record exercises: its format and every block, item and part ``type`` in it."""
    found = {rec["format"]}

    def walk(value: Any) -> None:
        if isinstance(value, dict):
            kind = value.get("type")
            if isinstance(kind, str):
                found.add(kind)
            found.update(
                k
                for k in value
                if k in ("reasoning_content", "reasoning_details") or (k in ("annotations", "citations") and value[k])
            )
            for v in value.values():
                walk(v)
        elif isinstance(value, list):
            for v in value:
                walk(v)

    walk([rec["request"], rec["response"]])
    return found


def select(found: list[Record], cap: int) -> list[Record]:
    """At most ``cap`` records per file, the ones with the rarest features first; small ones before big.

    A record over ``MAX_BYTES`` (up to ``MAX_RARE_BYTES``) is kept only when it has a feature no kept
    record has: web-search answers with citations are that large.
    """
    counts = Counter(f for rec in found for f in features(rec))
    ranked = sorted(found, key=lambda r: (-sum(1 / counts[f] for f in features(r)), _size(r)))
    per_file: Counter[str] = Counter()
    kept_ids = set()
    for rec in ranked:
        if per_file[rec["path"]] < cap and _size(rec) <= MAX_BYTES:
            per_file[rec["path"]] += 1
            kept_ids.add(id(rec))
    covered = {f for rec in found if id(rec) in kept_ids for f in features(rec)}
    for rec in sorted(found, key=_size):
        if id(rec) not in kept_ids and _size(rec) <= MAX_RARE_BYTES and features(rec) - covered:
            kept_ids.add(id(rec))
            covered |= features(rec)
    return [rec for rec in found if id(rec) in kept_ids]


def _size(rec: Record) -> int:
    return len(json.dumps(rec, ensure_ascii=False))


def main() -> None:
    out_dir = Path(sys.argv[1])
    for spec in sys.argv[2:]:
        name, _, repo = spec.partition("=")
        wanted, cap = SOURCES[name]
        commit = git(repo, "rev-parse", "HEAD").decode().strip()
        paths = git(repo, "ls-tree", "-r", "--name-only", commit).decode().splitlines()
        seen: set[str] = set()
        found: list[Record] = []
        for path in paths:
            if not any(p in path for p in wanted) or "mlx" in path:
                continue
            if not path.endswith((".yaml", ".yml", ".json", ".har", ".yaml.gz", ".json.gz")):
                continue
            for rec in records(repo, commit, path):
                key = hashlib.sha1(json.dumps([rec["request"], rec["response"]], sort_keys=True).encode()).hexdigest()
                if key not in seen:
                    seen.add(key)
                    found.append(rec)
        kept = select(found, cap)
        lines = [
            json.dumps({"id": f"{name}-{i}", **rec}, ensure_ascii=False, separators=(",", ":"))
            for i, rec in enumerate(kept)
        ]
        (out_dir / f"{name}.jsonl.gz").write_bytes(gzip.compress(("\n".join(lines) + "\n").encode(), mtime=0))
        by = Counter((r["format"], r["response"] is not None) for r in kept)
        print(name, commit, len(kept), dict(sorted(by.items())))


if __name__ == "__main__":
    main()
