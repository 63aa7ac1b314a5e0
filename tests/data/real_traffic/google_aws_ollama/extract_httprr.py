"""Read Go ``httprr`` recordings (``testdata/*.httprr``, as langchaingo's tests record them) out of a bare git
snapshot into ``NAME.jsonl.gz`` lines like the others here: Gemini ``generateContent``, Ollama ``/api/chat``
and Converse interactions answered 2xx, duplicates dropped, a streamed answer kept as ``null``.

An httprr file is the line ``httprr trace v1`` and then, per interaction, ``<request bytes> <response
bytes>`` and the two HTTP messages as sent and received. Not run by the tests; standard library only:

    python extract_httprr.py OUT_DIR langchaingo=SNAPSHOT/langchaingo.git
"""

from __future__ import annotations

import gzip
import json
import subprocess
import sys
from pathlib import Path
from typing import Any


def _git(snapshot: str, *args: str) -> bytes:
    return subprocess.run(["git", "-C", snapshot, *args], capture_output=True, check=True).stdout


def _interactions(data: bytes) -> list[tuple[bytes, bytes]]:
    head, _, rest = data.partition(b"\n")
    if not head.startswith(b"httprr trace v1"):
        raise ValueError("not an httprr trace")
    out = []
    while rest:
        sizes, _, rest = rest.partition(b"\n")
        n, m = map(int, sizes.split())
        out.append((rest[:n], rest[n : n + m]))
        rest = rest[n + m :]
    return out


def _message(raw: bytes) -> tuple[str, dict[str, str], bytes]:
    """The first line, the headers and the body (de-chunked) of one HTTP message."""
    head, sep, body = raw.partition(b"\r\n\r\n")
    if not sep:
        head, _, body = raw.partition(b"\n\n")
    first, *lines = head.decode("utf-8", "replace").splitlines()
    headers = {k.strip().lower(): v.strip() for k, _, v in (line.partition(":") for line in lines)}
    if headers.get("transfer-encoding") == "chunked":
        chunks, rest = b"", body
        while rest:
            size_line, _, rest = rest.partition(b"\r\n")
            size = int(size_line.split(b";")[0] or b"0", 16)
            if size == 0:
                break
            chunks, rest = chunks + rest[:size], rest[size + 2 :]
        body = chunks
    return first, headers, body


def _format(url: str) -> str | None:
    if ":generateContent" in url or ":streamGenerateContent" in url:
        return "gemini"
    if url.endswith("/api/chat"):
        return "ollama"
    return "bedrock" if url.endswith("/converse") else None


def extract(name: str, snapshot: str) -> list[dict[str, Any]]:
    paths = _git(snapshot, "ls-tree", "-r", "HEAD", "--name-only").decode().splitlines()
    out: list[dict[str, Any]] = []
    seen: set[str] = set()
    for path in (p for p in paths if p.endswith(".httprr")):
        for request_raw, response_raw in _interactions(_git(snapshot, "show", f"HEAD:{path}")):
            first, _, body = _message(request_raw)
            status_line, _, answer = _message(response_raw)
            url = first.split()[1].split("?")[0]
            fmt = _format(url)
            if fmt is None or not 200 <= int(status_line.split()[1]) < 300:
                continue
            try:
                request = json.loads(body)
            except ValueError:
                continue
            response = None
            if not url.endswith(":streamGenerateContent"):
                try:
                    response = json.loads(answer)
                except ValueError:
                    response = None  # an NDJSON stream (several JSON lines)
            key = json.dumps([request, response], sort_keys=True)
            if key not in seen:
                seen.add(key)
                out.append(
                    {
                        "id": f"{name}-{len(out)}",
                        "format": fmt,
                        "path": path,
                        "url": url,
                        "request": request,
                        "response": response,
                    }
                )
    return out


if __name__ == "__main__":
    where = Path(sys.argv[1])
    for arg in sys.argv[2:]:
        name, snapshot = arg.split("=", 1)
        lines = "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in extract(name, snapshot))
        (where / f"{name}.jsonl.gz").write_bytes(gzip.compress(lines.encode(), mtime=0))
