"""``evaluate``: run an agent factory over a dataset through an executor, check every answer, report as table/JSON."""

from __future__ import annotations

import io
import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from pydantic import BaseModel, Field

from agentfootprint._progress import ProgressBar
from agentfootprint._sync import run_sync
from agentfootprint.scale.executor import Executor, InProcessExecutor, run_specs
from agentfootprint.scale.spec import EvaluationError, RunOutcome, RunSpec, scrub_message

CheckReturn = bool | tuple[bool, str | None]
Check = Callable[[Mapping[str, Any], RunOutcome], CheckReturn]
_ITEM_KEYS = ("message", "identity", "ablate", "seed", "history")


class CheckResult(BaseModel):
    """One check on one item: passed or not, with an optional note."""

    name: str
    passed: bool
    note: str | None = None


class ItemResult(BaseModel):
    """One dataset item: the item as given, the run's outcome (answer, recording) and every check's result."""

    index: int
    item: dict[str, Any]
    outcome: RunOutcome
    checks: list[CheckResult] = Field(default_factory=list)
    passed: bool

    @property
    def answer(self) -> str | None:
        return self.outcome.answer


class CheckSummary(BaseModel):
    """How many items one check passed and failed."""

    name: str
    passed: int
    failed: int


class EvaluationSummary(BaseModel):
    """Totals for an evaluation: items passed / failed / errored, per-check counts, wall time."""

    total: int
    passed: int
    failed: int
    errors: int
    pass_rate: float
    checks: list[CheckSummary]
    wall_s: float
    mean_run_s: float


class EvaluationReport(BaseModel):
    """Per-item answers, recordings and check results plus a summary; ``str()`` is a table, ``to_json()`` JSON."""

    agent_factory: str
    executor: str
    items: list[ItemResult]
    summary: EvaluationSummary

    @property
    def failures(self) -> list[ItemResult]:
        return [i for i in self.items if not i.passed]

    def to_json(self, *, recordings: bool = True, indent: int | None = 2) -> str:
        """The whole report as JSON (``recordings=False`` drops the per-run recordings)."""
        exclude: Any = {"items": {"__all__": {"outcome": {"recording"}}}} if not recordings else None
        return self.model_dump_json(indent=indent, exclude=exclude)

    def table(self) -> Any:
        """The summary as a ``rich`` Table: one row per item, one column per check."""
        from rich.table import Table

        s = self.summary
        table = Table(
            title=f"Evaluation of {self.agent_factory} on {self.executor}",
            caption=f"{s.passed}/{s.total} passed, {s.failed} failed, {s.errors} errors, "
            f"pass rate {s.pass_rate:.1%}, wall {s.wall_s:.2f}s",
        )
        for header in ("#", "message", "status", "answer"):
            table.add_column(header, overflow="fold" if header == "answer" else "ellipsis")
        for check in s.checks:
            table.add_column(f"{check.name} ({check.passed}/{check.passed + check.failed})")
        table.add_column("pass")
        for item in self.items:
            error = item.outcome.error
            answer = item.outcome.answer or (f"{error.type}: {error.message}" if error is not None else "")
            marks = ["✓" if c.passed else f"✗ {c.note or ''}".strip() for c in item.checks]
            table.add_row(
                str(item.index),
                _short(str(item.item.get("message", "")), 40),
                item.outcome.status,
                _short(answer, 120),
                *marks,
                "✓" if item.passed else "✗",
            )
        return table

    def __rich__(self) -> Any:
        return self.table()

    def __str__(self) -> str:
        from rich.console import Console

        buffer = io.StringIO()
        Console(file=buffer, width=160, color_system=None, force_terminal=False).print(self.table())
        return buffer.getvalue().rstrip("\n")


def _short(text: str, limit: int) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def expected_in_answer(item: Mapping[str, Any], outcome: RunOutcome) -> tuple[bool, str | None]:
    """Passes when the item's ``expected`` text appears in the answer (case-insensitive)."""
    expected = item.get("expected")
    if expected is None:
        return False, "item has no 'expected'"
    found = str(expected).lower() in (outcome.answer or "").lower()
    return found, None if found else f"expected {_short(str(expected), 40)!r}"


def _check_name(check: Check, taken: set[str]) -> str:
    base = str(getattr(check, "__name__", type(check).__name__))
    name, n = base, 2
    while name in taken:
        name, n = f"{base}#{n}", n + 1
    taken.add(name)
    return name


def _apply(name: str, check: Check, item: Mapping[str, Any], outcome: RunOutcome) -> CheckResult:
    try:
        value = check(item, outcome)
    except Exception as exc:
        return CheckResult(
            name=name, passed=False, note=f"check raised {type(exc).__name__}: {scrub_message(str(exc), 200)}"
        )
    if isinstance(value, bool):
        return CheckResult(name=name, passed=value)
    if isinstance(value, tuple) and len(value) == 2 and isinstance(value[0], bool):
        note = value[1]
        return CheckResult(name=name, passed=value[0], note=None if note is None else str(note))
    return CheckResult(name=name, passed=False, note=f"check returned {type(value).__name__}, not bool or (bool, note)")


def _spec(agent_factory: str, index: int, item: Mapping[str, Any], seed: int | None) -> RunSpec:
    if not isinstance(item, Mapping):
        raise EvaluationError(f"dataset[{index}] must be a dict, got {type(item).__name__}")
    if not isinstance(item.get("message"), str):
        raise EvaluationError(f"dataset[{index}] needs a 'message' string")
    fields: dict[str, Any] = {k: item[k] for k in _ITEM_KEYS if item.get(k) is not None}
    fields.setdefault("seed", seed)
    try:
        return RunSpec(agent_factory=agent_factory, **fields)
    except ValueError as exc:
        raise EvaluationError(f"dataset[{index}] is not a valid run: {scrub_message(str(exc), 300)}") from None


async def evaluate(
    agent_factory: str,
    dataset: Sequence[Mapping[str, Any]],
    *,
    executor: Executor | None = None,
    checks: Sequence[Check] | None = None,
    concurrency: int = 8,
    seed: int | None = None,
    progress: bool | None = None,
) -> EvaluationReport:
    """Run the factory's agent on every item (``message``, optional ``identity``/``seed``/``ablate``) and check it.

    ``checks`` default to :func:`expected_in_answer` when items carry ``expected``; an item passes when its run did
    not error and every check passed."""
    if not isinstance(concurrency, int) or concurrency < 1:
        raise EvaluationError("concurrency must be an int >= 1")
    if isinstance(dataset, str | bytes | Mapping) or not isinstance(dataset, Sequence):
        raise EvaluationError("dataset must be a list of dicts")
    specs = [_spec(agent_factory, i, item, seed) for i, item in enumerate(dataset)]
    if checks is None:
        checks = [expected_in_answer] if any("expected" in item for item in dataset) else []
    for check in checks:
        if not callable(check):
            raise EvaluationError(f"every check must be callable(item, outcome), got {type(check).__name__}")
    taken: set[str] = set()
    named = [(_check_name(c, taken), c) for c in checks]
    runner: Executor = executor if executor is not None else InProcessExecutor(concurrency)
    started = time.perf_counter()
    with ProgressBar("evaluating", len(specs), progress) as bar:
        outcomes = await run_specs(
            runner, specs, concurrency=concurrency, progress=lambda done, total, outcome: bar.reached(done)
        )
    wall = time.perf_counter() - started
    items: list[ItemResult] = []
    for i, (item, outcome) in enumerate(zip(dataset, outcomes, strict=True)):
        results = [_apply(name, check, item, outcome) for name, check in named]
        passed = outcome.ok and all(r.passed for r in results)
        items.append(ItemResult(index=i, item=dict(item), outcome=outcome, checks=results, passed=passed))
    check_summary = [
        CheckSummary(
            name=name,
            passed=sum(1 for it in items if it.checks[k].passed),
            failed=sum(1 for it in items if not it.checks[k].passed),
        )
        for k, (name, _) in enumerate(named)
    ]
    total = len(items)
    passed_count = sum(1 for it in items if it.passed)
    summary = EvaluationSummary(
        total=total,
        passed=passed_count,
        failed=total - passed_count,
        errors=sum(1 for it in items if not it.outcome.ok),
        pass_rate=passed_count / total if total else 0.0,
        checks=check_summary,
        wall_s=round(wall, 4),
        mean_run_s=round(sum(o.elapsed_s for o in outcomes) / total, 4) if total else 0.0,
    )
    return EvaluationReport(agent_factory=agent_factory, executor=repr(runner), items=items, summary=summary)


def evaluate_sync(agent_factory: str, dataset: Sequence[Mapping[str, Any]], **kwargs: Any) -> EvaluationReport:
    """Blocking twin of :func:`evaluate`."""
    return run_sync(evaluate(agent_factory, dataset, **kwargs), "await evaluate(...)")
