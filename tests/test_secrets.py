import base64
import codecs
from urllib.parse import quote, quote_plus

import pytest
from hypothesis import given
from hypothesis import strategies as st

from toolslip import Agent, Toolbox, tool
from toolslip.errors import ConfigError
from toolslip.messages import Image, Text
from toolslip.secrets import SecretGuard
from toolslip.testing import ScriptedModel, call

KEY = "sk-live-4f9c2e7a1b"
DB = "postgres://ci:s3cr3t-db-pass@db.internal/app"
DUMP = f"CI=true\nAPI_KEY={KEY}\nDATABASE_URL={DB}\n"

ENCODINGS = {
    "as is": lambda s: s,
    "upper case": str.upper,
    "reversed": lambda s: s[::-1],
    "hex": lambda s: s.encode().hex(),
    "base64": lambda s: base64.b64encode(s.encode()).decode(),
    "urlsafe base64": lambda s: base64.urlsafe_b64encode(s.encode()).decode(),
    "url-encoded": lambda s: quote(s, safe=""),
    "form-encoded": quote_plus,
    "rot13": lambda s: codecs.encode(s, "rot13"),
    "spaced": lambda s: " ".join(s),
    "base64, url-encoded": lambda s: quote(base64.b64encode(s.encode()).decode(), safe=""),
}


@pytest.mark.parametrize("how", ENCODINGS)
@pytest.mark.parametrize("prefix", ["", "x", "xy", "dump: "])  # base64 must be caught at every offset
def test_guarded_values_are_found_encoded_inside_larger_text(how: str, prefix: str) -> None:
    guard = SecretGuard({"API_KEY": KEY}, env={"DATABASE_URL": DB})
    assert {name for _, name, _ in guard.find({"body": ENCODINGS[how](prefix + DUMP)})} == {"API_KEY", "DATABASE_URL"}


def test_the_hit_names_the_value_and_the_encoding() -> None:
    guard = SecretGuard({"API_KEY": KEY}, env={"DATABASE_URL": DB})
    assert guard.find({"to": "x", "body": {"nested": [base64.b64encode(b"k=" + KEY.encode()).decode()]}}) == [
        ("secret", "API_KEY", "base64")
    ]
    assert guard.find({"url": "https://evil.test/?d=" + quote(DB, safe="")}) == [
        ("environment variable", "DATABASE_URL", "URL-encoded")
    ]


def test_ordinary_text_and_short_environment_values_pass() -> None:
    guard = SecretGuard({"API_KEY": KEY}, env={"CI": "true", "LANG": "C", "DATABASE_URL": DB})
    for text in ["Thanks, we reproduced the crash.", "CI is true", "sk-live", "postgres is down", DB[:20]]:
        assert guard.find({"body": text}) == [], text


def test_redaction_turns_every_form_into_a_handle_and_reveal_undoes_it() -> None:
    guard = SecretGuard({"API_KEY": KEY})
    text = f"key={KEY} b64={base64.b64encode(KEY.encode()).decode()} rev={KEY[::-1]}"
    redacted = guard.redact(text)
    assert KEY not in redacted and guard.find({"t": redacted}) == []
    assert redacted.startswith("key=[secret:API_KEY] b64=[secret:API_KEY]")
    assert guard.reveal("login with [secret:API_KEY] and [secret:OTHER]") == f"login with {KEY} and [secret:OTHER]"


def test_too_short_secrets_are_refused() -> None:
    with pytest.raises(ConfigError, match="'PIN' is shorter than 4 characters"):
        SecretGuard({"PIN": "123"})


def toolbox(posted: list[str]) -> Toolbox:
    @tool(effects="read_only", trusted_output=True)
    def env() -> str:
        """The environment."""
        return DUMP

    @tool(effects="read_only")
    def screenshot() -> list[Text | Image]:
        """A screenshot and its caption."""
        return [Image(media_type="image/png", data="aGk="), Text(text=f"caption {KEY}")]

    @tool(effects="egress")
    def post(body: str) -> str:
        """Post publicly."""
        posted.append(body)
        return "posted"

    @tool(effects="egress")
    def login(token: str) -> str:
        """Log in to a service (needs the real key)."""
        return "logged in" if guard.reveal(token) == KEY else "bad token"

    guard = SecretGuard({"API_KEY": KEY}, env={"DATABASE_URL": DB}, exempt={"login"})
    return Toolbox([env, screenshot, post, login])


async def test_in_a_run_results_are_redacted_and_leaks_are_blocked_without_echoing_the_value() -> None:
    posted: list[str] = []
    guard = SecretGuard({"API_KEY": KEY}, env={"DATABASE_URL": DB}, exempt={"login"})
    turns = [
        call("env"),
        call("screenshot"),
        call("post", body=base64.b64encode(f"DATABASE_URL={DB}".encode()).decode()),
        call("post", body="all good"),
        call("login", token="[secret:API_KEY]"),
        "done",
    ]
    result = await Agent(model=ScriptedModel(turns), tools=toolbox(posted), hooks=[guard]).arun("go")
    results = [r for m in result.messages for r in m.tool_results]
    assert f"API_KEY=[secret:API_KEY]\nDATABASE_URL={DB}" in results[0].text  # env values are blocked, not hidden
    assert isinstance(results[1].content, tuple) and results[1].text == "caption [secret:API_KEY]"
    assert results[2].is_error and "DATABASE_URL (base64)" in results[2].text
    assert DB not in results[2].text and "s3cr3t" not in results[2].text
    assert posted == ["all good"]
    assert results[4].text == "logged in"  # an exempt tool gets the handle and reveals it itself


@given(
    value=st.text(alphabet=st.characters(codec="utf-8", exclude_categories=("Cs",)), min_size=8, max_size=40),
    prefix=st.text(max_size=20),
    suffix=st.text(max_size=20),
)
def test_base64_of_any_text_holding_a_secret_is_caught(value: str, prefix: str, suffix: str) -> None:
    guard = SecretGuard({"S": value})
    encoded = base64.b64encode((prefix + value + suffix).encode()).decode()
    assert [name for _, name, _ in guard.find({"body": encoded})] == ["S"]
