"""The embedded model's settings triage reads Gemini's, Converse's and Ollama's objects of knobs, which
``serve`` receives from google-genai, boto3 and ollama clients, instead of refusing them as unknown."""

from __future__ import annotations

from typing import Any

import pytest

from toolslip.core.messages import Settings
from toolslip.formats import get_format
from toolslip.providers.local_settings import triage


@pytest.mark.parametrize(
    ("fmt", "body"),
    [
        ("gemini", {"contents": [], "generationConfig": {"topP": 0.5, "topK": 4, "seed": 3, "responseMimeType": "x"}}),
        ("ollama", {"model": "m", "messages": [], "options": {"top_p": 0.5, "top_k": 4, "seed": 3, "num_ctx": 9}}),
        (
            "bedrock",
            {"messages": [], "inferenceConfig": {"topP": 0.5}, "additionalModelRequestFields": {"top_k": 4, "x": 1}},
        ),
    ],
)
def test_native_sampling_knobs_are_honoured_and_the_other_native_fields_ignored(fmt: str, body: dict[str, Any]) -> None:
    settings = get_format(fmt).request_from_wire(body).settings
    picked = triage(settings, max_tokens=10, temperature=0.0, seed=0)
    assert picked.options["top_p"] == 0.5 and picked.options["top_k"] == 4
    assert picked.options["seed"] == (0 if fmt == "bedrock" else 3)
    assert (
        picked.ignored
        == {
            "gemini": ("generationConfig.responseMimeType",),
            "ollama": ("options.num_ctx",),
            "bedrock": ("additionalModelRequestFields.x",),
        }[fmt]
    )


def test_a_sampled_request_with_no_seed_draws_one_and_a_seed_given_is_kept() -> None:
    # An SDK sending temperature 0.7 and no seed got one answer every time (seed 0), as no sample is.
    drawn = {
        triage(Settings(temperature=0.7), max_tokens=10, temperature=0.0, seed=None).options["seed"] for _ in range(4)
    }
    assert len(drawn) > 1
    kept = triage(Settings(temperature=0.7, extra={"seed": 5}), max_tokens=10, temperature=0.0, seed=None)
    assert kept.options["seed"] == 5
    assert triage(Settings(temperature=0.7), max_tokens=10, temperature=0.0, seed=3).options["seed"] == 3


@pytest.mark.parametrize(
    ("fmt", "body"),
    [
        ("gemini", {"contents": [], "generationConfig": {"thinkingConfig": {"thinkingBudget": 0}}}),
        ("ollama", {"model": "m", "messages": [], "think": False}),
    ],
)
def test_thinking_turned_off_in_a_native_spelling_asks_for_what_the_model_does_anyway(
    fmt: str, body: dict[str, Any]
) -> None:
    settings = get_format(fmt).request_from_wire(body).settings
    assert triage(settings, max_tokens=10, temperature=0.0, seed=0).ignored == ()


def test_what_conversion_writes_in_a_native_body_is_ignored_by_name_not_refused() -> None:
    gemini = {
        "contents": [],
        "toolConfig": {"functionCallingConfig": {"mode": "ANY", "allowedFunctionNames": ["a", "b"]}},
    }
    bedrock = {"messages": [], "serviceTier": {"type": "priority"}}
    for fmt, body in (("gemini", gemini), ("bedrock", bedrock)):
        settings = get_format(fmt).request_from_wire(body).settings
        assert triage(settings, max_tokens=10, temperature=0.0, seed=0).ignored == (
            next(iter(body.keys() - {"contents", "messages"})),
        )
