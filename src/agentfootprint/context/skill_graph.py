"""A skill graph: routing between skills declared as data (start rules, edges), walked by the agent with a cursor.

The cursor is the skill the turn is in; the model may activate only skills reachable from it (itself and its
edges), and the ``read_skill`` menu lists exactly those. Start rules pick the entry skill from the user's message.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from agentfootprint.context.injection import Injection, InvalidInjectionError

Matcher = re.Pattern[str] | Sequence[str] | Callable[[str], bool]


@dataclass(frozen=True, slots=True)
class StartRule:
    """Start the turn in ``use`` when ``match`` holds for the user's message (regex, any of the keywords as whole
    words, case-insensitive, or a predicate)."""

    use: str
    match: Matcher

    def describe(self) -> str:
        if isinstance(self.match, re.Pattern):
            return f"/{self.match.pattern}/"
        if callable(self.match):
            return str(getattr(self.match, "__name__", "predicate"))
        return ", ".join(self.match)

    def witness(self, message: str) -> str | None:
        """The text of the message that makes the rule true (None when it does not hold)."""
        if isinstance(self.match, re.Pattern):
            found = self.match.search(message)
            return found.group(0)[:80] if found else None
        if callable(self.match):
            try:
                return "predicate" if self.match(message) else None
            except Exception:
                return None
        for word in self.match:
            found = re.search(rf"\b{re.escape(word)}\b", message, flags=re.IGNORECASE)
            if found:
                return found.group(0)
        return None


@dataclass(frozen=True, slots=True)
class SkillGraph:
    """Skills (nodes), edges between them, start rules and the default entry."""

    skills: tuple[Injection, ...]
    edges: Mapping[str, tuple[str, ...]]
    start: str
    rules: tuple[StartRule, ...] = ()
    ids: frozenset[str] = field(default_factory=frozenset)

    def reachable(self, cursor: str | None) -> list[str]:
        """The skills the model may activate from ``cursor``: the cursor itself and its edges, in declared order."""
        if cursor is None or cursor not in self.ids:
            cursor = self.start
        allowed = {cursor, *self.edges.get(cursor, ())}
        return [s.id for s in self.skills if s.id in allowed]

    def entry(self, message: str) -> tuple[str, str, str | None]:
        """(skill, how, witness) the turn starts in: the first start rule that holds, else the default entry."""
        for rule in self.rules:
            witness = rule.witness(message)
            if witness is not None:
                return rule.use, "start-rule", witness
        return self.start, "default", None

    def declared(self) -> dict[str, Any]:
        """The declared map, verbatim: nodes, edges, start rules and the default entry."""
        return {
            "nodes": [s.id for s in self.skills],
            "edges": [{"from": a, "to": b} for a, targets in self.edges.items() for b in targets],
            "start": self.start,
            "rules": [{"use": r.use, "match": r.describe()} for r in self.rules],
        }

    def to_mermaid(self) -> str:
        """The graph as a Mermaid flowchart (start rules caption the entry edges)."""
        lines = ["flowchart TD", "  __start__([start])"]
        lines += [f'  n_{_node(s.id)}["{s.id}"]' for s in self.skills]
        for rule in self.rules:
            label = rule.describe().replace("|", "#124;").replace('"', "'")
            lines.append(f"  __start__ -->|{label}| n_{_node(rule.use)}")
        lines.append(f"  __start__ --> n_{_node(self.start)}")
        lines += [f"  n_{_node(a)} --> n_{_node(b)}" for a, targets in self.edges.items() for b in targets]
        return "\n".join(lines)


def _node(skill_id: str) -> str:
    return re.sub(r"[^A-Za-z0-9_]", "_", skill_id)


def _matcher(value: Any, use: str) -> Matcher:
    if isinstance(value, re.Pattern) or callable(value):
        return value  # type: ignore[no-any-return]
    if isinstance(value, str) and value.strip():
        return (value,)
    if isinstance(value, list | tuple) and value and all(isinstance(w, str) and w.strip() for w in value):
        return tuple(value)
    raise InvalidInjectionError(f"start rule for '{use}' must match a regex, keywords or a predicate")


def skill_graph(
    *,
    skills: Sequence[Injection],
    edges: Mapping[str, Iterable[str]] | None = None,
    start: str | None = None,
    rules: Sequence[tuple[str, Any]] = (),
) -> SkillGraph:
    """Declare routing between skills: ``edges`` from a skill to the skills the model may move to next, ``rules``
    ``[(skill_id, regex | keywords | predicate), ...]`` tried in order on the user's message, ``start`` the default
    entry (the first skill when omitted). Every id must name a skill of the graph."""
    nodes = list(skills)
    if not nodes:
        raise InvalidInjectionError("a skill graph needs at least one skill")
    for s in nodes:
        if not isinstance(s, Injection) or s.flavor != "skill":
            raise InvalidInjectionError(f"skill graph nodes must come from define_skill, got {type(s).__name__}")
    ids = [s.id for s in nodes]
    if len(set(ids)) != len(ids):
        raise InvalidInjectionError("two skills of the graph share an id")
    known = frozenset(ids)
    unknown: list[str] = []
    wired: dict[str, tuple[str, ...]] = {}
    for source, targets in (edges or {}).items():
        listed = tuple(dict.fromkeys([targets] if isinstance(targets, str) else targets))
        unknown += [x for x in (source, *listed) if x not in known]
        wired[source] = listed
    parsed = tuple(StartRule(use=use, match=_matcher(match, use)) for use, match in rules)
    unknown += [r.use for r in parsed if r.use not in known]
    entry = start if start is not None else ids[0]
    if entry not in known:
        unknown.append(entry)
    if unknown:
        missing = ", ".join(sorted(set(map(str, unknown))))[:300]
        raise InvalidInjectionError(f"skill graph names skills it does not have: {missing} (known: {', '.join(ids)})")
    return SkillGraph(skills=tuple(nodes), edges=wired, start=entry, rules=parsed, ids=known)


__all__ = ["SkillGraph", "StartRule", "skill_graph"]
