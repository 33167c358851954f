"""Patterns built from the compositions: reflection, debate, map_reduce, self_consistency, router, swarms."""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Mapping
from typing import Any

from agentfootprint.compose._base import CompositionBuildError
from agentfootprint.compose._choice import ModelChoiceError, check_route_id, chooser_agent, parse_choice
from agentfootprint.compose.conditional import Conditional
from agentfootprint.compose.graph import END, HARD_CEILING, Graph
from agentfootprint.compose.parallel import Parallel
from agentfootprint.compose.sequence import Sequence
from agentfootprint.providers import Provider


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


_HANDOFF = re.compile(r"HANDOFF:\s*([A-Za-z0-9_.:-]+)", re.IGNORECASE)


def handoff_marker(answer: str) -> str | None:
    """The default swarm route: the agent named by the last ``HANDOFF: <id>`` in the answer, else None (done)."""
    found = _HANDOFF.findall(answer)
    return found[-1] if found else None


def swarm(
    agents: Mapping[str, Any],
    *,
    start: str | None = None,
    route: Callable[[str], str | None] | None = None,
    max_handoffs: int = 5,
    name: str = "swarm",
) -> Graph:
    """Agents hand off to each other: after each turn ``route(answer)`` names the next agent; None ends the run.

    The default ``route`` reads a ``HANDOFF: <id>`` line; the next agent is handed the previous answer. At most
    ``max_handoffs`` hand-offs (the budget); every hand-off is a recorded route decision."""
    owner = f"swarm '{name[:80]}'"
    if not agents:
        raise CompositionBuildError(f"{owner} needs at least one agent")
    pick = route or handoff_marker
    if not callable(pick):
        raise CompositionBuildError(f"{owner}: route must be a function of the answer")
    builder = Graph.create(name)
    for agent_id, runner in agents.items():
        builder = builder.node(agent_id, runner)
    for source in agents:
        for target in agents:
            if target != source:
                builder = builder.edge(source, target, when=_picks(pick, target), label=f"hand off to {target}")
    if start is not None:
        builder = builder.start(start)
    return builder.max_steps(_handoff_budget(owner, max_handoffs) + 1).build()


def _picks(pick: Callable[[str], str | None], target: str) -> Callable[[Any], bool]:
    return lambda out: pick(str(out)) == target


def _chose(agent_id: str) -> Callable[[Any], bool]:
    return lambda choice: bool(choice["route"] == agent_id)


def _handoff_budget(owner: str, n: Any) -> int:
    if isinstance(n, bool) or not isinstance(n, int) or not 0 <= n < HARD_CEILING:
        raise CompositionBuildError(f"{owner}: max_handoffs must be an int in 0..{HARD_CEILING - 1}")
    return n


def llm_swarm(
    provider: Provider,
    agents: Mapping[str, tuple[str, Any]],
    *,
    model: str = "",
    instruction: str | None = None,
    max_handoffs: int = 5,
    name: str = "llm_swarm",
) -> Graph:
    """A swarm whose hand-offs a model decides: before each turn a chooser picks the agent (or ends the run).

    ``agents = {id: (what it handles, runner)}``; each roster line is an ablatable fact ``route:<id>``. The
    chooser's reason is recorded, never fed to an agent; an unusable choice raises :class:`ModelChoiceError`."""
    owner = f"llm_swarm '{name[:80]}'"
    if not agents:
        raise CompositionBuildError(f"{owner} needs at least one agent")
    roster: dict[str, str] = {}
    for agent_id, entry in agents.items():
        check_route_id(owner, agent_id)
        if agent_id in ("router", "choice"):
            raise CompositionBuildError(f"{owner}: 'router' and 'choice' are reserved names")
        if not isinstance(entry, tuple) or len(entry) != 2 or not isinstance(entry[0], str) or not entry[0].strip():
            raise CompositionBuildError(f"{owner}: agent '{agent_id}' must be (description, runner)")
        roster[agent_id] = entry[0]
    chooser = chooser_agent(f"{name}-router", provider, model, roster, instruction=instruction, can_finish=True)
    known = set(roster)

    def read_choice(values: dict[str, Any]) -> dict[str, Any]:
        text = str(values["router"])
        choice = parse_choice(name, text, can_finish=True)
        if choice["route"] is not None and choice["route"] not in known:
            raise ModelChoiceError(name, "unknown-route", text)
        return choice

    def handed(values: dict[str, Any]) -> str:
        message = (values.get("choice") or {}).get("message")
        return str(message) if message else str(values["input"])

    builder = Graph.create(name).node("router", chooser).node("choice", read_choice, inputs=["router"])
    for agent_id, (_, runner) in agents.items():
        builder = builder.node(agent_id, runner, inputs=["input", "choice"], message=handed)
        builder = builder.edge("choice", agent_id, when=_chose(agent_id), label=f"the model chose {agent_id}")
        builder = builder.edge(agent_id, "router")
    builder = builder.edge("router", "choice").edge("choice", END, label="the model is done")
    return builder.max_steps(3 * (_handoff_budget(owner, max_handoffs) + 1) + 2).build()
