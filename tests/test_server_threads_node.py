"""The Anthropic TypeScript SDK's tool runner, as shipped (message threads on by default), against ``toolslip serve``.

Node runs ``tests/js/tool_runner.mjs``: ``client.beta.messages.toolRunner`` with ``betaTool``, the client's
defaults untouched. That runner threads its loop (``@anthropic-ai/sdk`` 1.17.0: ``threading: thread !== false &&
this._client._supportsMessageThreads`` in ``resources/beta/messages/messages.mjs``, and the ``Anthropic``
client sets ``_supportsMessageThreads = true`` in ``client.mjs``), so the first turn creates the thread and the
second continues it with only its ``tool_result``. The bodies the SDK sent are checked, so a runner that fell
back to whole histories would not pass; the Python SDK's runner is in ``test_server_threads.py``.
"""

from __future__ import annotations

import asyncio
import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from test_server_threads import QUESTION, SYSTEM, check_threaded
from toolslip.providers.local import LocalModel
from toolslip.providers.scripted import call
from toolslip.server import serve
from toolslip.testing import ScriptedModel

JS = Path(__file__).parent / "js"
pytestmark = [
    pytest.mark.skipif(shutil.which("node") is None, reason="needs Node.js (apt-get install nodejs)"),
    pytest.mark.skipif(
        not (JS / "node_modules" / "@anthropic-ai" / "sdk").is_dir(), reason="run `npm ci` in tests/js (make js-deps)"
    ),
]


async def node_tool_runner(base: str, mode: str) -> tuple[str, list[dict[str, Any]]]:
    """The TypeScript runner's final text and the bodies it sent (``mode``: ``whole`` or ``streamed``)."""
    node = await asyncio.create_subprocess_exec(
        "node", "tool_runner.mjs", base, mode, cwd=JS, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE
    )
    try:
        out, err = await asyncio.wait_for(node.communicate(), timeout=300)
    finally:
        if node.returncode is None:
            node.kill()
            await node.wait()
    assert node.returncode == 0, err.decode()[-2000:]
    done = json.loads(out)
    return done["text"], done["sent"]


@pytest.mark.parametrize("mode", ["whole", "streamed"])
async def test_the_typescript_sdks_tool_runner_threads_its_loop_against_the_scripted_model(mode: str) -> None:
    model = ScriptedModel([call("get_weather", city="Beijing"), "It is 28 °C and cloudy in Beijing."])
    async with serve(model) as base:
        text, sent = await node_tool_runner(base, mode)
    assert text == "It is 28 °C and cloudy in Beijing."
    assert sent[0]["messages"] == [{"role": "user", "content": QUESTION}]
    check_threaded(sent)
    assert all(body["stream"] is (mode == "streamed") for body in sent)
    # The model was asked the whole conversation each time: the server put the thread back together.
    second = model.requests[1]
    assert [m.role for m in second.messages] == ["system", "user", "assistant", "tool"]
    assert second.messages[0].text == SYSTEM and [t.name for t in second.tools] == ["get_weather"]
    assert second.messages[2].tool_calls[0].id == second.messages[3].tool_results[0].call_id


@pytest.mark.slow
@pytest.mark.parametrize("mode", ["whole", "streamed"])
async def test_the_typescript_sdks_tool_runner_threads_its_loop_against_the_local_model(
    local: LocalModel, local_url: str, mode: str
) -> None:
    text, sent = await node_tool_runner(local_url, mode)
    assert text.strip(), sent
    check_threaded(sent)
