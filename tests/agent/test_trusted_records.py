"""Conversation checkpoints and run inputs built by a planned constructor equal pydantic's ``model_construct``."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from agentfootprint.agent import _conversation as agent_module
from agentfootprint.agent import _run_input
from agentfootprint.agent.models import ConversationCheckpoint
from agentfootprint.agent.turn import Turn
from agentfootprint.flow import flow_chart


def _same(a: Any, b: Any) -> None:
    assert a == b
    assert list(a.__dict__) == list(b.__dict__)
    assert a.model_fields_set == b.model_fields_set
    assert a.model_dump(mode="json") == b.model_dump(mode="json")


@settings(max_examples=40, deadline=None)
@given(
    st.text(max_size=5),
    st.lists(st.dictionaries(st.sampled_from(["role", "content"]), st.text(max_size=3)), max_size=3),
    st.integers(min_value=0, max_value=9),
    st.one_of(st.none(), st.dictionaries(st.text(max_size=3), st.integers(), max_size=2)),
)
def test_conversation_checkpoint_is_what_model_construct_builds(
    run_id: str, history: list[dict[str, Any]], iterations: int, extensions: dict[str, Any] | None
) -> None:
    fields = {
        "run_id": run_id,
        "history": history,
        "identity": None,
        "last_completed_iteration": iterations,
        "original_input": "hi",
        "extensions": extensions,
        "folded": None,
        "window_measure": None,
        "agent": None,
        "seal": None,
    }
    built = agent_module._conversation_checkpoint(**fields)
    _same(built, ConversationCheckpoint.model_construct(**fields))
    assert built.to_json() == ConversationCheckpoint.model_construct(**fields).to_json()


def test_run_input_is_what_model_construct_builds() -> None:
    _same(_run_input._run_input(message="m", extra={}), _run_input.RunInput.model_construct(message="m", extra={}))
    got = _run_input.normalize_run_input({"message": "m", "k": 1}, "Agent.run")
    _same(got, _run_input.RunInput.model_construct(message="m", extra={"k": 1}))


async def test_turn_fields_read_through_one_lookup() -> None:
    seen: dict[str, Any] = {}

    def stage(scope: Any) -> None:
        turn = Turn(scope)
        seen["iteration"] = turn.iteration
        seen["system_prompt"] = turn.system_prompt  # optional: its default when absent
        seen["cost_total"] = turn.cost_total
        try:
            turn.answer  # noqa: B018 - a required field that is absent
        except KeyError as exc:
            seen["missing"] = exc.args
        turn.iteration = 3

    r = await flow_chart("S", stage, id="s").build().run({"iteration": 2})
    assert seen == {"iteration": 2, "system_prompt": "", "cost_total": 0.0, "missing": ("answer",)}
    assert r.commit_log[0].reads == {"iteration": None, "system_prompt": None, "cost_total": None, "answer": None}
    assert [(w.path, w.value) for w in r.commit_log[0].writes] == [("iteration", 3)]
