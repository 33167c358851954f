"""Tool-catalog lint exactly: each input shape, each finding's code, severity, tools and message, each refusal."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from agentfootprint.tools import define_tool
from agentfootprint.tools.lint import (
    LINT_DUPLICATE_DESCRIPTION,
    LINT_LONG_DESCRIPTION,
    LINT_MISSING_DESCRIPTION,
    LINT_NAME_COLLISION,
    LINT_NEAR_TWIN,
    LINT_PARAM_NO_DESCRIPTION,
    LINT_PARAM_NO_TYPE,
    LINT_SCHEMA_NO_REQUIRED,
    LINT_SCHEMA_NO_TYPE,
    LintFinding,
    ToolEntry,
    ToolLintInputError,
    description_similarity,
    format_findings,
    lint_tools,
    read_tools,
    read_tools_file,
)

GOOD: dict[str, Any] = {
    "type": "object",
    "properties": {"q": {"type": "string", "description": "The query."}},
    "required": ["q"],
}


def _t(name: str, description: str | None = "Does one distinct thing.", schema: Any = None) -> dict[str, Any]:
    return {"name": name, "description": description, "input_schema": GOOD if schema is None else schema}


def _refusal(fn: Any, *args: Any) -> tuple[str, int | None, str | None]:
    with pytest.raises(ToolLintInputError) as info:
        fn(*args)
    assert info.value.code == "ERR_TOOL_LINT_INPUT"
    return str(info.value), info.value.entry, info.value.field


# -- reading ------------------------------------------------------------------------------------------------------
def test_each_shape_is_read_with_its_schema() -> None:
    tool = define_tool(name="mine", description="Mine.", input_schema=GOOD, execute=lambda a: 1)
    entry = ToolEntry(name="ready", description="Ready.")
    entries = read_tools(
        [
            tool,
            entry,
            {"type": "function", "function": {"name": "oa", "description": "OpenAI.", "parameters": GOOD}},
            {"name": "flat_oa", "parameters": GOOD},
            {"name": "mcp", "description": "MCP.", "inputSchema": GOOD},
            {"name": "anth", "input_schema": GOOD},
            {"name": "bare"},
            {"name": "nulls", "input_schema": None},
        ]
    )
    assert [(e.name, e.shape, e.description) for e in entries] == [
        ("mine", "tool", "Mine."),
        ("ready", "ours", "Ready."),
        ("oa", "openai", "OpenAI."),
        ("flat_oa", "openai", None),
        ("mcp", "mcp", "MCP."),
        ("anth", "anthropic", None),
        ("bare", "ours", None),
        ("nulls", "anthropic", None),
    ]
    assert entries[1] is entry
    assert [e.input_schema for e in entries] == [GOOD, {}, GOOD, GOOD, GOOD, GOOD, {}, {}]


def test_a_tools_object_is_unwrapped() -> None:
    assert [e.name for e in read_tools({"tools": [{"name": "a"}, {"name": "b"}]})] == ["a", "b"]
    assert [e.name for e in read_tools(iter([{"name": "c"}]))] == ["c"]
    assert read_tools([]) == []


@pytest.mark.parametrize(
    "data, message, entry, field",
    [
        ("tools", "a tool list must be a list of tools (or an object with a 'tools' list)", None, None),
        (b"[]", "a tool list must be a list of tools (or an object with a 'tools' list)", None, None),
        (5, "a tool list must be a list of tools (or an object with a 'tools' list)", None, None),
        ({"tools": "x"}, "tool entry 0 must be an object, got str", 0, None),
        ([{"name": "a"}, 3], "tool entry 1 must be an object, got int", 1, None),
        ([{"name": ""}], "tool entry 0: field 'name' must be a non-empty string", 0, "name"),
        ([{"name": "  "}], "tool entry 0: field 'name' must be a non-empty string", 0, "name"),
        ([{"description": "x"}], "tool entry 0: field 'name' must be a non-empty string", 0, "name"),
        ([{"name": 7}], "tool entry 0: field 'name' must be a non-empty string", 0, "name"),
        ([{"name": "n" * 201}], "tool entry 0: field 'name' is longer than 200", 0, "name"),
        ([{"name": "a", "description": 3}], "tool entry 0 (a): field 'description' must be a string", 0, "description"),
        (
            [{"name": "a", "input_schema": []}],
            "tool entry 0 (a): field 'input_schema' must be an object",
            0,
            "input_schema",
        ),
        (
            [{"name": "a", "inputSchema": "x"}],
            "tool entry 0 (a): field 'inputSchema' must be an object",
            0,
            "inputSchema",
        ),
        (
            [{"function": {"name": "a", "parameters": 1}}],
            "tool entry 0 (a): field 'parameters' must be an object",
            0,
            "parameters",
        ),
    ],
)
def test_unreadable_lists_name_the_entry_and_field(data: Any, message: str, entry: Any, field: Any) -> None:
    assert _refusal(read_tools, data) == (message, entry, field)


def test_a_name_of_200_chars_and_a_list_of_1000_tools_are_read() -> None:
    assert read_tools([{"name": "n" * 200}])[0].name == "n" * 200
    assert len(read_tools([{"name": f"t{i}"} for i in range(1000)])) == 1000
    assert _refusal(read_tools, [{"name": f"t{i}"} for i in range(1001)]) == (
        "a tool list may hold at most 1000 tools",
        None,
        None,
    )


def test_files_are_read_or_refused_by_name(tmp_path: Path) -> None:
    good = tmp_path / "tools.json"
    good.write_text(json.dumps({"tools": [{"name": "é_tool"}]}), encoding="utf-8")
    assert [e.name for e in read_tools_file(str(good))] == ["é_tool"]
    assert _refusal(read_tools_file, tmp_path / "none.json") == ("cannot read none.json: FileNotFoundError", None, None)
    binary = tmp_path / "bin.json"
    binary.write_bytes(b"\xff\xfe")
    assert _refusal(read_tools_file, binary) == ("cannot read bin.json: UnicodeDecodeError", None, None)
    broken = tmp_path / "broken.json"
    broken.write_text('[{"name": }]', encoding="utf-8")
    assert _refusal(read_tools_file, broken) == ("broken.json is not JSON (line 1, column 11)", None, None)


# -- similarity ---------------------------------------------------------------------------------------------------
def test_similarity_values() -> None:
    assert description_similarity("Refund an order", "refund  AN order") == 1.0  # case and spacing fold
    assert description_similarity("gamma beta alpha", "alpha beta gamma") == 1.0  # words alike, order not
    assert description_similarity("alpha beta gamma", "alpha beta delta") == 0.75  # characters alike
    assert description_similarity("Send a mail to a user", "Send an email to the user") == 0.8696
    assert description_similarity("the a", "an of") == 0.2  # only stop words: characters decide
    assert description_similarity("x", "y") == 0.0
    assert description_similarity("", "") == 0.0
    assert description_similarity("a", "") == 0.0
    assert description_similarity("x" * 1000 + "A", "x" * 1000 + "B") == 1.0  # the first 1000 characters


# -- findings -----------------------------------------------------------------------------------------------------
def test_a_clean_catalog_has_no_findings() -> None:
    assert lint_tools([_t("a", "Look up an order."), _t("b", "Cancel a subscription today.")]) == []
    assert format_findings([]) == "no findings"


def test_name_collisions_exact_and_ignoring_case() -> None:
    found = lint_tools([_t("get-x", "One."), _t("Get_X", "Two things."), _t("same", "Three."), _t("same", "Four.")])
    collisions = [f for f in found if f.code == LINT_NAME_COLLISION]
    assert collisions == [
        LintFinding(
            code=LINT_NAME_COLLISION,
            severity="error",
            tools=["get-x", "Get_X"],
            message="tool names collide ignoring case: get-x, Get_X",
        ),
        LintFinding(
            code=LINT_NAME_COLLISION, severity="error", tools=["same", "same"], message="tool names collide: same, same"
        ),
    ]


def test_missing_and_long_descriptions() -> None:
    found = lint_tools(
        [_t("none", None), _t("blank", "   "), _t("long", "y" * 11), _t("edge", "z" * 10)], max_description=10
    )
    assert found == [
        LintFinding(
            code=LINT_MISSING_DESCRIPTION,
            severity="error",
            tools=["none"],
            message="none: no description (the model sees only the name)",
        ),
        LintFinding(
            code=LINT_MISSING_DESCRIPTION,
            severity="error",
            tools=["blank"],
            message="blank: no description (the model sees only the name)",
        ),
        LintFinding(
            code=LINT_LONG_DESCRIPTION,
            severity="warning",
            tools=["long"],
            message="long: description is 11 characters (over 10)",
        ),
    ]


def test_the_default_description_limit_is_1024() -> None:
    assert lint_tools([_t("a", "d" * 1024)]) == []
    assert [f.code for f in lint_tools([_t("a", "d" * 1025)])] == [LINT_LONG_DESCRIPTION]


def test_duplicate_and_near_twin_descriptions() -> None:
    found = lint_tools(
        [
            _t("a", "Refund an order"),
            _t("b", "refund  AN order"),
            _t("c", "Send a mail to a user"),
            _t("d", "Send an email to the user"),
        ]
    )
    assert found == [
        LintFinding(
            code=LINT_DUPLICATE_DESCRIPTION,
            severity="error",
            tools=["a", "b"],
            similarity=1.0,
            message="a and b have the same description: the model cannot tell them apart",
        ),
        LintFinding(
            code=LINT_NEAR_TWIN,
            severity="warning",
            tools=["c", "d"],
            similarity=0.8696,
            message="c and d read alike (similarity 0.87): say when to use each",
        ),
    ]


def test_the_twin_threshold_is_inclusive_and_bounded() -> None:
    pair = [_t("c", "Send a mail to a user"), _t("d", "Send an email to the user")]
    assert [f.code for f in lint_tools(pair, twin_threshold=0.8696)] == [LINT_NEAR_TWIN]
    assert lint_tools(pair, twin_threshold=0.8697) == []
    assert lint_tools(pair, twin_threshold=1.0) == []
    for bad in (0.0, -0.1, 1.01):
        assert _refusal(lambda t: lint_tools(pair, twin_threshold=t), bad) == (
            "twin_threshold must be in (0, 1]",
            None,
            None,
        )


def test_schema_findings_exactly() -> None:
    schema = {
        "properties": {
            "typed": {"type": "string", "description": "ok"},
            "enum": {"enum": [1], "description": "ok"},
            "const": {"const": 1, "description": "ok"},
            "any": {"anyOf": [], "description": "ok"},
            "one": {"oneOf": [], "description": "ok"},
            "all": {"allOf": [], "description": "ok"},
            "ref": {"$ref": "#/x", "description": "ok"},
            "bare": {"description": "  "},
            "junk": 5,
        }
    }
    found = lint_tools([_t("s", "Schema test.", schema)])
    assert found == [
        LintFinding(
            code=LINT_SCHEMA_NO_TYPE,
            severity="warning",
            tools=["s"],
            message="s: the input schema has no 'type' (models guess the shape)",
        ),
        LintFinding(
            code=LINT_SCHEMA_NO_REQUIRED,
            severity="info",
            tools=["s"],
            message="s: the input schema lists no 'required' parameters",
        ),
        LintFinding(
            code=LINT_PARAM_NO_TYPE,
            severity="warning",
            tools=["s"],
            parameter="bare",
            message="s: parameter 'bare' has no type",
        ),
        LintFinding(
            code=LINT_PARAM_NO_DESCRIPTION,
            severity="info",
            tools=["s"],
            parameter="bare",
            message="s: parameter 'bare' has no description",
        ),
        LintFinding(
            code=LINT_PARAM_NO_TYPE,
            severity="warning",
            tools=["s"],
            parameter="junk",
            message="s: parameter 'junk' has no type",
        ),
        LintFinding(
            code=LINT_PARAM_NO_DESCRIPTION,
            severity="info",
            tools=["s"],
            parameter="junk",
            message="s: parameter 'junk' has no description",
        ),
    ]


def test_schemas_that_say_little_are_not_over_flagged() -> None:
    assert lint_tools([_t("e", "Empty.", {})]) == []
    assert lint_tools([_t("p", "No props.", {"type": "object", "properties": {}})]) == []
    assert lint_tools([_t("q", "Props not a map.", {"type": "object", "properties": ["a"]})]) == []
    required_str = {"type": "object", "properties": {"a": {"type": "string", "description": "A."}}, "required": "a"}
    assert [f.code for f in lint_tools([_t("r", "Required text.", required_str)])] == [LINT_SCHEMA_NO_REQUIRED]


def test_at_most_500_parameters_are_checked() -> None:
    schema = {"type": "object", "properties": {f"p{i}": {"type": "string"} for i in range(501)}, "required": []}
    found = lint_tools([_t("big", "Many parameters.", schema)])
    assert len(found) == 500
    assert found[-1].parameter == "p499"


def test_format_findings_one_line_each() -> None:
    found = lint_tools([_t("a", None), _t("A", "Fine here.")])
    assert format_findings(found) == (
        "LINT_NAME_COLLISION error [a, A]: tool names collide ignoring case: a, A\n"
        "LINT_MISSING_DESCRIPTION error [a]: a: no description (the model sees only the name)"
    )
