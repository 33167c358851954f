"""Tool-catalog lint: twins and weak schemas flagged, distinct tools not, four input shapes, clear input errors."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agentfootprint import define_tool
from agentfootprint.tools.lint import (
    LINT_DUPLICATE_DESCRIPTION,
    LINT_LONG_DESCRIPTION,
    LINT_MISSING_DESCRIPTION,
    LINT_NAME_COLLISION,
    LINT_NEAR_TWIN,
    LINT_PARAM_NO_DESCRIPTION,
    LINT_PARAM_NO_TYPE,
    LINT_SCHEMA_NO_REQUIRED,
    ToolLintInputError,
    description_similarity,
    format_findings,
    lint_tools,
    read_tools,
    read_tools_file,
)

SCHEMA = {
    "type": "object",
    "properties": {"order_id": {"type": "string", "description": "The order id."}},
    "required": ["order_id"],
}


def ours(name: str, description: str | None, schema: dict[str, Any] | None = None) -> dict[str, Any]:
    entry: dict[str, Any] = {"name": name, "input_schema": schema or SCHEMA}
    if description is not None:
        entry["description"] = description
    return entry


def codes(findings: list[Any]) -> list[str]:
    return sorted(f.code for f in findings)


# -- scenarios ----------------------------------------------------------------------------------------------------


def test_near_twins_are_flagged_and_distinct_tools_are_not() -> None:
    twins = [
        ours("get_order", "Look up an order by its id and return its status."),
        ours("fetch_order", "Look up an order by its id and return its current status."),
    ]
    found = lint_tools(twins)
    assert codes(found) == [LINT_NEAR_TWIN]
    assert found[0].tools == ["get_order", "fetch_order"] and found[0].similarity is not None
    distinct = [
        ours("get_order", "Look up an order by its id and return its status."),
        ours("send_email", "Send an email to a customer with a subject and body."),
    ]
    assert lint_tools(distinct) == []


def test_exact_duplicates_missing_and_long_descriptions() -> None:
    found = lint_tools(
        [
            ours("a", "Same words."),
            ours("b", "same   WORDS."),
            ours("c", None),
            ours("d", "   "),
            ours("e", "x " * 700),
        ]
    )
    assert codes(found) == sorted(
        [LINT_DUPLICATE_DESCRIPTION, LINT_MISSING_DESCRIPTION, LINT_MISSING_DESCRIPTION, LINT_LONG_DESCRIPTION]
    )


def test_weak_schemas_are_flagged() -> None:
    schema = {"type": "object", "properties": {"q": {}, "n": {"type": "integer"}}}
    found = lint_tools([ours("search", "Search the catalog.", schema)])
    assert codes(found) == sorted(
        [LINT_SCHEMA_NO_REQUIRED, LINT_PARAM_NO_TYPE, LINT_PARAM_NO_DESCRIPTION, LINT_PARAM_NO_DESCRIPTION]
    )
    assert {f.parameter for f in found if f.code == LINT_PARAM_NO_DESCRIPTION} == {"q", "n"}


def test_names_that_collide_ignoring_case() -> None:
    found = lint_tools([ours("Get_Order", "One thing."), ours("get-order", "Another entirely different job.")])
    assert codes(found) == [LINT_NAME_COLLISION] and "ignoring case" in found[0].message


def test_all_four_shapes_are_read() -> None:
    tool = define_tool(name="ours_tool", description="Ours.", input_schema=SCHEMA, execute=lambda a: "")
    openai = {"type": "function", "function": {"name": "oa", "description": "OpenAI.", "parameters": SCHEMA}}
    anthropic = {"name": "an", "description": "Anthropic.", "input_schema": SCHEMA}
    mcp = {"name": "mc", "description": "MCP.", "inputSchema": SCHEMA}
    plain = {"name": "pl", "description": "Plain."}
    entries = read_tools([tool, openai, anthropic, mcp, plain])
    assert [(e.name, e.shape) for e in entries] == [
        ("ours_tool", "tool"),
        ("oa", "openai"),
        ("an", "anthropic"),
        ("mc", "mcp"),
        ("pl", "ours"),
    ]
    assert all(e.input_schema == SCHEMA for e in entries[:4])
    assert read_tools({"tools": [mcp]})[0].name == "mc"


def test_a_file_is_read(tmp_path: Path) -> None:
    path = tmp_path / "tools.json"
    path.write_text(json.dumps({"tools": [ours("a", "Alpha tool."), ours("A", "Beta job here.")]}))
    assert codes(lint_tools(read_tools_file(path))) == [LINT_NAME_COLLISION]
    assert "LINT_NAME_COLLISION error [a, A]" in format_findings(lint_tools(read_tools_file(path)))
    assert format_findings([]) == "no findings"


def test_malformed_input_names_the_entry(tmp_path: Path) -> None:
    with pytest.raises(ToolLintInputError) as info:
        read_tools([ours("ok", "Fine."), {"description": "no name"}])
    assert info.value.entry == 1 and info.value.field == "name" and "entry 1" in str(info.value)
    with pytest.raises(ToolLintInputError, match=r"entry 0 \(x\): field 'description'"):
        read_tools([{"name": "x", "description": 5}])
    with pytest.raises(ToolLintInputError, match="entry 0 must be an object"):
        read_tools(["just a string"])
    with pytest.raises(ToolLintInputError, match="inputSchema"):
        read_tools([{"name": "m", "inputSchema": []}])
    with pytest.raises(ToolLintInputError):
        read_tools("not a list")
    assert info.value.code == "ERR_TOOL_LINT_INPUT"


# -- properties ---------------------------------------------------------------------------------------------------

_words = st.lists(st.sampled_from("order refund email status customer search invoice ship track".split()), min_size=2)


@settings(max_examples=60, deadline=None)
@given(a=_words, b=_words)
def test_similarity_is_symmetric_and_bounded(a: list[str], b: list[str]) -> None:
    x, y = " ".join(a), " ".join(b)
    assert description_similarity(x, y) == description_similarity(y, x)
    assert 0.0 <= description_similarity(x, y) <= 1.0 and description_similarity(x, x) == 1.0


@settings(max_examples=40, deadline=None)
@given(st.permutations([ours("a", "Read an order."), ours("b", "Read an order!"), ours("c", None)]))
def test_findings_do_not_depend_on_catalog_order(entries: list[dict[str, Any]]) -> None:
    assert codes(lint_tools(entries)) == sorted([LINT_NEAR_TWIN, LINT_MISSING_DESCRIPTION])


# -- security -----------------------------------------------------------------------------------------------------


def test_errors_never_quote_the_input(tmp_path: Path) -> None:
    path = tmp_path / "bad.json"
    path.write_text('{"tools": [SECRET-TOKEN-123')
    with pytest.raises(ToolLintInputError) as info:
        read_tools_file(path)
    assert "SECRET" not in str(info.value) and "line 1" in str(info.value)
    with pytest.raises(ToolLintInputError) as info2:
        read_tools([{"name": 123, "description": "SECRET-TOKEN-123"}])
    assert "SECRET" not in str(info2.value)
    with pytest.raises(ToolLintInputError):
        read_tools_file(tmp_path / "missing.json")


def test_oversized_catalogs_and_names_are_refused() -> None:
    with pytest.raises(ToolLintInputError, match="at most"):
        read_tools([ours(f"t{i}", "x") for i in range(1001)])
    with pytest.raises(ToolLintInputError, match="longer than"):
        read_tools([ours("n" * 500, "x")])
    with pytest.raises(ToolLintInputError):
        lint_tools([], twin_threshold=0)
