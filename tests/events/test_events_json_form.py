"""The catalogue changed how events are built, not what they say: scripted runs emit the same JSON as before."""

from __future__ import annotations

import asyncio
import json
import warnings
from pathlib import Path
from typing import Any

from agentfootprint.events import payload_class

from ._scripted_runs import scripted_events

GOLDEN = Path(__file__).parent / "golden_events.json"


def _runs() -> dict[str, list[dict[str, Any]]]:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return asyncio.run(scripted_events())


def _comparable(events: list[dict[str, Any]]) -> str:
    """The events as JSON text; ``run_configured.extensions`` is left out (it lists the default extensions, which
    are configuration, not the event's form)."""
    out = []
    for e in events:
        if e["type"] == "agentfootprint.agent.run_configured":
            e = {"type": e["type"], "payload": {k: v for k, v in e["payload"].items() if k != "extensions"}}
        out.append(e)
    return json.dumps(out)


def test_scripted_runs_emit_the_same_json_as_before_the_catalogue() -> None:
    golden = json.loads(GOLDEN.read_text())
    now = _runs()
    assert list(now) == list(golden)
    for name, events in golden.items():
        assert _comparable(now[name]) == _comparable(events), name  # same keys, values and key order


def test_every_delivered_payload_validates_as_its_catalogue_class() -> None:
    for events in _runs().values():
        for event in events:
            parsed = payload_class(event["type"]).from_mapping(event["payload"])
            assert parsed.mapping() == event["payload"]
