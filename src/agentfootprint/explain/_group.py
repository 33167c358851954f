"""Group search: ablate sets of sources together, bisect to 1-minimal culprit sets, then look for the others.

A set *flips* when ablating it together changes the outcome. ``find`` narrows a flipping set to a minimal one
by splitting it into parts tried at once (adaptive group testing; parts that cannot do it alone are reduced one
after another, as in QuickXplain). Under the majority rule the search is led by one-rerun screens; every set it
reports is then judged with full samples and each member restored in turn (``verify``). A hitting-set tree over
the confirmed sets looks for the other culprit sets."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field

from agentfootprint.explain._arms import Arm, ArmResult, BudgetExhausted, Judge
from agentfootprint.explain._hitting import hitting_sets

MAX_CULPRIT_SETS = 8
_PREFETCH_MEMBERS = 4


@dataclass
class Candidate:
    """A set the search produced: its own arm, and the arms that restored one member each."""

    ids: Arm
    result: ArmResult
    restored: list[ArmResult] = field(default_factory=list)
    minimal: bool = False


@dataclass
class GroupOutcome:
    candidates: list[Candidate]
    everything: ArmResult | None
    budget_stopped: bool = False


class GroupSearch:
    """Bisects ``population`` (ordered by proxy rank) with the judge's verdicts: ``fanout`` parts per screened split,
    halves when each step is judged in full."""

    def __init__(
        self, judge: Judge, population: list[str], *, screen: bool, fanout: int, max_sets: int = MAX_CULPRIT_SETS
    ) -> None:
        self.judge = judge
        self.population = list(population)
        self.order = {sid: i for i, sid in enumerate(self.population)}
        self.screening = screen
        self.fanout = max(2, fanout)
        self.max_sets = max_sets

    def _sorted(self, ids: Arm) -> list[str]:
        return sorted(ids, key=lambda s: self.order.get(s, len(self.order)))

    async def judged(self, ids: Arm) -> bool:
        """A settled verdict for the set (a majority arm may stop as soon as its samples decide it)."""
        result = await self.judge.decide(ids, full=False)
        if not result.settled and self.judge.sampler.budget_hit:
            raise BudgetExhausted()
        return result.verdict == "confirmed"

    async def flips(self, ids: Arm, screening: bool) -> bool:
        if not screening:
            return await self.judged(ids)
        flipped = await self.judge.screen(ids)
        if flipped is None:
            raise BudgetExhausted()
        return flipped

    def _split(self, candidates: list[str], parts: int) -> list[list[str]]:
        parts = min(parts, len(candidates))
        size, extra = divmod(len(candidates), parts)
        out, start = [], 0
        for i in range(parts):
            end = start + size + (1 if i < extra else 0)
            out.append(candidates[start:end])
            start = end
        return out

    async def find(self, background: Arm, candidates: list[str], screening: bool) -> list[str]:
        """A minimal ``X`` within ``candidates`` such that ablating ``background | X`` flips.

        Requires that ``background | candidates`` flips and ``background`` alone does not."""
        if len(candidates) == 1:
            return candidates
        parts = self._split(candidates, self.fanout if screening else 2)
        alone = await asyncio.gather(*(self.flips(background | frozenset(p), screening) for p in parts))
        for part, flipped in zip(parts, alone, strict=True):
            if flipped:
                return await self.find(background, part, screening)
        found: list[str] = []
        for i, part in enumerate(parts):
            rest = background | frozenset(found) | frozenset(x for p in parts[i + 1 :] for x in p)
            if i + 1 < len(parts) and await self.flips(rest, screening):
                continue
            found += await self.find(rest, part, screening)
        return found

    async def verify(self, ids: list[str]) -> Candidate:
        """Full samples for the set; restore each member in turn. A member whose restoring still flips — or may
        still flip (an inconclusive arm) — is dropped and the smaller set is verified instead (noise can mislead a
        search); a set is 1-minimal only when every restore check is settled ``not-confirmed``."""
        current = self._sorted(frozenset(ids))
        while True:
            arm = frozenset(current)
            result = await self.judge.decide(arm, full=True)
            if result.verdict != "confirmed" or not result.settled:
                return Candidate(arm, result)
            if len(current) == 1:
                return Candidate(arm, result, [], minimal=True)
            restored = await asyncio.gather(*(self.judge.decide(arm - {m}, full=True) for m in current))
            pairs = list(zip(current, restored, strict=True))
            still = [m for m, r in pairs if r.verdict == "confirmed"] + [
                m for m, r in pairs if r.verdict == "inconclusive"
            ]
            if not still:
                return Candidate(arm, result, list(restored), minimal=all(r.settled for r in restored))
            current = [m for m in current if m != still[0]]

    async def locate(self, everything: Arm, path: Arm) -> Candidate:
        """A verified culprit set within ``everything - path`` (screened first, judged in full if that misled)."""
        rest = self._sorted(everything - path)
        found = await self.find(frozenset(), rest, self.screening)
        checks = [self.judged(everything - path - {m}) for m in found[:_PREFETCH_MEMBERS]]
        verified = asyncio.ensure_future(self.verify(found))
        await asyncio.gather(verified, *checks)  # the tree's next checks run alongside the verification
        candidate = verified.result()
        if candidate.minimal or not self.screening:
            return candidate
        return await self.verify(await self.find(frozenset(), rest, False))

    async def run(self) -> GroupOutcome:
        everything = frozenset(self.population)
        candidates: list[Candidate] = []
        if not everything:
            return GroupOutcome(candidates, None)
        try:
            if not (self.screening and await self.flips(everything, True)) and not await self.judged(everything):
                return GroupOutcome(candidates, self.judge.known(everything))
            await self._hitting_sets(everything, candidates)
        except BudgetExhausted:
            return GroupOutcome(candidates, self.judge.known(everything), budget_stopped=True)
        return GroupOutcome(candidates, self.judge.known(everything))

    async def _hitting_sets(self, everything: Arm, candidates: list[Candidate]) -> None:
        """The hitting-set tree over the verified sets (each reported, minimal or not)."""

        async def locate(path: Arm) -> Arm | None:
            candidate = await self.locate(everything, path)
            candidates.append(candidate)
            return candidate.ids if candidate.minimal else None

        await hitting_sets(everything, [], max_sets=self.max_sets, flips=self.judged, locate=locate, order=self._sorted)
