"""Redaction: log, narrative, recorder events, evidence and served snapshots show [REDACTED]; stages see real values."""

from __future__ import annotations

import json
from typing import Any

from agentfootprint.flow import REDACTED, RedactionPolicy, decide, flow_chart, pause

SECRET = "123-45-6789"


class Spy:
    def __init__(self) -> None:
        self.events: list[Any] = []

    def on_read(self, frame: Any, key: str, value: Any) -> None:
        self.events.append(("read", key, value))

    def on_write(self, frame: Any, key: str, verb: str, value: Any) -> None:
        self.events.append(("write", key, value))

    def on_commit(self, commit: Any) -> None:
        self.events.append(("commit", commit.model_dump()))

    def on_decision(self, rid: str, evidence: Any) -> None:
        self.events.append(("decision", evidence))


def chart() -> Any:
    seen: dict[str, Any] = {}

    def intake(s: Any) -> None:
        s["ssn"] = s.args["ssn"]
        s["note"] = f"customer {s.args['ssn']} called"
        s["profile"] = {"name": "Ann", "ssn": s.args["ssn"]}

    def check(s: Any) -> Any:
        seen["real"] = s["ssn"]
        return decide(s, [{"when": {"ssn": {"eq": SECRET}}, "then": "ok", "label": "known"}], "ok")

    c = (
        flow_chart("Intake", intake, id="intake")
        .decider("Check", check, id="check")
        .branch("ok", "OK", lambda s: None)
        .end()
        .build()
    )
    return c, seen


async def test_secret_never_on_recorded_surfaces_but_stage_sees_it() -> None:
    c, seen = chart()
    spy = Spy()
    r = await c.run(args={"ssn": SECRET}, recorders=[spy], redaction=RedactionPolicy.of(keys=["ssn"]))
    assert seen["real"] == SECRET
    surfaces = [
        r.snapshot.model_dump_json(),
        r.narrative_text(),
        json.dumps(spy.events, default=str),
        json.dumps(r.state),
    ]
    for text in surfaces:
        assert SECRET not in text
    assert REDACTED in r.narrative_text()
    assert r.snapshot.redacted
    assert r.commit_log[0].redacted_paths == ["ssn"]
    assert r.snapshot.state["profile"]["ssn"] == REDACTED


async def test_patterns_scrub_strings() -> None:
    c = flow_chart("A", lambda s: s.set("msg", "card 4111-1111-1111-1111 ok"), id="a").build()
    r = await c.run(redaction=RedactionPolicy.of(patterns=[r"\d{4}-\d{4}-\d{4}-\d{4}"]))
    assert "4111" not in r.snapshot.model_dump_json()
    assert r.state["msg"] == f"card {REDACTED} ok"


async def test_checkpoint_keeps_real_values_and_says_so() -> None:
    c = flow_chart("A", lambda s: s.set("ssn", SECRET), id="a").then("P", lambda s: pause("q"), id="p").build()
    r = await c.run(redaction=RedactionPolicy.of(keys=["ssn"]))
    assert r.checkpoint is not None and r.checkpoint["contains_unredacted_values"] is True
    assert SECRET in json.dumps(r.checkpoint)
    assert SECRET not in r.snapshot.model_dump_json()
    r2 = await c.resume(r.checkpoint, "a", redaction=RedactionPolicy.of(keys=["ssn"]))
    assert SECRET not in r2.snapshot.model_dump_json()


async def test_failed_stage_error_text_scrubbed() -> None:
    def bad(s: Any) -> None:
        raise ValueError(f"bad value {s['ssn']}")

    c = flow_chart("A", lambda s: s.set("ssn", SECRET), id="a").then("B", bad, id="b").build()
    try:
        await c.run(redaction=RedactionPolicy.of(keys=["ssn"]))
    except ValueError as exc:
        assert SECRET not in exc.snapshot.model_dump_json()  # type: ignore[attr-defined]


def test_policy_union_only_adds() -> None:
    a = RedactionPolicy.of(keys=["x"])
    b = a.union(RedactionPolicy.of(keys=["y"], patterns=["z+"]))
    assert b.keys == {"x", "y"} and b.patterns == ("z+",)


async def test_secret_inside_json_text_is_scrubbed() -> None:
    import json as _json

    def stage(s: Any) -> None:
        s["tool_message"] = _json.dumps({"name": "Ann", "ssn": SECRET})

    r = await flow_chart("A", stage, id="a").build().run(redaction=RedactionPolicy.of(keys=["ssn"]))
    assert SECRET not in r.snapshot.model_dump_json() and SECRET not in r.narrative_text()
