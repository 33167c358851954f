"""A deep-copied recording shares no list between its commits: editing one commit's field leaves every other as
recorded (the engine points many empty fields at one shared empty, which a copy must not turn into one plain list)."""

from __future__ import annotations

from agentfootprint import Agent
from agentfootprint.explain import recording_of
from agentfootprint.providers import mock


def test_a_deep_copy_of_a_recording_keeps_every_commit_s_lists_apart() -> None:
    agent = Agent.create(provider=mock(replies=["done"]), model="m").system("Be brief.").build()
    original = recording_of(agent.run_sync("hi"))
    copied = original.model_copy(deep=True)
    log, before = copied.snapshot.commit_log, original.snapshot.commit_log
    lists = [c.redacted_paths for c in log] + [c.emits for c in log] + [c.writes for c in log]
    assert len({id(x) for x in lists}) == len(lists) and all(type(x) is list for x in lists)
    log[0].redacted_paths.append("answer")
    grown = next(c for c in log if c.writes)
    grown.writes.append(grown.writes[0])
    assert [c.redacted_paths for c in log[1:]] == [c.redacted_paths for c in before[1:]]
    assert [c.writes for c in log if c is not grown] == [
        b.writes for c, b in zip(log, before, strict=True) if c is not grown
    ]
    assert [c.emits for c in log] == [c.emits for c in before]
