"""Tree of thoughts: expand the best paths level by level, score or judge the candidates, keep a beam."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from agentfootprint.compose._base import (
    Composition,
    CompositionBuildError,
    check_runner,
    checked_output,
    member_deps,
    seed_stage,
)
from agentfootprint.compose._choice import ModelChoiceError
from agentfootprint.flow import FlowChart, FlowChartBuilder, Scope, flow_chart, thaw

Score = Callable[[str], float]
_MAX_WIDTH = 32
_NUMBER = re.compile(r"\d+")


class TreeOfThoughts(Composition):
    """``depth`` levels; at each, ``branching`` thinker runs extend the kept paths round-robin, and the best
    ``beam`` paths survive (by ``score``, or by a judge model's ranking). The answer is the best path's last thought.
    """

    kind = "TreeOfThoughts"

    def __init__(
        self,
        name: str,
        members: list[tuple[str, Any]],
        depth: int,
        branching: int,
        beam: int,
        score: Score | None,
    ) -> None:
        self._depth = depth
        self._branching = branching
        self._beam = beam
        self._score = score
        super().__init__(name, members)

    def _build_chart(self) -> FlowChart:
        thinker = self.members[0][1]
        judge = self.members[1][1] if len(self.members) > 1 else None
        builder: FlowChartBuilder = flow_chart(self.name, self._seed, id="seed", description="Take the problem")
        for level in range(1, self._depth + 1):
            children = [
                (
                    f"thought-{level}-{k}",
                    f"Thought {level}.{k}",
                    thinker.chart,
                    self._expand_input(k),
                    checked_output(thinker, f"thought-{level}-{k}", _answer_as(f"thought:{level}:{k}")),
                    member_deps(thinker),
                )
                for k in range(1, self._branching + 1)
            ]
            builder = builder.parallel(children, id=f"level-{level}", name=f"Level {level}")
            if judge is not None:
                builder = builder.subflow(
                    f"judge-{level}",
                    judge.chart,
                    name=f"Judge level {level}",
                    input_map=self._judge_input(level),
                    output_map=checked_output(judge, f"judge-{level}", _answer_as(f"judged:{level}")),
                    deps=member_deps(judge),
                )
            builder = builder.then(f"Keep the best of level {level}", self._prune(level), id=f"prune-{level}")
        return builder.then("Answer", self._answer, id="final", description="The best path's last thought").build()

    @staticmethod
    def _seed(scope: Scope) -> None:
        seed_stage(scope)
        scope["frontier"] = [[]]

    def _expand_input(self, k: int) -> Callable[[Scope], dict[str, Any]]:
        def in_map(parent: Scope) -> dict[str, Any]:
            frontier = thaw(parent["frontier"])
            path = frontier[(k - 1) % len(frontier)]
            steps = "\n".join(f"{i}. {t}" for i, t in enumerate(path, start=1)) or "(none yet)"
            return {"member_message": f"Problem: {parent['input']}\nThoughts so far:\n{steps}\nGive the next thought."}

        return in_map

    def _candidates(self, scope: Scope, level: int) -> list[list[str]]:
        frontier = thaw(scope["frontier"])
        return [
            [*frontier[(k - 1) % len(frontier)], str(scope[f"thought:{level}:{k}"])]
            for k in range(1, self._branching + 1)
        ]

    def _judge_input(self, level: int) -> Callable[[Scope], dict[str, Any]]:
        def in_map(parent: Scope) -> dict[str, Any]:
            lines = [f"{i}. {' -> '.join(c)}" for i, c in enumerate(self._candidates(parent, level), start=1)]
            return {
                "member_message": f"Problem: {parent['input']}\nCandidate paths:\n"
                + "\n".join(lines)
                + f"\nAnswer with the numbers of the best {self._beam} candidate(s), best first."
            }

        return in_map

    def _prune(self, level: int) -> Callable[[Scope], None]:
        def prune(scope: Scope) -> None:
            candidates = self._candidates(scope, level)
            if self._score is not None:
                scores = [float(self._score(c[-1])) for c in candidates]
                order = sorted(range(len(candidates)), key=lambda i: -scores[i])  # stable: ties keep order
                scope[f"scores:{level}"] = scores
            else:
                text = str(scope[f"judged:{level}"])
                order = list(dict.fromkeys(int(n) - 1 for n in _NUMBER.findall(text) if 1 <= int(n) <= len(candidates)))
                if not order:
                    raise ModelChoiceError(self.name, "ranking", text)
            scope["frontier"] = [candidates[i] for i in order[: self._beam]]

        return prune

    @staticmethod
    def _answer(scope: Scope) -> None:
        best = thaw(scope["frontier"])[0]
        scope["output"] = {"path": best}
        scope["answer"] = best[-1]

    def _rebuilt(self, members: list[tuple[str, Any]]) -> TreeOfThoughts:
        return TreeOfThoughts(self.name, members, self._depth, self._branching, self._beam, self._score)


def _answer_as(key: str) -> Callable[[Scope], dict[str, Any]]:
    def out_map(sub: Scope) -> dict[str, Any]:
        return {key: sub.get("answer", "")}

    return out_map


def tree_of_thoughts(
    thinker: Any,
    *,
    depth: int,
    branching: int,
    beam: int = 1,
    score: Score | None = None,
    judge: Any = None,
    name: str = "tree_of_thoughts",
) -> TreeOfThoughts:
    """Search thoughts breadth-first: ``depth`` levels of ``branching`` thinker runs, keeping the ``beam`` best.

    Rank with ``score(thought) -> float`` (deterministic) or a ``judge`` runner that answers with candidate
    numbers, best first (recorded like any member; an answer with no usable number raises ModelChoiceError)."""
    owner = f"tree_of_thoughts '{name[:80]}'"
    for label, value, top in (("depth", depth, 10), ("branching", branching, _MAX_WIDTH), ("beam", beam, _MAX_WIDTH)):
        if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= top:
            raise CompositionBuildError(f"{owner}: {label} must be an int in 1..{top}")
    if branching < 2:
        raise CompositionBuildError(f"{owner}: branching must be at least 2 (use reflection for one path)")
    if beam > branching:
        raise CompositionBuildError(f"{owner}: beam cannot exceed branching")
    if (score is None) == (judge is None):
        raise CompositionBuildError(f"{owner}: give exactly one of score= or judge=")
    if score is not None and not callable(score):
        raise CompositionBuildError(f"{owner}: score must be a function of a thought")
    members: list[tuple[str, Any]] = [("thinker", check_runner(thinker, "thinker"))]
    if judge is not None:
        members.append(("judge", check_runner(judge, "judge")))
    return TreeOfThoughts(name, members, depth, branching, beam, score)
