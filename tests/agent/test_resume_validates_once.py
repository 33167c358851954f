"""An agent's resume validates the paused turn's engine checkpoint once (prepare_resume's load is the only one)."""

from __future__ import annotations

from typing import Any

import pytest

from agentfootprint.flow import _checkpoint as checkpoint_module
from agentfootprint.flow.pause import FlowCheckpoint

from ._integrity import Effects, ask_agent, roundtrip


async def test_an_agent_resume_validates_the_engine_checkpoint_once(monkeypatch: pytest.MonkeyPatch) -> None:
    fx = Effects()
    agent = ask_agent(fx)
    paused = await agent.run("refund")
    assert paused.checkpoint is not None
    seen = {"models": 0, "logs": 0}
    validate, check_log = FlowCheckpoint.model_validate, checkpoint_module.check_log

    def counting_validate(*args: Any, **kwargs: Any) -> FlowCheckpoint:
        seen["models"] += 1
        return validate(*args, **kwargs)

    def counting_check_log(*args: Any, **kwargs: Any) -> None:
        seen["logs"] += 1
        check_log(*args, **kwargs)

    monkeypatch.setattr(FlowCheckpoint, "model_validate", staticmethod(counting_validate))
    monkeypatch.setattr(checkpoint_module, "check_log", counting_check_log)
    done = await agent.resume(roundtrip(paused.checkpoint), "A")
    assert done.status == "completed"
    assert seen == {"models": 1, "logs": 1}
