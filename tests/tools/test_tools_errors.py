"""Tool errors: each class's stable code and kinds, and the messages that never carry a value."""

from __future__ import annotations

import pytest

from agentfootprint.errors import AgentFootprintError
from agentfootprint.tools import _codes
from agentfootprint.tools.errors import (
    DuplicateToolError,
    InvalidToolDefinitionError,
    PauseOutsideAgentError,
    RunStoppingError,
    ToolArgumentsError,
    ToolError,
)
from agentfootprint.tools.validation import ArgIssue


def test_every_code_constant_spells_its_own_name() -> None:
    names = sorted(n for n in vars(_codes) if n.startswith("ERR_"))
    assert names == [
        "ERR_CHECK_IN_DECLINED",
        "ERR_INVALID_TOOL_ARGS",
        "ERR_PERMISSION_DENIED",
        "ERR_PERMISSION_HALT",
        "ERR_TOOL_RAISED",
        "ERR_TOOL_RESULT_UNSERIALISABLE",
        "ERR_UNKNOWN_TOOL",
    ]
    assert all(getattr(_codes, n) == n for n in names)


@pytest.mark.parametrize(
    ("cls", "code", "bases"),
    [
        (ToolError, "ERR_TOOL", (AgentFootprintError,)),
        (InvalidToolDefinitionError, "ERR_INVALID_TOOL_DEFINITION", (ToolError, ValueError)),
        (DuplicateToolError, "ERR_DUPLICATE_TOOL", (ToolError, ValueError)),
        (ToolArgumentsError, "ERR_INVALID_TOOL_ARGS", (ToolError, ValueError)),
        (PauseOutsideAgentError, "ERR_PAUSE_OUTSIDE_AGENT", (ToolError, RuntimeError)),
        (RunStoppingError, "ERR_RUN_STOPPING", (ToolError, RuntimeError)),
    ],
)
def test_each_error_has_its_code_and_kinds(cls: type[ToolError], code: str, bases: tuple[type, ...]) -> None:
    assert cls.code == code
    assert all(issubclass(cls, base) for base in bases)


def test_messages_name_the_problem_not_the_value() -> None:
    dup = DuplicateToolError("lookup")
    assert (str(dup), dup.name, dup.code) == ("duplicate tool name: 'lookup' is registered twice", "lookup", dup.code)
    issues = [
        ArgIssue(path="a", expected="integer", problem="expected an integer"),
        ArgIssue(path="", expected="object", problem="expected an object"),
    ]
    err = ToolArgumentsError(issues)
    assert str(err) == "a: expected an integer; (arguments): expected an object" and err.issues == issues
    assert err.code == "ERR_INVALID_TOOL_ARGS"
    assert str(ToolArgumentsError([])) == "invalid arguments"
