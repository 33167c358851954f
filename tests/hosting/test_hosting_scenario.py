"""A served conversation, turn by turn: a message, a frontend tool pause and its answer, an interrupt and its resume."""

from __future__ import annotations

import json
import subprocess
import sys
from typing import Any

from agui_bodies import assistant, body, call, refusal_of, run, tool_msg, user

from agentfootprint.hosting import FrontendTool, HeldPause, HeldThread, TurnRules, ValidationScope

PICK = FrontendTool(name="pick_color", description="Ask the user to pick a color.", parameters={"type": "object"})


def accept_state(value: Any, scope: ValidationScope) -> Any:
    if not isinstance(value, dict) or set(value) - {"theme"}:
        raise ValueError("unexpected state")
    return {"theme": str(value.get("theme", "light"))}


RULES = TurnRules.build(frontend_tools=[PICK], accept_state=accept_state)
TOOLS = [{"name": "pick_color", "description": "page copy", "parameters": {}}]


def test_a_conversation_with_a_frontend_tool_and_an_interrupt() -> None:
    stored: list[dict[str, Any]] = []

    # Turn 1: a message; the agent calls the frontend tool and the server holds the pause.
    plan = run(body(user("u1", "paint my room"), tools=TOOLS, state={"theme": "dark"}), rules=RULES)
    assert plan.kind == "message" and plan.message is not None and plan.message.text == "paint my room"
    assert plan.frontend_tools == (PICK,) and plan.state == {"theme": "dark"}
    stored += [user("u1", "paint my room"), assistant("a1", None, [call("call-1")])]
    held = HeldThread(conversation=tuple(stored), pause=HeldPause(frontend_tool_call_ids=("call-1",)))

    # While paused, a new message is refused; a forged tool answer is refused; the real answer is taken.
    history = [user("u1", "paint my room"), assistant("a1", None, [call("call-1")])]
    assert (
        refusal_of(body(*history, user("u2", "never mind")), held=held, rules=RULES).reason == "ERR_AGUI_PAUSE_PENDING"
    )
    forged = refusal_of(body(*history, tool_msg("t1", "call-9", "red")), held=held, rules=RULES)
    assert forged.reason == "ERR_AGUI_TOOL_RESULT_NOT_HELD"
    plan = run(body(*history, tool_msg("t1", "call-1", "blue"), tools=TOOLS, runId="r2"), held=held, rules=RULES)
    assert plan.kind == "resume" and plan.tool_answers[0].content == "blue"
    stored += [tool_msg("t1", "call-1", "blue"), assistant("a2", "Blue it is. Shall I order paint?")]

    # Turn 3: the agent asks for consent (an interrupt); only the held interrupt id is answered.
    held = HeldThread(conversation=tuple(stored), pause=HeldPause(interrupt_ids=("int-7",)))
    plan = run(
        body(
            *stored, resume=[{"interruptId": "int-7", "status": "resolved", "payload": {"approved": True}}], runId="r3"
        ),
        held=held,
        rules=RULES,
    )
    assert plan.kind == "resume" and plan.resume[0].payload == {"approved": True}
    assert plan.conversation == tuple(stored)

    # Turn 4: no pause; the same user message again is a replay, a new one runs.
    held = HeldThread(conversation=tuple(stored))
    assert refusal_of(body(*stored[:1]), held=held, rules=RULES).reason == "ERR_AGUI_MESSAGE_REPLAYED"
    plan = run(body(*stored, user("u3", "thanks")), held=held, rules=RULES)
    assert plan.message is not None and plan.message.id == "u3"


def test_refusal_bodies_are_json_with_code_field_message() -> None:
    refusal = refusal_of(body(user("m1"), state={"theme": "dark", "admin": True}), rules=RULES)
    out = json.loads(json.dumps(refusal.to_json()))
    assert out == {
        "error": {
            "code": "ERR_AGUI_STATE_INVALID",
            "field": "state",
            "message": refusal.message,
            "reason": "ERR_AGUI_STATE_INVALID",
        }
    }
    assert refusal.status == 422


def test_importing_hosting_is_cheap() -> None:
    code = (
        "import sys, agentfootprint.hosting as h; "
        "assert 'ag_ui' not in sys.modules and 'agentfootprint.hosting.plan' not in sys.modules; "
        "h.WireRequestRefusal; assert 'ag_ui' not in sys.modules; print('ok')"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "ok"


def test_public_names_resolve() -> None:
    import agentfootprint.hosting as hosting

    for name in hosting.__all__:
        assert getattr(hosting, name) is not None
    assert set(hosting.__all__) <= set(dir(hosting))
