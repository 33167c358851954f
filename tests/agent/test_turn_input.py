"""TurnInput: the typed input a turn's seed stage takes, built once from what ``run()`` resolved; its engine args
are the recorded JSON form, and the seed reads them back typed."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from agentfootprint import Agent, Identity
from agentfootprint.agent import ConversationCheckpoint
from agentfootprint.agent._run_input import TurnInput
from agentfootprint.flow import freeze
from agentfootprint.providers import mock

PRIOR: list[dict[str, Any]] = [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "hello"}]


def test_a_plain_turn_records_exactly_the_args_the_seed_reads() -> None:
    ti = TurnInput.for_turn("refund?", PRIOR, run_id="r1", session_id="s1", identity=Identity(principal="u1"), seed=3)
    assert ti.args() == {
        "message": "refund?",
        "history": PRIOR,
        "history_complete": False,
        "run_id": "r1",
        "session_id": "s1",
        "identity": {"principal": "u1"},
    }
    back = TurnInput.from_args(freeze(ti.args()))
    assert back.opening_history("refund?") == [*PRIOR, {"role": "user", "content": "refund?"}]
    assert (back.message, back.run_id, back.session_id, back.identity) == ("refund?", "r1", "s1", {"principal": "u1"})
    assert back.args() == ti.args()


def test_the_record_keeps_the_prior_conversation_the_caller_and_the_seed() -> None:
    caller = Identity(principal="u1", tenant="t1")
    ti = TurnInput.for_turn("q", PRIOR, run_id="r", session_id=None, identity=caller, seed=7)
    assert ti.run_input() == {"message": "q", "history": PRIOR, "identity": caller, "session_id": None, "seed": 7}
    nobody = TurnInput.for_turn("q", [], run_id="r", session_id=None, identity=None)
    assert nobody.run_input()["identity"] is None and nobody.args()["identity"] is None


def test_a_replayed_history_is_taken_as_it_stands() -> None:
    replay = [*PRIOR, {"role": "user", "content": "again"}]
    ti = TurnInput.for_turn("again", PRIOR, run_id="r", session_id=None, identity=None, replay=replay)
    assert ti.args()["history"] == replay and ti.args()["history_complete"] is True
    back = TurnInput.from_args(ti.args())
    assert back.opening_history("rewritten by a hook") == replay  # the stored history is not appended to
    assert ti.run_input()["history"] == PRIOR


def test_a_continued_conversation_carries_its_folds_window_and_the_passed_time() -> None:
    conv = ConversationCheckpoint.model_validate(
        {
            "run_id": "r0",
            "history": PRIOR,
            "folded": [{"summary_index": 0, "messages": 2}],
            "window_measure": {"chars": 120},
        }
    )
    time = {"now": "2026-01-01T00:00:00+00:00", "zone": "UTC"}
    ti = TurnInput.for_turn("q", PRIOR, run_id="r", session_id=None, identity=None, time=time, conversation=conv)
    args = ti.args()
    assert args["folded"] == conv.folded and args["window_measure"] == {"chars": 120} and args["time"] == time
    back = TurnInput.from_args(args)
    assert (back.folded, back.window_measure, back.time) == (conv.folded, {"chars": 120}, time)


def test_unset_optional_parts_stay_out_of_the_recorded_args() -> None:
    empty = ConversationCheckpoint.model_validate({"run_id": "r0", "history": PRIOR})
    ti = TurnInput.for_turn("q", [], run_id="r", session_id=None, identity=Identity(), conversation=empty)
    assert set(ti.args()) == {"message", "history", "history_complete", "run_id", "session_id", "identity"}
    assert ti.args()["identity"] is None  # an identity with nothing set is recorded as no caller


async def test_the_seed_reads_the_turn_input_an_agent_run_records(monkeypatch: pytest.MonkeyPatch) -> None:
    read: list[TurnInput] = []
    from_args = TurnInput.from_args

    def reading(args: Any) -> TurnInput:
        read.append(from_args(args))
        return read[-1]

    monkeypatch.setattr(TurnInput, "from_args", staticmethod(reading))
    agent = Agent.create(provider=mock(reply="ok")).build()
    result = await agent.run({"message": "hello"}, identity={"principal": "u9"})
    snap = agent.last_snapshot()
    assert result.answer == "ok" and snap is not None
    assert [(t.message, t.identity, t.replay) for t in read] == [("hello", {"principal": "u9"}, None)]
    assert snap.state["history"][0] == {"role": "user", "content": "hello"}
    assert snap.state["run"]["identity"] == {"principal": "u9"}


_json = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=10),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3),
    max_leaves=6,
)
_message = st.fixed_dictionaries({"role": st.sampled_from(["user", "assistant"]), "content": st.text(max_size=20)})


@given(
    message=st.text(min_size=1, max_size=30),
    prior=st.lists(_message, max_size=4),
    replay=st.none() | st.lists(_message, min_size=1, max_size=4),
    session=st.none() | st.text(max_size=10),
    user=st.none() | st.text(min_size=1, max_size=10),
    time=st.none() | st.dictionaries(st.sampled_from(["now", "zone"]), _json, max_size=2),
)
def test_recorded_args_read_back_to_the_same_args_after_a_json_round_trip(
    message: str,
    prior: list[dict[str, Any]],
    replay: list[dict[str, Any]] | None,
    session: str | None,
    user: str | None,
    time: dict[str, Any] | None,
) -> None:
    ident = Identity(principal=user) if user is not None else None
    ti = TurnInput.for_turn(message, prior, run_id="r", session_id=session, identity=ident, replay=replay, time=time)
    stored = json.loads(json.dumps(ti.args()))  # what a checkpoint keeps
    back = TurnInput.from_args(freeze(stored))
    assert json.loads(json.dumps(back.args())) == stored
    expected = replay if replay is not None else [*prior, {"role": "user", "content": message}]
    assert back.opening_history(message) == expected
