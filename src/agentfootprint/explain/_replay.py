"""Cheap, faithful reruns: a model response is reused only for an identical seeded request to a deterministic
provider, and reruns read memory as it stood for the recorded run without writing to it."""

from __future__ import annotations

import asyncio
import hashlib
import time
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

from agentfootprint.providers import LLMRequest, LLMResponse, StreamChunk
from agentfootprint.providers.base import chunks_from_response

if TYPE_CHECKING:
    from agentfootprint.context.memory import MemoryEntry, MemoryNamespace


def is_deterministic_for_seed(provider: Any) -> bool:
    """Whether the provider declares that one seeded request always gets one answer."""
    return getattr(provider, "deterministic_for_seed", False) is True


def request_key(provider_name: str, request: LLMRequest) -> str:
    """A digest of the whole request, seed included (two requests share it only when they are identical)."""
    body = request.model_dump_json().encode()
    return hashlib.sha256(provider_name.encode() + b"\0" + body).hexdigest()


@dataclass
class ReplayCache:
    """Model responses of this localization's reruns, keyed by their exact request; counts the calls it saved."""

    saved: int = 0
    _entries: dict[str, asyncio.Future[LLMResponse]] = field(default_factory=dict)

    async def complete(self, provider: Any, request: LLMRequest) -> LLMResponse:
        if request.seed is None or not is_deterministic_for_seed(provider):
            response: LLMResponse = await provider.complete(request)
            return response
        key = request_key(str(getattr(provider, "name", "")), request)
        pending = self._entries.get(key)
        if pending is not None:
            try:
                shared = await asyncio.shield(pending)
            except asyncio.CancelledError:
                task = asyncio.current_task()
                if not pending.cancelled() or (task is not None and task.cancelling()):
                    raise  # this caller was cancelled, not the first one
            except Exception:  # the first caller failed: this caller asks the model itself
                pass
            else:
                self.saved += 1
                return shared.model_copy(deep=True)
        future: asyncio.Future[LLMResponse] = asyncio.get_running_loop().create_future()
        future.add_done_callback(lambda f: f.cancelled() or f.exception())  # never "exception never retrieved"
        self._entries[key] = future
        try:
            response = await provider.complete(request)
        except BaseException as exc:
            self._entries.pop(key, None)
            if isinstance(exc, Exception):
                future.set_exception(exc)
            else:
                future.cancel()
            raise
        future.set_result(response)
        return response.model_copy(deep=True)


class ReplayingProvider:
    """Wraps a provider for reruns: identical seeded requests to a deterministic provider are answered once."""

    def __init__(self, inner: Any, cache: ReplayCache) -> None:
        self._inner = inner
        self._cache = cache
        self.name = str(getattr(inner, "name", "provider"))
        self.deterministic_for_seed = is_deterministic_for_seed(inner)

    async def complete(self, request: LLMRequest) -> LLMResponse:
        return await self._cache.complete(self._inner, request)

    async def stream(self, request: LLMRequest) -> AsyncIterator[StreamChunk]:
        response = await self.complete(request)
        for chunk in chunks_from_response(response):
            yield chunk


class RecordedMemoryView:
    """A memory store as it stood for the recorded run: that run's own writes and any made after them (or after
    ``cutoff``) are hidden, nothing is written, and ablated entry ids are left out of what a recall returns."""

    def __init__(self, inner: Any, run_id: str | None, cutoff: float, hidden: frozenset[str]) -> None:
        self._inner = inner
        self._run_id = run_id
        self._cutoff = cutoff
        self._hidden = hidden

    def append(self, namespace: MemoryNamespace, entries: Sequence[MemoryEntry]) -> None:
        return None

    def load(self, namespace: MemoryNamespace, *, last: int | None = None) -> list[MemoryEntry]:
        stored = self._inner.load(namespace)
        own = [e.created_at for e in stored if self._run_id is not None and e.run_id == self._run_id]
        limit = min([self._cutoff, *own])  # the recorded run stored its turn as it ended: later entries came after
        visible = [e for e in stored if (self._run_id is None or e.run_id != self._run_id) and e.created_at <= limit]
        if last is not None:
            visible = visible[-last:] if last > 0 else []
        return [e for e in visible if e.id not in self._hidden]

    def clear(self, namespace: MemoryNamespace) -> int:
        return 0


@dataclass(frozen=True)
class RerunWorld:
    """What every rerun of one localization shares: the response cache and the recorded run's memory moment."""

    cache: ReplayCache
    run_id: str | None
    cutoff: float = field(default_factory=time.time)


def rerun_agent(agent: Any, ignore: Sequence[str], world: RerunWorld) -> Any:
    """The agent rebuilt without ``ignore``, on the replaying provider, reading memory as the recorded run did.

    A runner that is not a single agent (a composition) is rebuilt by its own ``without`` and left as it is."""
    from agentfootprint.agent import Agent
    from agentfootprint.context import MemoryInjection  # here: tools -> explain.scoring would make a cycle

    clone = agent.without(*ignore)
    if not isinstance(clone, Agent):
        return clone
    config = clone.config
    hidden = frozenset(ignore)
    injections = tuple(
        replace(inj, store=RecordedMemoryView(inj.store, world.run_id, world.cutoff, hidden))
        if isinstance(inj, MemoryInjection)
        else inj
        for inj in config.injections
    )
    provider = ReplayingProvider(config.provider, world.cache)
    return Agent(replace(config, provider=provider, injections=injections))
