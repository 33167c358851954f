"""Answer honesty as extensions of the Agent: check-in receipts and record reads (built in), the evidence gate
and self-explain (opt-in through ``AgentBuilder.names_and_numbers_from_evidence`` / ``.self_explain``)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any, Literal

from agentfootprint.agent import AgentBuildError, Extension, RunContext, RunOutcome
from agentfootprint.flow import FlowSnapshot
from agentfootprint.honesty.evidence import POSTURES, Posture, UnsupportedValues, evidence_gate, refusal_of, verdict_of
from agentfootprint.tools import Tool

if TYPE_CHECKING:
    from agentfootprint.agent import Agent
    from agentfootprint.explain.scoring import Scorer
    from agentfootprint.honesty.assessment import Assessment
    from agentfootprint.honesty.chat import Explanation, RecordedChat
    from agentfootprint.honesty.checkin import CheckInPack

_MAX_ALLOW = 1000
_SNAPSHOT = "snapshot"


def _answered(snapshot: FlowSnapshot | None) -> bool:
    if snapshot is None or not snapshot.commit_log:
        return False
    return any(c.namespace == "" and c.applied and "answer" in c.keys_written() for c in snapshot.commit_log)


class Honesty(Extension):
    """Built into every agent: a check-in pause carries its evidence pack; the record answers "why" and
    "how sure" (``assessment``, ``why``, ``chat``, ``pending_check_in``) without a model call."""

    name = "honesty"

    def __init__(self, *, evidence: Literal["standard", "minimal"] = "standard", scorer: Scorer | None = None) -> None:
        """Check-in defaults (no ``.check_in()`` call needed): ``standard`` evidence ranked by the lexical scorer."""
        if evidence not in ("standard", "minimal"):
            raise AgentBuildError("check_in evidence must be 'standard' or 'minimal'")
        name = getattr(scorer, "name", None)
        if scorer is not None and not (callable(getattr(scorer, "score", None)) and isinstance(name, str) and name):
            raise AgentBuildError("check_in scorer must have a name and score(source, call) -> float")
        self.evidence: Literal["standard", "minimal"] = evidence
        self._scorer = scorer

    @property
    def scorer(self) -> Scorer:
        """The drivers' ranker: the one given to ``.check_in(scorer=...)``, else lexical (loaded on first use)."""
        if self._scorer is None:
            from agentfootprint.explain.scoring import LexicalScorer

            self._scorer = LexicalScorer()
        return self._scorer

    async def after_run(self, ctx: RunContext, outcome: RunOutcome) -> None:
        if outcome.status == "paused":
            from agentfootprint.honesty.checkin import attach_check_in_pack

            attach_check_in_pack(outcome.flow, evidence=self.evidence, scorer=self.scorer)

    def assessment(self, agent: Agent, output_schema: Any) -> Assessment | None:
        """``assess`` of the last record; None before any run, after a failed run or a refused answer."""
        from agentfootprint.honesty.assessment import assess

        snapshot = agent.last_snapshot()
        if snapshot is None:
            return None
        verdict = verdict_of(snapshot.state)
        last = snapshot.commit_log[-1] if snapshot.commit_log else None
        if (verdict is not None and verdict.refused) or (last is not None and last.failed):
            return None
        return assess(snapshot, output_schema=output_schema)

    def pending_check_in(self, agent: Agent) -> CheckInPack | None:
        flow = agent.last_flow()
        if agent.pending() is None or flow is None or flow.checkpoint is None:
            return None
        from agentfootprint.honesty.checkin import check_in_pack_of

        return check_in_pack_of(flow.checkpoint)

    def can_explain(self, agent: Agent) -> bool:
        """True when self-explain has a completed answer bound (at the end of a run); always False for an agent
        built without ``.self_explain()``."""
        if agent.extension(SelfExplain.name) is None:
            return False
        return _answered(agent.extension_state(SelfExplain.name).get(_SNAPSHOT))

    def why(self, agent: Agent, question: str | None) -> Explanation:
        from agentfootprint.honesty.chat import explain_answer

        return explain_answer(agent, question)

    def chat(self, agent: Agent) -> RecordedChat:
        from agentfootprint.agent import Agent
        from agentfootprint.honesty.chat import recorded_chat

        config = agent.config
        return recorded_chat(lambda: Agent(config))


class EvidenceGate(Extension):
    """Names and numbers from evidence: every value the final answer states is looked for in what the run read;
    ``assist`` flags, ``guard`` asks the model once to correct, ``rails`` refuses (``UnsupportedValuesError``)."""

    name = "evidence_gate"

    def __init__(self, posture: Literal["assist", "guard", "rails"] = "assist", allow: Iterable[str] = ()) -> None:
        if posture not in POSTURES:
            raise AgentBuildError(f"names_and_numbers_from_evidence posture must be one of {', '.join(POSTURES)}")
        values = tuple(allow)
        if len(values) > _MAX_ALLOW or not all(isinstance(v, str) and v.strip() for v in values):
            raise AgentBuildError(f"allow must be at most {_MAX_ALLOW} non-empty strings")
        self.posture: Posture = posture
        self.allow: tuple[str, ...] = values

    async def on_answer(self, ctx: RunContext, answer: str) -> str:
        return await evidence_gate(ctx, self.posture, self.allow, answer)

    async def after_run(self, ctx: RunContext, outcome: RunOutcome) -> None:
        if outcome.status != "completed":
            return
        refusal = refusal_of(outcome.state, ctx.redactor.scrub_text if ctx.redactor.active else None)
        if refusal is not None:
            raise refusal

    def result(self, ctx: RunContext, outcome: RunOutcome) -> Any:
        verdict = verdict_of(outcome.state)
        return verdict.model_dump(mode="json") if verdict is not None else None

    def unsupported_values(self, agent: Agent) -> UnsupportedValues | None:
        """The verdict in the last served record when it flagged values, else None."""
        snapshot = agent.last_snapshot()
        verdict = verdict_of(snapshot.state) if snapshot is not None else None
        return verdict if verdict is not None and verdict.values else None


class SelfExplain(Extension):
    """Bounded trace tools over the agent's previous completed run (bound at the END of each run, never the one
    in flight), so "why did you say X?" is answered from the record."""

    name = "self_explain"

    async def provide_tools(self, ctx: RunContext) -> Sequence[Tool]:
        tools = ctx.state.get("tools")
        if tools is None:
            from agentfootprint.honesty.self_explain import self_explain_tools

            bound = ctx.agent_state
            tools = ctx.state["tools"] = self_explain_tools(lambda: bound.get(_SNAPSHOT))
        return list(tools)

    async def after_run(self, ctx: RunContext, outcome: RunOutcome) -> None:
        if outcome.status == "completed":
            ctx.agent_state[_SNAPSHOT] = outcome.snapshot


__all__ = ["EvidenceGate", "Honesty", "SelfExplain"]
