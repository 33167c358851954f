"""Shared recordings for the explorer tests (built once per module: each is a real scripted run)."""

from __future__ import annotations

import pytest

from agentfootprint.explain import Recording
from tests.explorer import _runs


@pytest.fixture(scope="module")
def runs() -> dict[str, Recording]:
    return {"wrong": _runs.wrong(), "fixed": _runs.fixed(), "paused": _runs.paused(), "secret": _runs.secret()}


@pytest.fixture(scope="module")
def timed(runs: dict[str, Recording]) -> list[tuple[Recording, float]]:
    """Six runs an hour apart: the four recorded ones and two failed copies (under other agents' names)."""
    failed_a = _runs.failed_copy(runs["wrong"], "failed-a")
    failed_b = _runs.failed_copy(runs["fixed"], "failed-b")
    order = [runs["wrong"], runs["fixed"], runs["paused"], runs["secret"], failed_a, failed_b]
    return [(rec, _runs.T0 + 3600.0 * i) for i, rec in enumerate(order)]
