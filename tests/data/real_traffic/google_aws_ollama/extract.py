"""Extract recorded Gemini generateContent, Bedrock Converse and Ollama /api/chat traffic from public repositories.

A companion of ``tests/data/real_traffic/extract.py`` for three more wire formats. It reads git snapshots
(bare git directories) of the repositories in :data:`SOURCES`, walks their recorded-HTTP files and writes,
per source:

* ``NAME.jsonl.gz``: one interaction a line,
  ``{"id", "format", "path", "url", "request", "response"}``: ``format`` is ``gemini`` (``:generateContent``
  and ``:streamGenerateContent``, Google AI and Vertex AI), ``bedrock`` (``/model/{id}/converse`` and
  ``/converse-stream``) or ``ollama`` (``/api/chat``); ``url`` is the request URL without its query string
  (but ``?alt=sse`` is kept) so that AI Studio and Vertex hosts, and streaming, can be told apart;
  ``request`` / ``response`` are the JSON bodies, byte for byte as JSON values, ``null`` when there was none
  as JSON (a streamed response; a fixture holding only a response).
* ``streams.jsonl.gz`` (one file for all sources), one streamed answer a line:
  ``{"id", "format", "path", "url", "request", "stream_kind", "stream_text" | "stream_b64"}``, where ``id``
  is the id of the interaction in ``NAME.jsonl.gz`` (or ``NAME-sN`` for a fixture holding only a stream).
  ``stream_kind``: ``sse`` (Gemini ``data: {...}`` lines), ``json-array`` (Gemini stream without ``alt=sse``:
  one JSON array), ``ndjson`` (Ollama), ``eventstream`` (AWS ``application/vnd.amazon.eventstream`` bytes,
  base64), ``decoded-lines`` (vercel/ai ``*.chunks.txt``: one decoded chunk / event JSON a line).
* ``errors.json``: a few HTTP error answers of each service (request, status, body).

HTTP headers are dropped (secrets live there; query strings too, ``key=`` is one). Interactions answered
with an HTTP error status are not put in the corpus. At most ``cap`` interactions are kept per recorded
file, the ones with the rarest features first, and none over 30 kB of JSON unless it holds a feature
nothing else kept holds.

Recorded-file formats read: Python VCR (``interactions``), R vcr (``http_interactions``), HAR and Polly
HAR (``log.entries``), nock recordings (a list of ``{scope, method, path, body, status, response}``,
binary responses as hex), Datadog test-agent cassettes (``{request: {url, body}, response: {status,
body}}``, binary bodies as ``base64:...``), bare response-body fixtures and ``*.chunks.txt`` (vercel/ai).

    python extract.py OUT_DIR NAME=GIT_DIR ...      # NAME as in SOURCES

Needs PyYAML (C loader). Reads only; no network.
"""

from __future__ import annotations

import base64
import binascii
import gzip
import hashlib
import json
import re
import struct
import subprocess
import sys
import zlib
from collections import Counter
from pathlib import Path
from typing import Any

import yaml

SOURCES: dict[str, tuple[tuple[str, ...], int]] = {
    # name: (path substrings to read, interactions kept per recorded file)
    "crewai": (("tests/cassettes",), 2),
    "mirascope": (("tests/e2e/", "tests/ops/"), 2),
    "openllmetry": (("tests/cassettes", "tests/traces/cassettes", "tests/metrics/cassettes"), 3),
    "otel-contrib": (("tests/cassettes", "tests/generate_content/cassettes"), 3),
    "vercel-ai": (("__fixtures__/",), 99),
    "openinference": (("tests/cassettes", "/cassettes/", "test/recordings/"), 3),
    "dd-trace-py": (("tests/cassettes/", "tests/contrib/"), 3),
    "dd-trace-js": (("test/llmobs/cassettes/", "test/resources/"), 3),
    "lmnr": (("tests/cassettes/",), 3),
    "magentic": (("tests/",), 3),
    "otel-js-contrib": (("test/mock-responses/",), 3),
    "openllmetry-js": (("recordings/",), 3),
    "ellmer": (("tests/testthat/_vcr/",), 3),
    "chatlas": (("tests/_vcr/",), 3),
}
EXCLUDE: dict[str, tuple[str, ...]] = {
    # hand-written fixtures, not captured from a service (Converse content blocks with a "type" key)
    "dd-trace-js": ("packages/datadog-plugin-ai/test/resources/",),
}
PREFILTER = r"generateContent|converse|/api/chat|candidates|stopReason|done_reason|contentBlockDelta|RESOURCE_EXHAUSTED|INVALID_ARGUMENT"
EXTS = (".yaml", ".yml", ".json", ".har", ".yaml.gz", ".json.gz", ".chunks.txt")
MAX_BYTES = 30_000
MAX_RARE_BYTES = 150_000
MAX_STREAM_BYTES = 200_000
Record = dict[str, Any]


# --------------------------------------------------------------------------- reading recorded files


class Loader(yaml.CSafeLoader):
    """Safe loading that turns ``!!python/...`` tags (multidict header keys in some cassettes) into None."""


Loader.add_multi_constructor("tag:yaml.org,2002:python/", lambda loader, suffix, node: None)


def git(repo: str, *args: str) -> bytes:
    return subprocess.run(["git", f"--git-dir={repo}", *args], check=True, capture_output=True).stdout


def as_bytes(value: Any) -> bytes | None:
    """A recorded body as bytes, whatever the recorder's way of holding it."""
    if value is None:
        return None
    if isinstance(value, bytes):
        raw = value
    elif isinstance(value, str):
        if value.startswith("base64:"):  # Datadog test agent
            try:
                return as_bytes(base64.b64decode(value[7:]))
            except binascii.Error:
                return value.encode()
        raw = value.encode("utf-8", "surrogatepass")
    elif isinstance(value, dict):
        if "base64_string" in value:  # VCR
            return as_bytes(base64.b64decode(value["base64_string"]))
        if "string" in value:
            return as_bytes(value["string"])
        if "text" in value:  # HAR content
            text = value["text"]
            if value.get("encoding") == "base64" and isinstance(text, str):
                return as_bytes(base64.b64decode(text))
            return as_bytes(text)
        return json.dumps(value).encode()  # nock: a JSON body held as a value
    elif isinstance(value, list):
        return json.dumps(value).encode()
    else:
        return None
    if raw[:2] == b"\x1f\x8b":
        try:
            raw = gzip.decompress(raw)
        except OSError:
            pass
    return raw


def pick_headers(headers: Any) -> dict[str, str]:
    """The few response headers kept for error answers: the content type and Bedrock's error type."""
    pairs: list[tuple[str, Any]] = []
    if isinstance(headers, dict):
        pairs = [(str(k), v) for k, v in headers.items() if k is not None]
    elif isinstance(headers, list) and headers and isinstance(headers[0], dict):  # HAR
        pairs = [(h.get("name", ""), h.get("value")) for h in headers]
    elif isinstance(headers, list):  # nock rawHeaders: name, value, name, value...
        pairs = list(zip(headers[::2], headers[1::2]))
    out = {}
    for k, v in pairs:
        if k.lower() in ("content-type", "x-amzn-errortype"):
            out[k.lower()] = v[0] if isinstance(v, list) and v else v
    return out


def interactions(doc: Any, path: str) -> list[tuple[str, str, Any, Any, int, Any]]:
    """(method, url, request body, response body, status, response headers) of every recorded exchange."""
    out = []
    if isinstance(doc, dict) and ("interactions" in doc or "http_interactions" in doc):
        for it in doc.get("interactions") or doc.get("http_interactions") or ():
            if not isinstance(it, dict):
                continue
            req, resp = it.get("request") or {}, it.get("response") or {}
            status = resp.get("status")
            code = (status.get("code") or status.get("status_code")) if isinstance(status, dict) else status
            out.append(
                (
                    req.get("method", ""),
                    req.get("uri", ""),
                    req.get("body"),
                    resp.get("body"),
                    int(code or 0),
                    resp.get("headers"),
                )
            )
    elif isinstance(doc, dict) and isinstance(doc.get("log"), dict):
        for entry in doc["log"].get("entries") or ():
            req, resp = entry.get("request") or {}, entry.get("response") or {}
            post = (req.get("postData") or {}).get("text")
            out.append(
                (
                    req.get("method", ""),
                    req.get("url", ""),
                    post,
                    resp.get("content") or {},
                    int(resp.get("status") or 0),
                    resp.get("headers"),
                )
            )
    elif isinstance(doc, dict) and isinstance(doc.get("request"), dict) and "url" in doc["request"]:
        req, resp = doc["request"], doc.get("response") or {}
        status = resp.get("status")
        code = status.get("code") if isinstance(status, dict) else status
        out.append(
            (req.get("method", ""), req["url"], req.get("body"), resp.get("body"), int(code or 0), resp.get("headers"))
        )
    elif isinstance(doc, list) and doc and all(isinstance(e, dict) and "scope" in e and "path" in e for e in doc):
        for e in doc:  # nock
            body = e.get("response")
            if isinstance(body, str) and re.fullmatch(r"(?:[0-9a-f]{2})+", body):
                body = bytes.fromhex(body)  # nock keeps binary bodies as hex
            out.append(
                (
                    e.get("method", ""),
                    e["scope"].rstrip("/") + e["path"],
                    e.get("body"),
                    body,
                    int(e.get("status") or 0),
                    e.get("rawHeaders"),
                )
            )
    return out


# --------------------------------------------------------------------------- classifying


GEMINI = re.compile(r"/models/[^/:?]+:(generateContent|streamGenerateContent)$")
BEDROCK = re.compile(r"/model/[^/]+/(converse|converse-stream)$")
OLLAMA = re.compile(r"/api/chat$")


def endpoint(url: str) -> tuple[str | None, bool]:
    """(format, streaming endpoint?) of a request URL."""
    path = url.split("?", 1)[0].rstrip("/")
    if m := GEMINI.search(path):
        return "gemini", m.group(1) == "streamGenerateContent"
    if m := BEDROCK.search(path):
        return "bedrock", m.group(1) == "converse-stream"
    if OLLAMA.search(path):
        return "ollama", False  # stream or not is in the body
    return None, False


def clean_url(url: str) -> str:
    base, _, query = url.partition("?")
    keep = [p for p in query.split("&") if p.startswith("alt=")]
    return base + ("?" + "&".join(keep) if keep else "")


def parse_json(raw: bytes | None) -> Any:
    if raw is None:
        return None
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        return None
    if not text.strip().startswith(("{", "[")):
        return None
    try:
        return json.loads(text)
    except json.JSONDecodeError:
        return None


def eventstream_frames(raw: bytes) -> list[tuple[dict[str, Any], bytes]] | None:
    """AWS event-stream frames (headers, payload), CRCs checked; None if ``raw`` is not such a stream."""
    frames, pos = [], 0
    while pos < len(raw):
        if len(raw) - pos < 16:
            return None
        total, hlen, pcrc = struct.unpack(">III", raw[pos : pos + 12])
        if zlib.crc32(raw[pos : pos + 8]) != pcrc or total < 16 or pos + total > len(raw):
            return None
        msg = raw[pos : pos + total]
        if zlib.crc32(msg[:-4]) != struct.unpack(">I", msg[-4:])[0]:
            return None
        headers, h = {}, 12
        while h < 12 + hlen:
            n = msg[h]
            name = msg[h + 1 : h + 1 + n].decode()
            h += 1 + n
            kind = msg[h]
            h += 1
            if kind == 7:  # string
                (ln,) = struct.unpack(">H", msg[h : h + 2])
                headers[name] = msg[h + 2 : h + 2 + ln].decode()
                h += 2 + ln
            elif kind in (0, 1):
                headers[name] = kind == 0
            elif kind == 2:
                headers[name], h = msg[h], h + 1
            elif kind == 3:
                headers[name], h = struct.unpack(">h", msg[h : h + 2])[0], h + 2
            elif kind == 4:
                headers[name], h = struct.unpack(">i", msg[h : h + 4])[0], h + 4
            elif kind in (5, 8):
                headers[name], h = struct.unpack(">q", msg[h : h + 8])[0], h + 8
            elif kind == 6:
                (ln,) = struct.unpack(">H", msg[h : h + 2])
                headers[name], h = msg[h + 2 : h + 2 + ln], h + 2 + ln
            elif kind == 9:
                headers[name], h = msg[h : h + 16].hex(), h + 16
            else:
                return None
        frames.append((headers, msg[12 + hlen : -4]))
        pos += total
    return frames


def stream_events(kind: str, text: str | None, b64: str | None) -> list[Any]:
    """The decoded events of a kept stream: for feature counting only."""
    out: list[Any] = []
    if kind == "sse" and text:
        for line in text.splitlines():
            if line.startswith("data:"):
                try:
                    out.append(json.loads(line[5:]))
                except json.JSONDecodeError:
                    pass
    elif kind in ("ndjson", "decoded-lines") and text:
        for line in text.splitlines():
            if line.strip():
                try:
                    out.append(json.loads(line))
                except json.JSONDecodeError:
                    pass
    elif kind == "json-array" and text:
        try:
            value = json.loads(text)
            out.extend(value if isinstance(value, list) else [value])
        except json.JSONDecodeError:
            pass
    elif kind == "eventstream" and b64:
        for headers, payload in eventstream_frames(base64.b64decode(b64)) or ():
            try:
                body = json.loads(payload) if payload else {}
            except (json.JSONDecodeError, UnicodeDecodeError):
                body = None
            name = headers.get(":event-type") or headers.get(":exception-type") or "?"
            out.append({name: body, "_message_type": headers.get(":message-type")})
    return out


def is_response(fmt: str, body: Any) -> bool:
    if not isinstance(body, dict):
        return False
    if fmt == "gemini":
        return "candidates" in body or "promptFeedback" in body or "usageMetadata" in body
    if fmt == "bedrock":
        return "output" in body and "stopReason" in body
    if fmt == "ollama":
        return "message" in body and "done" in body
    return False


def error_code(body: Any) -> str:
    if isinstance(body, dict):
        err = body.get("error")
        if isinstance(err, dict):
            return f"{err.get('status') or err.get('code')}"
        if isinstance(err, str):
            return "error:" + err[:40]
        if "message" in body or "Message" in body:
            return "message:" + str(body.get("message") or body.get("Message"))[:40]
    if isinstance(body, list) and body:
        return error_code(body[0])
    return "?"


def records(name: str, repo: str, commit: str, path: str, errors: list[Record]) -> tuple[list[Record], list[Record]]:
    """The interactions (with their stream, if any) and the bare stream fixtures of a recorded file."""
    try:
        raw = git(repo, "show", f"{commit}:{path}")
    except subprocess.CalledProcessError:
        return [], []
    if path.endswith(".gz"):
        raw = gzip.decompress(raw)
    if path.endswith(".chunks.txt"):  # vercel/ai: decoded stream chunks, one JSON a line
        lines = [json.loads(x) for x in raw.decode().splitlines() if x.strip().startswith("{")]
        fmt = None
        if lines and all("candidates" in x or "usageMetadata" in x for x in lines):
            fmt = "gemini"
        elif (
            lines
            and any(k in lines[-1] for k in ("messageStop", "metadata"))
            or any("contentBlockDelta" in x for x in lines)
        ):
            fmt = "bedrock"
        if fmt is None:
            return [], []
        return [], [
            {
                "format": fmt,
                "path": path,
                "url": None,
                "request": None,
                "stream_kind": "decoded-lines",
                "stream_text": raw.decode(),
            }
        ]
    try:
        doc = yaml.load(raw, Loader=Loader) if path.endswith((".yaml", ".yml")) else json.loads(raw)
    except (yaml.YAMLError, json.JSONDecodeError, UnicodeDecodeError, ValueError):
        return [], []
    found = interactions(doc, path)
    if not found:  # a fixture holding one response body
        err = doc.get("error") if isinstance(doc, dict) else None
        if isinstance(err, dict) and "status" in err and "code" in err:  # a Google error body fixture
            errors.append(
                {
                    "format": "gemini",
                    "source": name,
                    "path": path,
                    "url": None,
                    "status": err["code"],
                    "headers": {},
                    "request": None,
                    "body": doc,
                }
            )
            return [], []
        for fmt in ("gemini", "bedrock", "ollama"):
            if is_response(fmt, doc) and not (fmt == "gemini" and "steps" in doc):
                return [{"format": fmt, "path": path, "url": None, "request": None, "response": doc}], []
        return [], []
    out: list[Record] = []
    for method, url, req_body, resp_body, status, resp_headers in found:
        fmt, streaming = endpoint(url or "")
        if fmt is None or method.upper() != "POST":
            continue
        request = parse_json(as_bytes(req_body))
        rbytes = as_bytes(resp_body)
        if not 200 <= status < 300:
            body = parse_json(rbytes)
            if body is None and rbytes:
                body = rbytes.decode("utf-8", "replace")[:2000]
            errors.append(
                {
                    "format": fmt,
                    "source": name,
                    "path": path,
                    "url": clean_url(url),
                    "status": status,
                    "headers": pick_headers(resp_headers),
                    "request": request,
                    "body": body,
                }
            )
            continue
        if not isinstance(request, dict):
            continue
        rec: Record = {"format": fmt, "path": path, "url": clean_url(url), "request": request, "response": None}
        response = parse_json(rbytes)
        if is_response(fmt, response) and not streaming:
            rec["response"] = response
        elif rbytes:
            text = None
            try:
                text = rbytes.decode("utf-8")
            except UnicodeDecodeError:
                pass
            if fmt == "bedrock" and eventstream_frames(rbytes):
                rec["stream"] = {"stream_kind": "eventstream", "stream_b64": base64.b64encode(rbytes).decode()}
            elif fmt == "bedrock" and text is not None and eventstream_frames(text.encode("latin-1", "ignore")):
                b = text.encode("latin-1")
                rec["stream"] = {"stream_kind": "eventstream", "stream_b64": base64.b64encode(b).decode()}
            elif fmt == "gemini" and text and text.lstrip().startswith("data:"):
                rec["stream"] = {"stream_kind": "sse", "stream_text": text}
            elif fmt == "gemini" and isinstance(response, list):
                rec["stream"] = {"stream_kind": "json-array", "stream_text": text}
            elif (
                fmt == "ollama" and text and len([x for x in text.splitlines() if x.strip()]) >= 1 and response is None
            ):
                rec["stream"] = {"stream_kind": "ndjson", "stream_text": text}
        out.append(rec)
    return out, []


# --------------------------------------------------------------------------- features

FREEFORM = {"args", "input", "arguments", "partialArgs"}  # user data, not wire structure
SCHEMA = {
    "parameters",
    "parametersJsonSchema",
    "responseSchema",
    "responseJsonSchema",
    "json",
    "schema",
    "format",
    "inputSchema",
}
VALUES = {
    "finishReason",
    "stopReason",
    "done_reason",
    "mode",
    "role",
    "status",
    "type",
    "modality",
    "blockReason",
    "format",
}


def features(rec: Record) -> set[str]:
    """What a record exercises: its format, the key names of its bodies and a few enum values."""
    found = {rec["format"]}

    def schema(value: Any) -> None:
        if isinstance(value, dict):
            for k, v in value.items():
                found.add("schema:" + k)
                if k == "type" and isinstance(v, str):
                    found.add("schema:type=" + v)
                if k in ("properties", "$defs", "definitions", "defs") and isinstance(v, dict):
                    for sub in v.values():
                        schema(sub)
                elif isinstance(v, (dict, list)):
                    schema(v)
        elif isinstance(value, list):
            for v in value:
                schema(v)

    def walk(value: Any, parent: str = "") -> None:
        if isinstance(value, dict):
            for k, v in value.items():
                found.add(k)
                if parent == "functionResponse" and k == "response":
                    continue  # the tool's answer, user data
                if k in VALUES and isinstance(v, (str, bool)) and not (k == "format" and isinstance(v, dict)):
                    found.add(f"{k}={v}")
                if k in FREEFORM:
                    continue
                if k in SCHEMA and isinstance(v, dict) and (k != "json" or parent == "inputSchema"):
                    schema(v)
                    continue
                if k == "json" and parent != "inputSchema":
                    continue  # toolResult json content
                walk(v, k)
        elif isinstance(value, list):
            for v in value:
                walk(v, parent)

    walk([rec.get("request"), rec.get("response")])
    stream = rec.get("stream")
    if stream:
        found.add("stream:" + stream["stream_kind"])
        for ev in stream_events(stream["stream_kind"], stream.get("stream_text"), stream.get("stream_b64")):
            if rec["format"] == "bedrock" and isinstance(ev, dict):
                for k in ev:
                    if k != "_message_type":
                        found.add("event:" + k)
            walk(ev)
    return found


def size(rec: Record) -> int:
    return len(json.dumps({k: rec.get(k) for k in ("request", "response")}, ensure_ascii=False))


def select(found: list[Record], cap: int) -> list[Record]:
    """At most ``cap`` records per file, the rarest features first, small before big; then rare big ones."""
    feats = {id(r): features(r) for r in found}
    counts = Counter(f for r in found for f in feats[id(r)])
    ranked = sorted(found, key=lambda r: (-sum(1 / counts[f] for f in feats[id(r)]), size(r)))
    per_file: Counter[str] = Counter()
    kept = set()
    for rec in ranked:
        if per_file[rec["path"]] < cap and size(rec) <= MAX_BYTES:
            per_file[rec["path"]] += 1
            kept.add(id(rec))
    covered = {f for r in found if id(r) in kept for f in feats[id(r)]}
    for rec in sorted(found, key=size):
        if id(rec) not in kept and size(rec) <= MAX_RARE_BYTES and feats[id(rec)] - covered:
            kept.add(id(rec))
            covered |= feats[id(rec)]
    return [r for r in found if id(r) in kept]


# --------------------------------------------------------------------------- main


def pick_errors(errors: list[Record]) -> list[Record]:
    """A few distinct error answers per format (distinct status and error code), small first."""
    seen, out = set(), []
    for e in sorted(errors, key=lambda e: len(json.dumps(e))):
        message = json.dumps(e["body"])[:60]
        key = (
            e["format"],
            e["status"],
            error_code(e["body"]),
            e["headers"].get("x-amzn-errortype", "").split(":")[0],
            message,
        )
        if key in seen or sum(1 for o in out if o["format"] == e["format"]) >= 10:
            continue
        seen.add(key)
        if e["request"] is not None and len(json.dumps(e["request"])) > 4000:
            e = {**e, "request": "(left out: over 4 kB)"}
        out.append(e)
    return out


def main() -> None:
    out_dir = Path(sys.argv[1])
    out_dir.mkdir(parents=True, exist_ok=True)
    all_streams: list[str] = []
    all_errors: list[Record] = []
    summary = {}
    for spec in sys.argv[2:]:
        name, _, repo = spec.partition("=")
        wanted, cap = SOURCES[name]
        commit = git(repo, "rev-parse", "HEAD").decode().strip()
        try:
            listed = git(repo, "grep", "-l", "-E", PREFILTER, commit, "--").decode().splitlines()
        except subprocess.CalledProcessError:
            listed = []
        paths = sorted(p.split(":", 1)[1] for p in listed)
        seen: set[str] = set()
        found: list[Record] = []
        bare_streams: list[Record] = []
        errors: list[Record] = []
        for path in paths:
            if not any(w in path for w in wanted) or "node_modules/" in path or not path.endswith(EXTS):
                continue
            if any(x in path for x in EXCLUDE.get(name, ())):
                continue
            recs, streams = records(name, repo, commit, path, errors)
            for rec in recs:
                body = [rec["request"], rec["response"], rec.get("stream")]
                key = hashlib.sha1(json.dumps(body, sort_keys=True).encode()).hexdigest()
                if key not in seen:
                    seen.add(key)
                    found.append(rec)
            bare_streams.extend(streams)
        kept = select(found, cap)
        lines, per_format = [], Counter()
        for i, rec in enumerate(kept):
            rid = f"{name}-{i}"
            lines.append(
                json.dumps(
                    {
                        "id": rid,
                        "format": rec["format"],
                        "path": rec["path"],
                        "url": rec["url"],
                        "request": rec["request"],
                        "response": rec["response"],
                    },
                    ensure_ascii=False,
                    separators=(",", ":"),
                )
            )
            per_format[(rec["format"], "response" if rec["response"] is not None else "no-response")] += 1
            stream = rec.get("stream")
            if stream and len(stream.get("stream_text") or stream.get("stream_b64") or "") <= MAX_STREAM_BYTES:
                all_streams.append(
                    json.dumps(
                        {
                            "id": rid,
                            "format": rec["format"],
                            "path": rec["path"],
                            "url": rec["url"],
                            "request": rec["request"],
                            **stream,
                        },
                        ensure_ascii=False,
                        separators=(",", ":"),
                    )
                )
                per_format[(rec["format"], "stream")] += 1
        for j, s in enumerate(bare_streams):
            all_streams.append(json.dumps({"id": f"{name}-s{j}", **s}, ensure_ascii=False, separators=(",", ":")))
            per_format[(s["format"], "stream")] += 1
        if lines:
            (out_dir / f"{name}.jsonl.gz").write_bytes(gzip.compress(("\n".join(lines) + "\n").encode(), mtime=0))
        all_errors.extend(errors)
        summary[name] = {
            "commit": commit,
            "kept": len(kept),
            "found": len(found),
            "errors": len(errors),
            "by": {f"{a}/{b}": n for (a, b), n in sorted(per_format.items())},
        }
        print(
            name,
            commit,
            len(found),
            "->",
            len(kept),
            dict(sorted(per_format.items())),
            "errors",
            len(errors),
            flush=True,
        )
    (out_dir / "streams.jsonl.gz").write_bytes(gzip.compress(("\n".join(all_streams) + "\n").encode(), mtime=0))
    (out_dir / "errors.json").write_text(json.dumps(pick_errors(all_errors), indent=1, ensure_ascii=False) + "\n")
    (out_dir / "summary.json").write_text(json.dumps(summary, indent=1) + "\n")


if __name__ == "__main__":
    main()
