"""Conversation memory: turns stored per identity namespace, recalled into a slot as a tracked injection."""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol, runtime_checkable

from agentfootprint.context._events import MEMORY_WRITTEN, ensure_context_event_types
from agentfootprint.context.cache import check_cache_policy
from agentfootprint.context.factories import _slot
from agentfootprint.context.injection import (
    CachePolicy,
    Injection,
    InjectionContext,
    InvalidInjectionError,
    Trigger,
    check_injection_id,
)
from agentfootprint.events import EventSink
from agentfootprint.events.catalogue import MemoryWritten
from agentfootprint.identity import Identity
from agentfootprint.stores.memory import EntryKind as EntryKind
from agentfootprint.stores.memory import (
    InMemoryMemoryStore,
    MemoryEntry,
    MemoryNamespace,
    MemoryStore,
)
from agentfootprint.stores.memory import entry_from_row as entry_from_row
from agentfootprint.stores.sqlite_memory import SQLiteMemoryStore

DEFAULT_MEMORY_HEADER = "Conversation memory (earlier turns, oldest first):"
_MAX_RECALL_TURNS = 1000


def memory_namespace(memory_id: str, identity: Identity | None, run_id: str) -> MemoryNamespace:
    """The run's namespace: its identity, or ``{conversation_id: run_id}`` (never shared) when it has none."""
    if identity is None or (
        identity.tenant is None and identity.principal is None and identity.conversation_id is None
    ):
        return MemoryNamespace(memory_id=memory_id, conversation_id=run_id, anonymous=True)
    return MemoryNamespace(
        memory_id=memory_id,
        tenant=identity.tenant,
        principal=identity.principal,
        conversation_id=identity.conversation_id,
    )


RecallFn = Callable[[list[MemoryEntry], InjectionContext], Sequence[MemoryEntry]]


def _entry_line(e: MemoryEntry) -> str:
    if e.kind == "fact":
        return f"Fact: {e.content}"
    if e.kind == "summary":
        return f"Summary of earlier turns: {e.content}"
    return f"{'User' if e.role == 'user' else 'Assistant'}: {e.content}"


def _format_entries(header: str, entries: Sequence[MemoryEntry]) -> str:
    return "\n".join([*([header] if header else []), *(_entry_line(e) for e in entries)])


@runtime_checkable
class MemoryStrategy(Protocol):
    """How a memory recalls (what lands each iteration) and what it writes after a completed turn."""

    name: str

    def recall(self, memory: MemoryInjection, ctx: InjectionContext) -> Recalled: ...

    async def remember(self, memory: MemoryInjection, namespace: MemoryNamespace, turn: list[MemoryEntry]) -> None: ...


@dataclass(frozen=True, slots=True)
class Recalled:
    """What a strategy recalled: the entries (in the order they land) and, per entry id, its score when scored."""

    entries: list[MemoryEntry]
    scores: Mapping[str, float] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class MemoryInjection(Injection):
    """An Injection whose text is recalled from a store for the run's identity namespace."""

    store: MemoryStore = field(default_factory=InMemoryMemoryStore)
    recall: int | RecallFn = 5
    header: str = DEFAULT_MEMORY_HEADER
    strategy: MemoryStrategy | None = None
    excluded: frozenset[str] = frozenset()
    """Entry ids never landed (``agent.without(entry_id)``: the ablation seam for one memory entry)."""

    def namespace(self, ctx: InjectionContext) -> MemoryNamespace:
        """This memory's namespace for the run behind ``ctx``."""
        return memory_namespace(self.id, ctx.identity, ctx.run_id)

    def recalled(self, ctx: InjectionContext) -> Recalled:
        """What lands this iteration: the strategy's recall, else the last ``recall`` turns or the callable's pick
        (an excluded entry is left out, never replaced)."""
        got = self._recall(ctx)
        if not self.excluded:
            return got
        return Recalled([e for e in got.entries if e.id not in self.excluded], got.scores)

    def _recall(self, ctx: InjectionContext) -> Recalled:
        if self.strategy is not None:
            return self.strategy.recall(self, ctx)
        ns = self.namespace(ctx)
        if isinstance(self.recall, int):
            turns = [e for e in self.store.load(ns, last=2 * self.recall) if e.kind == "turn"] if self.recall else []
            return Recalled(turns)
        picked = self.recall(list(self.store.load(ns)), ctx)
        return Recalled([e for e in picked if isinstance(e, MemoryEntry)])

    def recall_entries(self, ctx: InjectionContext) -> list[MemoryEntry]:
        """The entries that land this iteration."""
        return self.recalled(ctx).entries

    def render(self, ctx: InjectionContext) -> str:
        """The recalled text ("" when nothing is remembered)."""
        rendered = self.render_record(ctx)
        return rendered[0] if rendered is not None else ""

    def render_record(self, ctx: InjectionContext) -> tuple[str, dict[str, Any]] | None:
        """Recalled text plus the entry ids and namespace, or None when nothing is remembered."""
        got = self.recalled(ctx)
        if not got.entries:
            return None
        extras: dict[str, Any] = {
            "entry_ids": [e.id for e in got.entries],
            "entries": [{"id": e.id, "kind": e.kind, "text": _entry_line(e)} for e in got.entries],
            "namespace": self.namespace(ctx).as_dict(),
        }
        if self.strategy is not None:
            extras["strategy"] = self.strategy.name
        if got.scores:
            extras["entry_scores"] = [got.scores.get(e.id) for e in got.entries]
        return _format_entries(self.header, got.entries), extras

    async def remember(self, identity: Identity | None, run_id: str, user_message: str, answer: str) -> list[str]:
        """Store a completed turn (user message, then the answer if any) and what the strategy derives from it;
        returns the entry ids of the turn."""
        now = time.time()
        entries = [MemoryEntry(id=f"{run_id}:user", role="user", content=user_message, run_id=run_id, created_at=now)]
        if answer:
            entries.append(
                MemoryEntry(id=f"{run_id}:assistant", role="assistant", content=answer, run_id=run_id, created_at=now)
            )
        namespace = memory_namespace(self.id, identity, run_id)
        self.store.append(namespace, entries)
        if self.strategy is not None:
            await self.strategy.remember(self, namespace, entries)
        return [e.id for e in entries]


def define_memory(
    *,
    id: str,
    store: MemoryStore | None = None,
    slot: Literal["system_prompt", "messages"] = "system_prompt",
    recall: int | RecallFn = 5,
    role: Literal["user", "assistant"] = "user",
    header: str = DEFAULT_MEMORY_HEADER,
    cache: CachePolicy = "while-active",
    description: str = "",
    strategy: MemoryStrategy | None = None,
) -> MemoryInjection:
    """Conversation memory per identity ``{tenant, principal, conversation_id}``: recalls the last ``recall``
    turns (or what a ``recall(entries, ctx)`` callable picks, or what a ``strategy`` recalls: semantic top-k,
    summary, extracted facts, decay) into ``slot``; completed turns are written back."""
    check_injection_id(id)
    store = InMemoryMemoryStore() if store is None else store
    if not isinstance(store, MemoryStore):
        raise InvalidInjectionError(f"memory '{id}' store must implement append/load/clear, got {type(store).__name__}")
    if isinstance(recall, bool) or not (
        (isinstance(recall, int) and 0 <= recall <= _MAX_RECALL_TURNS) or callable(recall)
    ):
        raise InvalidInjectionError(f"memory '{id}' recall must be a turn count 0..{_MAX_RECALL_TURNS} or a callable")
    if not isinstance(header, str):
        raise InvalidInjectionError(f"memory '{id}' header must be a string")
    if strategy is not None and not isinstance(strategy, MemoryStrategy):
        raise InvalidInjectionError(f"memory '{id}' strategy must be a memory strategy, got {type(strategy).__name__}")
    check_cache_policy(cache, id)
    return MemoryInjection(
        id=id,
        flavor="memory",
        trigger=Trigger(kind="always"),
        slot=_slot(slot),
        content="",
        cache=cache,
        role=role,
        description=description,
        store=store,
        recall=recall,
        header=header,
        strategy=strategy,
    )


async def remember_turn(
    injections: Sequence[Injection],
    *,
    identity: Identity | None,
    run_id: str,
    user_message: str,
    answer: str,
    events: EventSink | None = None,
) -> list[dict[str, Any]]:
    """After a completed turn, write it to every memory injection's store; a failing store is reported in the
    returned records (and the ``memory.written`` event) instead of failing the finished turn."""
    written: list[dict[str, Any]] = []
    for inj in injections:
        if not isinstance(inj, MemoryInjection):
            continue
        record: dict[str, Any] = {
            "source_id": inj.id,
            "namespace": memory_namespace(inj.id, identity, run_id).as_dict(),
        }
        try:
            record["entry_ids"] = await inj.remember(identity, run_id, user_message, answer)
        except Exception as exc:
            record["entry_ids"] = []
            record["error"] = f"{type(exc).__name__}: {str(exc)[:200]}"
        written.append(record)
        if events is not None:
            ensure_context_event_types(events)
            if events.has_listeners(MEMORY_WRITTEN):
                events.emit(MEMORY_WRITTEN, MemoryWritten(**record), run_id=run_id)
    return written


__all__ = [
    "DEFAULT_MEMORY_HEADER",
    "MEMORY_WRITTEN",
    "InMemoryMemoryStore",
    "MemoryEntry",
    "MemoryInjection",
    "MemoryNamespace",
    "MemoryStore",
    "MemoryStrategy",
    "Recalled",
    "SQLiteMemoryStore",
    "define_memory",
    "memory_namespace",
    "remember_turn",
]
