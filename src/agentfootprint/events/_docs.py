"""``docs/events.md`` from the catalogue: ``python -m agentfootprint.events._docs [path]`` writes it; ``render()``
is the text (a test fails when the page is stale)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from agentfootprint.events.catalogue import EventPayload, payload_classes

_HEAD = """# Events

Generated from `agentfootprint.events.catalogue` by `python -m agentfootprint.events._docs`: do not edit by hand.

Subscribe with `agent.on(type_or_glob, fn)`: an exact type (`agentfootprint.stream.llm_start` or `stream.llm_start`),
a domain glob (`stream.*`) or `*`. An event nobody listens to is never built. Each listener gets an `AgentEvent`:
`type`, `payload` (a plain mapping: what JSON shows) and `meta` (run id, stage, iteration, time, sequence, and the
run's session, correlation and trace ids). `event.typed` is the payload as its catalogue class below, and
`parse_payload(type, mapping)` validates one (`InvalidEventPayloadError` names the field, never the value).

**Redaction.** Every payload passes through the run's redaction before any listener sees it: a field whose name is
in the policy's `keys` (at any depth) reads `[REDACTED]`, and the policy's patterns and the secret values it learned
are scrubbed from every string. A secret the run learns only later (a password typed as free text, named by the
model as a tool argument afterwards) has already reached a live listener; `on_event=delayed(fn)` hands `fn` the
run's events once the leg ends, each redacted with every secret the run learned (see "Redaction" in agent.md).
*Redacted* below names the fields that carry user, model or tool text — what a policy usually has to scrub.
Optional fields appear only when the emitter gives them.
"""


def _type_text(annotation: Any) -> str:
    text = annotation.__name__ if isinstance(annotation, type) else str(annotation)
    return text.replace("typing.", "").replace("NoneType", "None").replace(" | ", " \\| ")


def _section(cls: type[EventPayload]) -> list[str]:
    doc = (cls.__doc__ or "").strip().splitlines()[0]
    lines = [f"### `{cls.event_type}`", "", f"{doc} Class `{cls.__name__}`.", ""]
    fields = cls.model_fields
    if fields:
        lines += ["| field | type | presence | redacted |", "|---|---|---|---|"]
        for name, info in fields.items():
            wire = info.alias or name
            need = "required" if info.is_required() else "optional"
            mark = "yes" if name in cls.redacted else ""
            lines.append(f"| `{wire}` | `{_type_text(info.annotation)}` | {need} | {mark} |")
        lines.append("")
    if cls.model_config.get("extra") == "allow":
        lines += ["Other keys may appear beside these (what the emitter spread into the payload).", ""]
    return lines


def render() -> str:
    """The page's text."""
    lines = [_HEAD]
    domain = ""
    for cls in payload_classes():
        here = cls.event_type.split(".")[1]
        if here != domain:
            domain = here
            lines += [f"## {domain}", ""]
        lines += _section(cls)
    return "\n".join(lines).rstrip() + "\n"


def main(argv: list[str]) -> int:
    target = Path(argv[0]) if argv else Path("docs/events.md")
    target.write_text(render(), encoding="utf-8")
    print(f"wrote {target}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
