"""Shared recordings for the explorer tests (built once per module: each is a real scripted run)."""

from __future__ import annotations

import pytest

from agentfootprint.explain import Recording
from tests.explorer import _runs


@pytest.fixture(scope="module")
def runs() -> dict[str, Recording]:
    return {"wrong": _runs.wrong(), "fixed": _runs.fixed(), "paused": _runs.paused(), "secret": _runs.secret()}
