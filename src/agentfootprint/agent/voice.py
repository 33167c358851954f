"""The agent's voice for viewers: its name in narration, third-person commentary and first-person status lines."""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from agentfootprint._text import one_line
from agentfootprint.agent.errors import AgentBuildError
from agentfootprint.events import AgentEvent
from agentfootprint.events.types import EVENT_PREFIX, is_known_event_type

DEFAULT_APP_NAME = "Chatbot"
DEFAULT_COMMENTARY: dict[str, str] = {
    "agent.turn_start": "{{app_name}} was asked: {{message}}",
    "stream.llm_start": "{{app_name}} called the model {{model}} (iteration {{iteration}}).",
    "stream.tool_start": "{{app_name}} called the tool {{name}}.",
    "stream.tool_end": "The tool {{name}} answered.",
    "pause.requested": "{{app_name}} paused to ask a person.",
    "pause.resumed": "{{app_name}} continued after the answer.",
    "checkin.request": "{{app_name}} asked for consent before {{tool_name}}.",
    "error.tool": "The tool {{name}} failed.",
    "agent.turn_end": "{{app_name}} answered: {{answer}}",
}
DEFAULT_THINKING: dict[str, str] = {
    "agent.turn_start": "Reading your message…",
    "stream.llm_start": "Thinking…",
    "stream.tool_start": "Using {{name}}…",
    "pause.requested": "Waiting for your answer…",
    "checkin.request": "Asking before I run {{tool_name}}…",
}
_VAR = re.compile(r"\{\{\s*([A-Za-z_][A-Za-z0-9_]{0,60})\s*\}\}")
_MAX_NAME = 100
_MAX_TEMPLATE = 500
_MAX_SHOWN = 120


class Voice(BaseModel):
    """``app_name`` is the actor in narration; templates (``{{var}}`` from the event payload) are keyed by event
    type in short form (``stream.llm_start``); what a template does not name falls back to the bundled English."""

    model_config = ConfigDict(frozen=True)

    app_name: str = DEFAULT_APP_NAME
    commentary_templates: dict[str, str] = Field(default_factory=lambda: dict(DEFAULT_COMMENTARY))
    thinking_templates: dict[str, str] = Field(default_factory=lambda: dict(DEFAULT_THINKING))

    def commentary(self, event: AgentEvent) -> str | None:
        """The third-person line for ``event`` (for reports and tails), or None when no template names it."""
        return self._render(self.commentary_templates, event)

    def thinking(self, event: AgentEvent) -> str | None:
        """The first-person status for ``event`` (for a chat bubble), or None when no template names it."""
        return self._render(self.thinking_templates, event)

    def narrate(self, events: Iterable[AgentEvent]) -> list[str]:
        """The commentary of ``events`` in order, one line per event a template names."""
        return [line for line in (self.commentary(e) for e in events) if line is not None]

    def _render(self, templates: Mapping[str, str], event: AgentEvent) -> str | None:
        template = templates.get(event.type.removeprefix(EVENT_PREFIX))
        if template is None:
            return None
        values: dict[str, Any] = {**event.payload, "app_name": self.app_name}

        def fill(match: re.Match[str]) -> str:
            value = values.get(match.group(1))
            if value is None or isinstance(value, dict | list):
                return ""
            return one_line(str(value), _MAX_SHOWN)

        return _VAR.sub(fill, template)


def check_app_name(name: Any) -> str:
    """A display name: a non-empty str of at most 100 characters (refused by what is wrong, never quoted)."""
    if not isinstance(name, str) or not name.strip() or len(name) > _MAX_NAME:
        raise AgentBuildError(f"app_name must be a non-empty str of at most {_MAX_NAME} characters")
    return name


def check_templates(which: str, templates: Any) -> dict[str, str]:
    """Templates keyed by a known event type (short or full form), each a str of at most 500 characters."""
    if not isinstance(templates, Mapping):
        raise AgentBuildError(f"{which} must be a dict of event type -> template")
    out: dict[str, str] = {}
    for key, template in templates.items():
        if not is_known_event_type(key):
            raise AgentBuildError(f"{which} has a key that is not an event type (see agentfootprint.events)")
        if not isinstance(template, str) or len(template) > _MAX_TEMPLATE:
            raise AgentBuildError(f"{which} templates must be str of at most {_MAX_TEMPLATE} characters")
        out[str(key).removeprefix(EVENT_PREFIX)] = template
    return out


__all__ = ["DEFAULT_APP_NAME", "DEFAULT_COMMENTARY", "DEFAULT_THINKING", "Voice", "check_app_name", "check_templates"]
