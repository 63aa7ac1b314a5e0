"""MCP <-> toolslip translation: annotations and effects, content blocks and result parts."""

import json

import mcp_types as mt
import pytest

from toolslip import Image, Text
from toolslip.effects import Effect, parse_effects
from toolslip.mcp import annotations_from_effects, effects_from_mcp_annotations
from toolslip.mcp.mapping import content_from_mcp, content_to_mcp, effects_from_mcp_tool, tool_meta

E = Effect


@pytest.mark.parametrize(
    ("hints", "effects", "trusted"),
    [
        (None, {E.SIDE_EFFECT, E.DESTRUCTIVE, E.EGRESS}, False),  # nothing declared: assume the worst
        (mt.ToolAnnotations(read_only_hint=True), {E.READ_ONLY}, False),
        (mt.ToolAnnotations(read_only_hint=True, destructive_hint=True, open_world_hint=False), {E.READ_ONLY}, True),
        (mt.ToolAnnotations(destructive_hint=False, open_world_hint=False), {E.SIDE_EFFECT}, True),
        (mt.ToolAnnotations(idempotent_hint=True, destructive_hint=False), {E.IDEMPOTENT, E.EGRESS}, False),
        (
            mt.ToolAnnotations(read_only_hint=False, idempotent_hint=True),
            {E.IDEMPOTENT, E.DESTRUCTIVE, E.EGRESS},
            False,
        ),
    ],
)
def test_annotations_become_effects(hints, effects, trusted):
    assert effects_from_mcp_annotations(hints) == (frozenset(effects), trusted)


@pytest.mark.parametrize(
    "declared",
    [
        ["read_only"],
        ["side_effect"],
        ["idempotent", "destructive"],
        ["side_effect", "egress"],
        ["destructive", "side_effect"],
    ],
)
@pytest.mark.parametrize("trusted", [True, False])
def test_toolslip_effects_survive_a_round_trip_through_meta(declared, trusted):
    effects = parse_effects(declared)
    tool = mt.Tool(
        name="t",
        input_schema={"type": "object"},
        annotations=annotations_from_effects(effects, trusted),
        _meta=tool_meta(effects, trusted),
    )
    wire = mt.Tool.model_validate(json.loads(tool.model_dump_json(by_alias=True, exclude_none=True)))
    assert effects_from_mcp_tool(wire) == (effects, trusted)


def test_hints_written_for_other_clients_are_conservative_and_honest():
    hints = annotations_from_effects(parse_effects(["side_effect", "destructive"]), trusted_output=True)
    assert (hints.read_only_hint, hints.destructive_hint, hints.idempotent_hint, hints.open_world_hint) == (
        False,
        True,
        False,
        False,
    )
    # Untrusted output is reported as open world, so a client's injection gate looks at it.
    assert annotations_from_effects(frozenset({E.READ_ONLY}), trusted_output=False).open_world_hint is True
    # Without toolslip's _meta, a client reading only the hints gets the same read-only, trusted tool back.
    only_hints = mt.Tool(
        name="t", input_schema={"type": "object"}, annotations=annotations_from_effects(frozenset({E.READ_ONLY}), True)
    )
    assert effects_from_mcp_tool(only_hints) == (frozenset({E.READ_ONLY}), True)


def test_a_foreign_meta_vocabulary_falls_back_to_the_hints():
    tool = mt.Tool(
        name="t",
        input_schema={"type": "object"},
        annotations=mt.ToolAnnotations(read_only_hint=True),
        _meta={"dev.toolslip/effects": {"effects": ["teleports"]}},
    )
    assert effects_from_mcp_tool(tool) == (frozenset({E.READ_ONLY}), False)


def test_content_from_mcp_keeps_single_text_as_a_string_and_structured_only_as_json():
    assert content_from_mcp(mt.CallToolResult(content=[mt.TextContent(text="hi")])) == "hi"
    assert content_from_mcp(mt.CallToolResult(content=[], structured_content={"城市": "北京"})) == '{"城市": "北京"}'
    assert content_from_mcp(mt.CallToolResult(content=[])) == ""


def test_content_to_mcp_maps_text_images_and_image_urls():
    assert content_to_mcp("x") == [mt.TextContent(text="x")]
    blocks = content_to_mcp(
        (
            Text(text="a"),
            Image(media_type="image/png", data="AAAA"),
            Image(media_type="image/jpeg", url="https://x/y.jpg"),
        )
    )
    assert blocks[0] == mt.TextContent(text="a")
    assert blocks[1] == mt.ImageContent(data="AAAA", mime_type="image/png")
    assert isinstance(blocks[2], mt.ResourceLink) and blocks[2].uri == "https://x/y.jpg"
