"""Facts the docs state that the code decides: the default lease, and what an executor must be for localize."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from agentfootprint import Agent
from agentfootprint.explain import LocalizeError, localize_context_bug
from agentfootprint.hosting.sessions import DEFAULT_LEASE_SECONDS
from agentfootprint.providers import mock

DOCS = Path(__file__).parents[2] / "docs"


@pytest.mark.parametrize("page", ["scaling.md", "hosting.md"])
def test_every_default_lease_the_docs_state_is_the_codes(page: str) -> None:
    text = " ".join((DOCS / page).read_text(encoding="utf-8").split())
    stated = [float(n) for n in re.findall(r"(\d+) s by default", text)]
    stated += [float(n) for n in re.findall(r"\(default (\d+) s;", text)]
    assert stated and set(stated) == {DEFAULT_LEASE_SECONDS}


class SubmitOnly:
    """An executor that is only ``submit``: enough for batches, not for localize (as docs/scaling.md says)."""

    async def submit(self, spec: Any) -> Any:
        raise AssertionError("never reached")


async def test_localize_refuses_an_executor_without_a_rerunner_as_the_docs_say() -> None:
    assert "derives from `agentfootprint.scale.ExecutorBase`" in " ".join((DOCS / "scaling.md").read_text().split())
    agent = Agent.create(provider=mock(reply="x")).build()
    run = await agent.run("hi")
    with pytest.raises(LocalizeError):
        await localize_context_bug(
            agent, run=run, executor=SubmitOnly(), agent_factory="m:f", outcome_changed=lambda a: a != "x"
        )
