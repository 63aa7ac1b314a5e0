import asyncio
from enum import Enum
from typing import Annotated, Any, Literal, Optional

import pytest
from pydantic import BaseModel, Field
from typing_extensions import TypedDict  # pydantic needs this one on Python < 3.12

from toolslip import Image, Text, Tool, Toolbox, tool
from toolslip.effects import Effect
from toolslip.errors import ArgumentError, ToolDefinitionError


class Color(Enum):
    RED = "red"
    BLUE = "blue"


class Point(TypedDict):
    x: int
    y: int


class Address(BaseModel):
    street: str
    city: str


def test_schema_from_type_hints_and_docstring() -> None:
    @tool
    def f(
        city: str,
        count: int,
        ratio: float,
        flag: bool,
        unit: Literal["c", "f"] = "c",
        color: Color = Color.RED,
        maybe: Optional[str] = None,  # noqa: UP045 - testing the typing form people write
        tags: list[str] | None = None,
        meta: dict[str, int] | None = None,
        point: Point | None = None,
        address: Address | None = None,
        n: Annotated[int, Field(description="how many, at least 1", ge=1)] = 1,
    ) -> str:
        """Do something.

        Args:
            city: A city name.
            n: ignored because Field already describes it.
        """
        return ""

    schema = f.parameters
    props = schema["properties"]
    assert schema["type"] == "object"
    assert schema["required"] == ["city", "count", "ratio", "flag"]
    assert props["city"] == {"type": "string", "description": "A city name."}
    assert props["count"]["type"] == "integer"
    assert props["ratio"]["type"] == "number"
    assert props["flag"]["type"] == "boolean"
    assert props["unit"]["enum"] == ["c", "f"]
    assert props["color"]["enum"] == ["red", "blue"]
    assert {"type": "null"} in props["maybe"]["anyOf"]
    assert props["tags"]["anyOf"][0] == {"type": "array", "items": {"type": "string"}}
    assert props["meta"]["anyOf"][0]["additionalProperties"] == {"type": "integer"}
    assert props["point"]["anyOf"][0]["properties"] == {"x": {"type": "integer"}, "y": {"type": "integer"}}
    assert props["address"]["anyOf"][0]["required"] == ["street", "city"]
    assert props["n"]["description"] == "how many, at least 1"
    assert props["n"]["minimum"] == 1
    assert "$defs" not in schema and "title" not in schema
    assert f.description == "Do something."


def test_recursive_model_keeps_its_definitions() -> None:
    class Node(BaseModel):
        value: int
        children: list["Node"] = []

    @tool
    def walk(tree: Node) -> int:
        """Sum a tree."""
        return 0

    assert "$defs" in walk.parameters


def test_arguments_are_validated_and_coerced() -> None:
    @tool
    def add(a: int, b: float, address: Address) -> str:
        """Add."""
        assert isinstance(address, Address)
        return f"{a + b} {address.city}"

    out = asyncio.run(add.invoke({"a": "2", "b": 1.5, "address": {"street": "x", "city": "北京"}}))
    assert out == "3.5 北京"
    with pytest.raises(ArgumentError) as err:
        asyncio.run(add.invoke({"a": "two", "c": 1}))
    message = str(err.value)
    assert "argument 'a'" in message and "'two'" in message
    assert "argument 'b': Field required" in message
    assert "argument 'c'" in message  # unknown arguments are rejected, not ignored


def test_async_tools_and_output_serialization() -> None:
    @tool
    async def info(city: str) -> dict[str, Any]:
        """Info."""
        await asyncio.sleep(0)
        return {"city": city, "temp": 28}

    @tool
    def picture() -> Image:
        """A picture."""
        return Image(media_type="image/png", data="AAAA")

    assert asyncio.run(info.invoke({"city": "北京"})) == '{"city": "北京", "temp": 28}'
    assert asyncio.run(picture.invoke({})) == (Image(media_type="image/png", data="AAAA"),)


def test_options_effects_and_bad_definitions() -> None:
    @tool(name="send", effects=["egress", "idempotent"], timeout=2.0)
    def send_mail(to: str) -> str:
        """Send."""
        return to

    assert send_mail.name == "send" and send_mail.timeout == 2.0
    assert send_mail.effects == {Effect.EGRESS, Effect.IDEMPOTENT}
    assert not send_mail.side_effecting and not send_mail.read_only

    @tool
    def unknown(x: int) -> int:
        """No effects declared."""
        return x

    assert unknown.side_effecting  # undeclared means dangerous

    with pytest.raises(ToolDefinitionError, match="\\*args"):
        tool(lambda *args: None)
    with pytest.raises(ToolDefinitionError, match="unknown effect 'reads'"):
        tool(effects="reads")(lambda x: x)


def test_tool_from_raw_schema_checks_with_jsonschema() -> None:
    schema = {"type": "object", "properties": {"q": {"type": "string"}}, "required": ["q"]}
    search = Tool.from_schema("search", "Search.", schema, lambda q: f"found {q}", effects="read_only")
    assert asyncio.run(search.invoke({"q": "x"})) == "found x"
    with pytest.raises(ArgumentError, match="'q' is a required property"):
        asyncio.run(search.invoke({}))
    with pytest.raises(ToolDefinitionError):
        Tool.from_schema("bad", "Bad.", {"type": "array"})


def test_toolbox_rejects_duplicate_names() -> None:
    def a() -> str:
        """A."""
        return ""

    box = Toolbox([a])
    assert box.names == ["a"] and box.specs()[0].name == "a"
    with pytest.raises(ToolDefinitionError, match="two tools are named 'a'"):
        box.add(a)
    assert Text(text="x") != Text(text="y")
