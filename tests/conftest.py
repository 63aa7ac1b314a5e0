"""Checks that run once, before any test."""

from __future__ import annotations

import signal
from collections.abc import AsyncIterator, Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import psycopg
import pytest

from toolslip.testing.postgres import PostgresServer

if TYPE_CHECKING:
    from toolslip.providers.local import LocalModel


def pytest_configure(config: pytest.Config) -> None:
    """Run the suite with Ctrl-C as a terminal gives it, however it was started.

    A shell starts a background job (``make test &``, and ``nohup`` under a non-interactive shell) with
    SIGINT ignored, and an ignored signal stays ignored across ``exec``: every process the tests start
    inherited it, so the tests that press Ctrl-C in a child saw it do nothing (9 of 1,712 failed). A
    handled signal is reset to its default in an exec'd child, so handling it here is enough for all of
    them (subprocess, asyncio, pexpect alike).
    """
    if signal.getsignal(signal.SIGINT) == signal.SIG_IGN:
        signal.signal(signal.SIGINT, signal.default_int_handler)


def pytest_sessionstart(session: pytest.Session) -> None:
    """Stop with one sentence if llama.cpp would crash here, instead of losing the whole run to a signal.

    A library built for features this machine does not run kills the process that decodes with it (issue
    14: SIGILL on an Intel CPU whose OS withholds AMX), which took pytest down mid-suite without a word.
    The check runs in a child process, once per library build (a marker in the model cache).
    """
    from toolslip.providers.local import available

    if not available():  # the local-model tests say themselves which extra is missing
        return
    from toolslip.providers.local_probe import LibraryCrash, check_library
    from toolslip.providers.local_weights import CATALOGUE, DEFAULT_MODEL, ensure_weights

    try:
        check_library(ensure_weights(CATALOGUE[DEFAULT_MODEL]))
    except LibraryCrash as exc:
        pytest.exit(f"the embedded model cannot run on this machine: {exc}", returncode=1)


# --- the journal's two stores: a SQLite file, and a real PostgreSQL server this session starts ---------

STORES = ["sqlite", "postgres"]


@pytest.fixture(scope="session")
def postgres() -> Iterator[PostgresServer]:
    """One PostgreSQL server for the session (Debian's binaries, a Unix socket in a temporary folder)."""
    server = PostgresServer().start()
    yield server
    server.remove()


def fresh_postgres(server: PostgresServer) -> str:
    """The server's URL with no journal in it: the journal's schema, and the tests' ledger, dropped."""
    with psycopg.connect(server.url(), autocommit=True) as conn:
        conn.execute("SET lock_timeout = '10s'")
        conn.execute("DROP SCHEMA IF EXISTS toolslip CASCADE")
        conn.execute("DROP TABLE IF EXISTS ledger")
    return server.url()


@pytest.fixture(params=STORES)
def journal_at(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """Where a test's journal lives: a SQLite file in its folder, or an empty PostgreSQL journal."""
    if request.param == "sqlite":
        return str(tmp_path / "runs.sqlite")
    return fresh_postgres(request.getfixturevalue("postgres"))


@pytest.fixture(params=STORES)
def journal_in(request: pytest.FixtureRequest) -> Callable[[Path], str]:
    """A fresh journal per call: a SQLite file in the given folder, or the PostgreSQL journal emptied."""
    if request.param == "sqlite":
        return lambda folder: str(folder / "runs.sqlite")
    server = request.getfixturevalue("postgres")
    return lambda folder: fresh_postgres(server)


@pytest.fixture(scope="session")
def local() -> LocalModel:
    """The embedded 0.5B model (not the default 1.5B: the tests were written on it and it decodes twice as fast),
    loaded once for the whole session (a load takes seconds and 500 MB)."""
    from toolslip.providers.local import local_model

    loaded = local_model("local:qwen2.5-coder-0.5b", seed=0)  # SDKs that sample without a seed repeat
    loaded.load()
    return loaded


@pytest.fixture
async def local_url(local: LocalModel) -> AsyncIterator[str]:
    """``toolslip serve`` in front of the embedded model, on a free loopback port."""
    from toolslip.server import serve

    async with serve(local) as url:
        yield url


def converse_client(base: str) -> Any:
    """boto3's Bedrock Runtime client pointed at a ``toolslip serve`` on ``base``, as the tests' Converse
    callers need it: fake credentials (the server reads the SigV4 header, nobody checks the key) and no
    retries, so a refusal is seen as it is."""
    import boto3
    from botocore.config import Config

    return boto3.client(
        "bedrock-runtime",
        endpoint_url=base,
        region_name="us-east-1",
        aws_access_key_id="AKIDEXAMPLE",
        aws_secret_access_key="not-a-secret",
        config=Config(retries={"max_attempts": 1}),
    )
