"""Checkpoints that cannot be forged: sealed with a key (HMAC-SHA256 over RFC 8785), checked first at every door;
without a key, structural checks refuse inconsistent checkpoints naming the field, before any model call."""

from __future__ import annotations

import hashlib
import hmac
from typing import Any

import pytest
import rfc8785
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pydantic import ValidationError

from agentfootprint import Agent, CheckpointSealError, RunCheckpointError, check_in_approved
from agentfootprint.agent import InvalidConversationError
from agentfootprint.audit import export_audit, verify_audit
from agentfootprint.errors import AgentFootprintError
from agentfootprint.flow import InvalidCheckpointError
from agentfootprint.providers import LLMRequest, mock

from ._integrity import Effects, ask_agent, chat_agent, refund_agent, roundtrip

KEY = "correct horse battery staple"


def expected_seal(checkpoint: dict[str, Any], key: bytes) -> str:
    body = {k: v for k, v in checkpoint.items() if k != "seal"}
    return hmac.new(key, rfc8785.dumps(body), hashlib.sha256).hexdigest()


async def crash_checkpoint(fx: Effects, **create: Any) -> dict[str, Any]:
    def down(req: LLMRequest) -> Any:
        raise TimeoutError("model down")

    agent = Agent.create(provider=mock(respond=down), model="m", **create).build()
    with pytest.raises(RunCheckpointError) as err:
        await agent.run("hello")
    return err.value.checkpoint


async def test_every_checkpoint_handed_out_carries_the_seal_over_its_rfc8785_form() -> None:
    fx = Effects()
    agent = ask_agent(fx, checkpoint_key=KEY)
    paused = await agent.run("refund")
    assert paused.checkpoint is not None
    assert paused.checkpoint["seal"] == expected_seal(paused.checkpoint, KEY.encode())
    conversation = agent.checkpoint()
    assert conversation is not None and conversation["seal"] == expected_seal(conversation, KEY.encode())
    crashed = await crash_checkpoint(fx, checkpoint_key=KEY)
    assert crashed["seal"] == expected_seal(crashed, KEY.encode())
    # a str key means its UTF-8 bytes
    same = ask_agent(fx, checkpoint_key=KEY.encode())
    assert (await same.resume(roundtrip(paused.checkpoint), "A")).status == "completed"


@pytest.mark.parametrize("problem", ["missing", "wrong", "other-key", "edited", "not-a-dict"])
async def test_every_door_refuses_a_bad_seal_before_any_model_call(problem: str) -> None:
    fx = Effects()
    agent = ask_agent(fx, checkpoint_key=KEY)
    paused = await agent.run("refund")
    conversation = await _completed_conversation(fx)
    crashed = await crash_checkpoint(fx, checkpoint_key=KEY)
    other = await ask_agent(fx, checkpoint_key="another key").run("refund")

    def spoil(cp: dict[str, Any], foreign: dict[str, Any]) -> Any:
        cp = roundtrip(cp)
        if problem == "missing":
            del cp["seal"]
        elif problem == "wrong":
            cp["seal"] = "0" * 64
        elif problem == "other-key":
            cp = roundtrip(foreign)
        elif problem == "edited":
            cp["run_id"] = cp["run_id"][::-1]
        else:
            return ["not", "a", "checkpoint"]
        return cp

    doors = [
        lambda a: a.resume(spoil(paused.checkpoint, other.checkpoint), "A"),
        lambda a: a.run("next", continue_from=spoil(conversation, other.checkpoint)),
        lambda a: a.resume_on_error(spoil(crashed, other.checkpoint)),
    ]
    for door in doors:
        resumer = ask_agent(fx, checkpoint_key=KEY)
        calls, lookups = fx.model_calls, len(fx.lookups)
        with pytest.raises(InvalidCheckpointError) as err:
            await door(resumer)
        assert isinstance(err.value, CheckpointSealError)
        assert err.value.field == "seal" and fx.model_calls == calls and len(fx.lookups) == lookups


async def _completed_conversation(fx: Effects) -> dict[str, Any]:
    agent = chat_agent(fx, checkpoint_key=KEY)
    await agent.run("hello")
    conversation = agent.checkpoint()
    assert conversation is not None
    return conversation


async def test_with_a_key_the_seal_is_checked_first() -> None:
    fx = Effects()
    paused = await ask_agent(fx).run("refund")  # unsealed, and made malformed
    broken = roundtrip(paused.checkpoint)
    broken["flow"] = "garbage"
    with pytest.raises(InvalidCheckpointError) as err:
        await ask_agent(fx, checkpoint_key=KEY).resume(broken, "A")
    assert err.value.field == "seal"
    with pytest.raises(InvalidCheckpointError) as err2:
        await ask_agent(fx).resume(broken, "A")
    assert err2.value.field == "flow"


async def test_an_agent_without_a_key_does_not_check_seals_and_follow_up_is_not_a_door() -> None:
    fx = Effects()
    sealed = await ask_agent(fx, checkpoint_key=KEY).run("refund")
    assert (await ask_agent(fx).resume(roundtrip(sealed.checkpoint), "A")).status == "completed"
    keyed = chat_agent(fx, checkpoint_key=KEY)
    await keyed.run("one")
    assert (await keyed.follow_up("two")).status == "completed"
    assert (await keyed.follow_up("three")).status == "completed"


async def test_the_audit_of_a_resumed_run_says_where_its_first_leg_came_from() -> None:
    fx = Effects()
    for key, sealed in ((KEY, True), (None, False)):
        paused = await ask_agent(fx, checkpoint_key=key).run("refund")
        resumer = ask_agent(fx, checkpoint_key=key)
        await resumer.resume(roundtrip(paused.checkpoint), "A")
        genesis = export_audit(resumer)[0]["payload"]
        origin = genesis["resumed_from"]
        assert origin["run_id"] == paused.run_id and origin["sealed"] is sealed
        assert len(origin["checkpoint_sha256"]) == 64 and origin["commits"] > 0


async def test_verify_audit_detects_a_cut_tail_of_an_unsigned_bundle() -> None:
    fx = Effects()
    agent = refund_agent(fx)
    await agent.run("refund")
    records = export_audit(agent)
    assert verify_audit(records).valid
    for cut in (1, 2, len(records) - 1):
        v = verify_audit(records[:cut])
        assert not v.valid and v.broken_at == cut and "cut tail" in (v.reason or "")


# ------------------------------------------------------------------------------------------ structural (no key)


def _state(cp: dict[str, Any]) -> dict[str, Any]:
    state: dict[str, Any] = cp["flow"]["namespaces"][""]["state"]
    return state


EDITS: list[tuple[str, Any, str]] = [
    ("run id", lambda cp: cp.update(run_id="r" * 32), "run_id"),
    ("flow run id", lambda cp: cp["flow"].update(run_id="r" * 32), "run_id"),
    ("pause kind", lambda cp: cp["flow"]["pause_data"].update(kind="check_in"), "flow.pause_data.kind"),
    ("unknown kind", lambda cp: cp["flow"]["pause_data"].update(kind="approve_all"), "flow.pause_data.kind"),
    (
        "answer to a call never made",
        lambda cp: cp["flow"]["pause_data"]["completed"][0]["message"].update(tool_call_id="zz"),
        "flow.pause_data.completed.0.message",
    ),
    ("state vs log", lambda cp: _state(cp).update(iteration=3), "flow.namespaces..state"),
    ("state vs log (history)", lambda cp: _state(cp)["history"].append({"role": "user", "content": "x"}), "flow"),
    ("args run id", lambda cp: cp["flow"]["args"].update(run_id="x"), "flow.namespaces..state.run.run_id"),
    ("identity", lambda cp: cp.update(identity={"principal": "mallory"}), "identity"),
    ("question", lambda cp: cp.update(question="Send all funds?"), "question"),
    ("tool name", lambda cp: cp.update(tool_name="lookup_order"), "tool_name"),
    ("request id", lambda cp: cp["flow"]["pause_data"].update(request_id="req_x"), "request_id"),
]


@pytest.mark.parametrize(("what", "edit", "field"), EDITS, ids=[e[0] for e in EDITS])
async def test_an_inconsistent_pause_checkpoint_is_refused_naming_the_field(what: str, edit: Any, field: str) -> None:
    fx = Effects()
    paused = await ask_agent(fx).run("refund")
    cp = roundtrip(paused.checkpoint)
    edit(cp)
    calls, lookups = fx.model_calls, len(fx.lookups)
    with pytest.raises(InvalidCheckpointError) as err:
        await ask_agent(fx).resume(cp, "A")
    assert err.value.field.startswith(field), err.value.field
    assert fx.model_calls == calls and len(fx.lookups) == lookups
    assert "mallory" not in str(err.value) and "funds" not in str(err.value)


async def test_a_check_in_checkpoint_edited_to_an_ask_is_refused() -> None:
    fx = Effects()
    paused = await refund_agent(fx).run("refund")
    cp = roundtrip(paused.checkpoint)
    cp["flow"]["pause_data"]["kind"] = "ask_human"  # "answer" the consent gate with free text
    with pytest.raises(InvalidCheckpointError) as err:
        await refund_agent(fx).resume(cp, "yes")
    assert err.value.field == "flow.pause_data.kind" and fx.refunds == []
    assert (await refund_agent(fx).resume(roundtrip(paused.checkpoint), check_in_approved(paused))).status


async def test_size_caps_are_checked_before_any_model_call() -> None:
    fx = Effects()
    agent = chat_agent(fx)
    await agent.run("hi")
    conversation = agent.checkpoint()
    assert conversation is not None
    conversation["history"] = [{"role": "user", "content": "x"}] * 100_001
    calls = fx.model_calls
    with pytest.raises(InvalidConversationError) as err:
        await chat_agent(fx).run("next", continue_from=conversation)
    assert err.value.field == "history" and fx.model_calls == calls
    deep: Any = "x"
    for _ in range(300):
        deep = [deep]
    conversation["history"] = [{"role": "user", "content": "x", "tool_calls": deep}]
    with pytest.raises(InvalidConversationError) as err2:
        await chat_agent(fx).run("next", continue_from=conversation)
    assert err2.value.field == "checkpoint" and fx.model_calls == calls


async def test_a_conversation_at_the_cap_still_completes_and_its_own_checkpoint_is_refused_by_name() -> None:
    fx = Effects()
    agent = chat_agent(fx)
    await agent.run("hi")
    conversation = agent.checkpoint()
    assert conversation is not None
    conversation["history"] = [{"role": "user", "content": "x"}] * 99_999
    grown = chat_agent(fx)
    done = await grown.run("next", continue_from=conversation)  # 100,001 messages now: no raw pydantic error
    assert done.status == "completed"
    with pytest.raises(InvalidConversationError) as err:
        await chat_agent(fx).run("again", continue_from=grown.checkpoint())
    assert err.value.field == "history"


async def test_a_crash_never_quotes_pydantic_values() -> None:
    from agentfootprint import define_tool
    from agentfootprint.providers import Message

    def bad(args: dict[str, Any], ctx: Any) -> str:
        Message.model_validate({"role": "robot", "content": "SENTINEL-VALUE"})
        return "x"

    class Exploding:
        name = "exploding"

        async def complete(self, request: LLMRequest) -> Any:
            Message.model_validate({"role": "robot", "content": "SENTINEL-VALUE"})

    agent = Agent.create(provider=Exploding(), model="m").build()  # type: ignore[arg-type]
    with pytest.raises(RunCheckpointError) as err:
        await agent.run("go")
    assert "SENTINEL" not in str(err.value) and "input_value" not in str(err.value)
    assert err.value.code == "ERR_RUN_DATA"
    assert define_tool(name="t", description="d", input_schema={"type": "object"}, execute=bad)


# ------------------------------------------------------------------------------------------ hostile input at doors

JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=True) | st.text(max_size=20),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=12), inner, max_size=4),
    max_leaves=20,
)
KEYS = st.sampled_from(
    ["format", "version", "run_id", "flow", "history", "identity", "question", "tool_call_id", "tool_name", "seal"]
)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    cp=st.dictionaries(KEYS, JSON, max_size=8) | JSON,
    answer=JSON,
    options=st.dictionaries(
        st.sampled_from(["identity", "session_id", "redact", "env", "correlation_id", "timeout"]), JSON, max_size=3
    ),
)
async def test_no_door_lets_a_raw_validation_error_out(cp: Any, answer: Any, options: dict[str, Any]) -> None:
    fx = Effects()
    doors = [
        lambda a: a.resume(cp, answer, **options),
        lambda a: a.run("next", continue_from=cp, **options),
        lambda a: a.resume_on_error(cp, **options),
        lambda a: a.run({"message": "x", "identity": answer}, **options),
    ]
    for key in (None, KEY):
        for door in doors:
            try:
                await door(chat_agent(fx, checkpoint_key=key))
            except ValidationError as err:  # pragma: no cover - the failure this test exists to catch
                raise AssertionError(f"raw pydantic error escaped: {type(err).__name__}") from None
            except AgentFootprintError:
                pass
            except TypeError as err:  # an unknown keyword is Python's own refusal, not a door's
                assert "unexpected keyword" in str(err)
    assert fx.lookups == []


async def test_a_decision_evidence_edited_into_garbage_is_refused_not_crashed() -> None:
    fx = Effects()
    paused = await ask_agent(fx).run("refund")
    for garbage in ([["x"]], [{"k": 1}], "tool-calls", [None], []):
        cp = roundtrip(paused.checkpoint)
        route = next(c for c in cp["flow"]["commit_log"] if c["stage_id"] == "route")
        route["decision"]["chosen"] = garbage
        with pytest.raises(InvalidCheckpointError) as err:
            await ask_agent(fx).resume(cp, "A")
        assert err.value.field.endswith(".decision") and fx.model_calls == 1
    cp = roundtrip(paused.checkpoint)
    del cp["request_id"]
    with pytest.raises(InvalidCheckpointError) as err2:
        await ask_agent(fx).resume(cp, "A")
    assert err2.value.field == "request_id"
