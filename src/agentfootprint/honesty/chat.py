"""Answers about answers, from the recording only: "why did you say X?", recorded chats, self-explain trace tools."""

from __future__ import annotations

import copy
import json
import re
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel, Field

from agentfootprint._text import one_line
from agentfootprint.explain.backtrack import Backtrack, BacktrackError, backtrack
from agentfootprint.explain.scoring import LexicalScorer, answer_similarity
from agentfootprint.flow import FlowSnapshot

if TYPE_CHECKING:
    from agentfootprint.agent import Agent, RunResult

EXPLAIN_NOTE = "Ranked by text overlap with the claim (a proxy, from the recording, no model call); not a causal claim."
_SENTENCE = re.compile(r"[^.!?\n]+[.!?]?")
_QUOTED = re.compile(r"[\"“”'‘’«»]([^\"“”'‘’«»]{2,400})[\"“”'‘’«»]")
SIMILARITY_THRESHOLD = 0.8


class ExplainedSource(BaseModel):
    """A recorded source behind a claim, with its overlap score and where it was born."""

    kind: str
    id: str
    score: float
    rank: int
    excerpt: str
    born: str | None = None


class Explanation(BaseModel):
    """Why the answer said ``claim``: the recorded sources ranked by overlap, and a plain-words reply."""

    question: str | None
    claim: str
    answer: str | None
    run_id: str | None
    trigger: str
    sources: list[ExplainedSource] = Field(default_factory=list)
    text: str
    scorer: str = "lexical"
    note: str = EXPLAIN_NOTE


def _claim(answer: str, question: str | None) -> str:
    if not question:
        return answer
    quoted = _QUOTED.findall(question)
    if quoted:
        return str(max(quoted, key=len))
    sentences = [s.strip() for s in _SENTENCE.findall(answer) if s.strip()]
    if not sentences:
        return answer
    scorer = LexicalScorer()
    scored = [(scorer.score(question, s), -i, s) for i, s in enumerate(sentences)]
    best = max(scored)
    return str(best[2]) if best[0] > 0 else answer


def explain_answer(record: Any, question: str | None = None, *, top: int = 3) -> Explanation:
    """Answer "why did you say X?" from a recording (an Agent, snapshot or Recording): backtrack, then rank."""
    bt = backtrack(record)
    answer = bt.answer or ""
    claim = _claim(answer, question)
    scorer = LexicalScorer()
    candidates = [
        s for s in bt.sources if s.slot != "tools" and not (s.kind == "message" and s.id.startswith("assistant"))
    ]
    scored = [(s, scorer.score(s.text, claim)) for s in candidates]
    scored = [p for p in scored if p[1] > 0]
    scored.sort(key=lambda p: (-p[1], p[0].position))
    sources = [
        ExplainedSource(
            kind=s.kind,
            id=s.id,
            score=score,
            rank=i + 1,
            excerpt=one_line(s.text, 160),
            born=next((h.detail for h in s.hops if h.kind == "born"), None),
        )
        for i, (s, score) in enumerate(scored[: max(1, top)])
    ]
    if sources:
        lines = [f"I said “{one_line(claim, 200)}” on the strength of what I had read:"]
        lines += [f"{s.rank}. {s.kind} '{s.id}' — “{s.excerpt}” (overlap {s.score:.2f})" for s in sources]
        lines.append("These are ranked by text overlap; rerunning without a source is what tests cause.")
        text = "\n".join(lines)
    else:
        text = f"Nothing I read overlaps “{one_line(claim, 200)}”: the recording does not show where it came from."
    return Explanation(
        question=question,
        claim=claim,
        answer=bt.answer,
        run_id=bt.run_id,
        trigger=bt.trigger,
        sources=sources,
        text=text,
    )


# -- recorded chat --------------------------------------------------------------------------------------------


class ChatTurn(BaseModel):
    """One frozen turn: what was sent, the exact conversation it continued, the reply, and its served record."""

    k: int
    message: str
    status: str
    answer: str | None
    run_id: str
    continue_from: dict[str, Any] | None = None
    conversation_after: dict[str, Any] | None = None
    snapshot: FlowSnapshot | None = None
    ignored: list[str] = Field(default_factory=list)


class TurnRerun(BaseModel):
    """Turn ``k`` re-run on the same recorded history without ``ignore``; the verdict needs the baseline."""

    k: int
    ignore: list[str]
    original_answer: str | None
    answer: str | None
    changed: bool
    baseline_answer: str | None = None
    baseline_changed: bool | None = None
    verdict: Literal["causal", "no-effect", "inconclusive", "correlational"]
    turn: ChatTurn


def _changed(a: str | None, b: str | None) -> bool:
    return answer_similarity(a or "", b or "") < SIMILARITY_THRESHOLD


class RecordedChat:
    """A chat that freezes each turn's evidence: ``send``, ``reason(k)``, ``why``, ``rerun_turn``, ``fork``."""

    def __init__(
        self,
        make_agent: Callable[[], Agent],
        *,
        turns: Sequence[ChatTurn] = (),
        ignore: Sequence[str] = (),
        parent: tuple[int, str | None] | None = None,
    ) -> None:
        self._make_agent = make_agent
        self._ignore = list(ignore)
        self._agent: Agent | None = None
        self._turns: list[ChatTurn] = [t.model_copy(deep=True) for t in turns]
        self.explanations: list[Explanation] = []
        self.parent = parent

    def _fresh(self, ignore: Sequence[str] = ()) -> Agent:
        agent = self._make_agent()
        drop = [*self._ignore, *ignore]
        return agent.without(*drop) if drop else agent

    @property
    def turns(self) -> list[ChatTurn]:
        return [t.model_copy(deep=True) for t in self._turns]

    def _turn(self, k: int) -> ChatTurn:
        if not isinstance(k, int) or not 0 <= k < len(self._turns):
            raise IndexError(f"no turn {k!r}: this chat has {len(self._turns)} turn(s)")
        return self._turns[k]

    async def send(self, message: str, **kwargs: Any) -> RunResult:
        """Send one message; the turn is frozen with the exact conversation it continued and its record."""
        if self._agent is None:
            self._agent = self._fresh()
        previous = self._turns[-1].conversation_after if self._turns else None
        continue_from = copy.deepcopy(previous) if previous is not None else None
        result = await self._agent.run(message, continue_from=continue_from, **kwargs)
        self._turns.append(
            ChatTurn(
                k=len(self._turns),
                message=message,
                status=result.status,
                answer=result.answer,
                run_id=result.run_id,
                continue_from=continue_from,
                conversation_after=result.recorded().checkpoint() if result.status == "completed" else None,
                snapshot=result.last_snapshot(),
                ignored=list(self._ignore),
            )
        )
        return result

    def reason(self, k: int) -> Backtrack:
        """The backtrack of reply ``k``, from its frozen record."""
        turn = self._turn(k)
        if turn.snapshot is None:
            raise BacktrackError(f"turn {k} has no record")
        return backtrack(turn.snapshot)

    def why(self, k: int, question: str | None = None) -> Explanation:
        """Answer "why did you say X?" about reply ``k`` from its record; the explanation is kept as evidence."""
        turn = self._turn(k)
        if turn.snapshot is None:
            raise BacktrackError(f"turn {k} has no record")
        explanation = explain_answer(turn.snapshot, question)
        self.explanations.append(explanation)
        return explanation

    async def _replay(self, turn: ChatTurn, ignore: Sequence[str], seed: int | None) -> tuple[Agent, RunResult]:
        agent = self._fresh(ignore)
        continue_from = copy.deepcopy(turn.continue_from) if turn.continue_from is not None else None
        return agent, await agent.run(turn.message, continue_from=continue_from, seed=seed)

    async def rerun_turn(
        self, k: int, ignore: Sequence[str] = (), *, check_baseline: bool = True, seed: int | None = None
    ) -> TurnRerun:
        """Re-run turn ``k`` on its recorded history without ``ignore``; a baseline rerun makes the verdict causal."""
        turn = self._turn(k)
        ignored = [str(i) for i in ignore]
        _, result = await self._replay(turn, ignored, seed)
        changed = _changed(turn.answer, result.answer)
        baseline_answer: str | None = None
        baseline_changed: bool | None = None
        if check_baseline:
            _, base = await self._replay(turn, (), seed)
            baseline_answer = base.answer
            baseline_changed = _changed(turn.answer, base.answer)
        if baseline_changed is None:
            verdict: Literal["causal", "no-effect", "inconclusive", "correlational"] = (
                "correlational" if changed else "no-effect"
            )
        elif baseline_changed:
            verdict = "inconclusive"
        else:
            verdict = "causal" if changed else "no-effect"
        rerun_turn = ChatTurn(
            k=k,
            message=turn.message,
            status=result.status,
            answer=result.answer,
            run_id=result.run_id,
            continue_from=copy.deepcopy(turn.continue_from),
            conversation_after=result.recorded().checkpoint() if result.status == "completed" else None,
            snapshot=result.last_snapshot(),
            ignored=[*self._ignore, *ignored],
        )
        return TurnRerun(
            k=k,
            ignore=ignored,
            original_answer=turn.answer,
            answer=result.answer,
            changed=changed,
            baseline_answer=baseline_answer,
            baseline_changed=baseline_changed,
            verdict=verdict,
            turn=rerun_turn,
        )

    def fork(self, k: int, *, from_rerun: TurnRerun | None = None) -> RecordedChat:
        """A new recorded chat branching at turn ``k`` (or at a what-if rerun of it); this chat is never rewritten."""
        turn = self._turn(k)
        if from_rerun is None:
            return RecordedChat(
                self._make_agent, turns=self._turns[: k + 1], ignore=self._ignore, parent=(k, turn.run_id)
            )
        if from_rerun.k != k:
            raise ValueError(f"the rerun is of turn {from_rerun.k}, not turn {k}")
        return RecordedChat(
            self._make_agent,
            turns=[*self._turns[:k], from_rerun.turn],
            ignore=[*self._ignore, *from_rerun.ignore],
            parent=(k, turn.run_id),
        )


def recorded_chat(make_agent: Callable[[], Agent]) -> RecordedChat:
    """Start a recorded chat; ``make_agent`` builds a fresh agent (reruns and forks need identical ones)."""
    if not callable(make_agent):
        raise TypeError("recorded_chat() takes a callable that builds the agent")
    return RecordedChat(make_agent)


def explanation_json(explanation: Explanation) -> str:
    """An explanation as stable JSON (sorted keys) for storing beside the recording."""
    return json.dumps(explanation.model_dump(mode="json"), sort_keys=True, ensure_ascii=False)


__all__ = [
    "ChatTurn",
    "ExplainedSource",
    "Explanation",
    "RecordedChat",
    "TurnRerun",
    "explain_answer",
    "explanation_json",
    "recorded_chat",
]
