"""Every request field of the official SDKs, sent one at a time through the SDK to ``toolslip serve``.

Before issue 26 the scripted model accepted them all while the local model answered 15 of 21 ordinary
fields with a 500, so a test on the scripted model alone saw nothing. The local model's turn is in
``test_server_local.py``; this file covers the table and the scripted model (no 500, and a 400 exactly
where the real service, or a server that stores nothing, refuses).
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import anthropic
import openai
import pytest

from _sdk_fields import REFUSED, SDK_TYPES, TABLES, annotations, fields
from toolslip.server import serve
from toolslip.testing import ScriptedModel

ASK = "What is 3 USD in CNY?"


def test_the_tables_name_only_fields_the_sdks_have() -> None:
    for kind in SDK_TYPES:
        stale = set(TABLES[kind]) - set(annotations(kind))
        assert not stale, f"{kind}: {sorted(stale)} are no longer fields of the installed SDK"
        assert set(fields(kind)) >= set(TABLES[kind]) - stale


@pytest.fixture
async def base() -> AsyncIterator[str]:
    async with serve(ScriptedModel(["3 USD is 21.6 CNY."] * 200)) as url:
        yield url


async def send(base: str, kind: str, body: dict[str, Any]) -> int:
    """Send ``body`` (plus what the endpoint requires) through the official SDK; the HTTP status."""
    try:
        if kind == "messages":
            async with anthropic.AsyncAnthropic(base_url=base, api_key="x", max_retries=0) as claude:
                await claude.messages.create(
                    model="claude-local", max_tokens=16, messages=[{"role": "user", "content": ASK}], **body
                )
        else:
            async with openai.AsyncOpenAI(base_url=f"{base}/v1", api_key="x", max_retries=0) as oai:
                if kind == "chat":
                    await oai.chat.completions.create(model="m", messages=[{"role": "user", "content": ASK}], **body)
                else:
                    await oai.responses.create(model="m", input=ASK, **body)
    except (openai.APIStatusError, anthropic.APIStatusError) as exc:
        return exc.status_code
    return 200


@pytest.mark.parametrize("kind", sorted(SDK_TYPES))
async def test_every_sdk_field_alone_is_answered_or_refused_as_the_service_would(base: str, kind: str) -> None:
    statuses = {name: await send(base, kind, {name: value}) for name, value in fields(kind).items()}
    expected = {name: 400 if name in REFUSED[kind] else 200 for name in statuses}
    assert statuses == expected
