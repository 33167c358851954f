"""Patterns built from the four compositions: reflection, debate, map_reduce, self_consistency, router."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Mapping
from typing import Any

from agentfootprint.compose._base import CompositionBuildError
from agentfootprint.compose.conditional import Conditional
from agentfootprint.compose.parallel import Parallel
from agentfootprint.compose.sequence import Sequence


def reflection(writer: Any, critic: Any, *, rounds: int = 1, name: str = "reflection") -> Sequence:
    """Draft, then ``rounds`` × (critique → revise using the critique)."""
    if rounds < 1:
        raise CompositionBuildError("reflection needs rounds >= 1")
    builder = Sequence.create(name).step("draft", writer)
    last = "draft"
    for i in range(1, rounds + 1):
        builder = builder.step(f"critique-{i}", critic, mapper=_critique_of(last))
        builder = builder.step(f"revise-{i}", writer, mapper=_revision_of(last))
        last = f"revise-{i}"
    return builder.build()


def _critique_of(step: str) -> Callable[[str, dict[str, str]], str]:
    def mapper(previous: str, answers: dict[str, str]) -> str:
        return f"Critique this answer:\n{answers[step]}"

    return mapper


def _revision_of(step: str) -> Callable[[str, dict[str, str]], str]:
    def mapper(previous: str, answers: dict[str, str]) -> str:
        return f"Revise your answer.\nAnswer:\n{answers[step]}\nCritique:\n{previous}"

    return mapper


def debate(a: Any, b: Any, judge: Any, *, name: str = "debate") -> Sequence:
    """A answers, B answers knowing A's case, the judge decides between them."""
    return (
        Sequence.create(name)
        .step("a", a)
        .step("b", b, mapper=lambda prev, ans: f"Argue the other side of:\n{ans['a']}")
        .step("judge", judge, mapper=lambda prev, ans: f"Decide between:\nA: {ans['a']}\nB: {ans['b']}")
        .build()
    )


def map_reduce(mappers: Mapping[str, Any], reducer: Any, *, name: str = "map_reduce") -> Sequence:
    """Every mapper answers the message concurrently; the reducer combines their answers."""
    if not mappers:
        raise CompositionBuildError("map_reduce needs at least one mapper")
    fan = Parallel.create(f"{name}-map")
    for key, runner in mappers.items():
        fan = fan.branch(key, runner)
    return Sequence.create(name).step("map", fan.build()).step("reduce", reducer).build()


def _majority(answers: dict[str, str]) -> str:
    counts = Counter(a.strip() for a in answers.values())
    top = max(counts.values())
    return next(a.strip() for a in answers.values() if counts[a.strip()] == top)


def self_consistency(
    agent: Any, *, samples: int = 3, vote: Callable[[dict[str, str]], str] | None = None, name: str = "self_consistency"
) -> Parallel:
    """The same agent answers ``samples`` times concurrently; the majority answer wins (ties: first seen)."""
    if samples < 2:
        raise CompositionBuildError("self_consistency needs samples >= 2")
    fan = Parallel.create(name)
    for i in range(samples):
        fan = fan.branch(f"sample-{i + 1}", agent)
    return fan.merge_with(vote or _majority).build()


def router(
    routes: Mapping[str, tuple[Callable[[str], bool], Any]],
    default: tuple[str, Any] | None = None,
    *,
    name: str = "router",
) -> Conditional:
    """Route the message to the first route whose predicate holds (else ``default``)."""
    builder = Conditional.create(name)
    for key, (predicate, runner) in routes.items():
        builder = builder.when(key, predicate, runner)
    if default is not None:
        builder = builder.otherwise(*default)
    return builder.build()
