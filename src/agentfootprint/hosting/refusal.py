"""Refusals of an AG-UI request: a 4xx status, a stable code and the wire field named, never the value."""

from __future__ import annotations

from typing import Any

from agentfootprint.errors import AgentFootprintError

__all__ = ["REFUSALS", "HostingConfigError", "WireRequestRefusal"]

REFUSALS: dict[str, tuple[int, str]] = {
    "ERR_AGUI_BODY_TOO_LARGE": (413, "the request body is larger than this server accepts"),
    "ERR_AGUI_NOT_JSON": (400, "the request body is not valid JSON"),
    "ERR_AGUI_BAD_CONTENT_LENGTH": (400, "the Content-Length header is not a length"),
    "ERR_AGUI_NOT_OBJECT": (400, "the request must be a JSON object"),
    "ERR_AGUI_TOO_DEEP": (400, "the request nests deeper than this server reads"),
    "ERR_AGUI_DUPLICATE_KEY": (400, "a JSON object in the request repeats a key"),
    "ERR_AGUI_UNREADABLE": (400, "the request could not be read as a turn"),
    "ERR_AGUI_FIELD_MISSING": (400, "a required field is missing"),
    "ERR_AGUI_FIELD_TYPE": (400, "a field has the wrong type"),
    "ERR_AGUI_FIELD_VALUE": (400, "a field has a value the protocol does not allow"),
    "ERR_AGUI_ID_FORMAT": (400, "an id must be 1 to 128 characters from A-Z, a-z, 0-9 and . _ : -"),
    "ERR_AGUI_ID_TOO_LONG": (400, "an id is longer than 128 characters"),
    "ERR_AGUI_DUPLICATE_ID": (400, "an id is repeated where each must be unique"),
    "ERR_AGUI_DUPLICATE_TOOL": (400, "a tool name is offered more than once"),
    "ERR_AGUI_MESSAGE_ROLE": (400, "a message has a role this server does not read"),
    "ERR_AGUI_SYSTEM_MESSAGE": (
        400,
        "system and developer messages are not accepted: the agent's instructions are its own",
    ),
    "ERR_AGUI_CONTENT": (400, "a message content part is not valid"),
    "ERR_AGUI_TEXT_INVALID": (400, "a text field is not valid Unicode"),
    "ERR_AGUI_TOOL_NAME": (
        400,
        "a tool name must be 1 to 64 characters from A-Z, a-z, 0-9 and _ . - (not starting with . or -)",
    ),
    "ERR_AGUI_NO_USER_MESSAGE": (400, "the newest message must be a user message"),
    "ERR_AGUI_EMPTY_MESSAGE": (400, "the user message is empty"),
    "ERR_AGUI_TOOL_NOT_ALLOWED": (400, "a frontend tool is not on this app's allow-list"),
    "ERR_AGUI_STATE_NOT_ACCEPTED": (400, "this app does not accept state from the page"),
    "ERR_AGUI_CONTEXT_NOT_ACCEPTED": (400, "this app does not accept context from the page"),
    "ERR_AGUI_STATE_INVALID": (422, "the app's validator refused the state"),
    "ERR_AGUI_CONTEXT_INVALID": (422, "the app's validator refused the context"),
    "ERR_AGUI_MESSAGE_REPLAYED": (409, "the newest user message was already run on this thread"),
    "ERR_AGUI_PAUSE_PENDING": (409, "this thread is paused: answer what it waits on first"),
    "ERR_AGUI_PAUSE_INCOMPLETE": (409, "the answer does not cover everything the paused run waits on"),
    "ERR_AGUI_TOOL_RESULT_NOT_HELD": (409, "a tool result answers no tool call this thread waits on"),
    "ERR_AGUI_RESUME_NOT_HELD": (409, "a resume entry answers no interrupt this thread waits on"),
    "ERR_AGUI_THREAD_BUSY": (409, "a turn is already running on this thread"),
    "ERR_AGUI_THREAD_NOT_FOUND": (404, "no such thread"),
    "ERR_AGUI_NO_RECORDING": (404, "this thread has no finished run to show yet"),
    "ERR_AGUI_TEXT_REQUIRED": (400, "this agent reads text: the user message carries none"),
}
"""Every refusal the core raises: code → (status, fixed message). Messages never carry request values."""


class WireRequestRefusal(AgentFootprintError):
    """A request refused by rule: ``status`` (4xx), stable ``code``, the wire ``field`` (with path) or None."""

    code = "ERR_AGUI_REFUSED"

    def __init__(self, code: str, field: str | None = None, *, status: int | None = None, message: str | None = None):
        known = REFUSALS.get(code)
        status = status if status is not None else (known[0] if known else 400)
        if not isinstance(status, int) or isinstance(status, bool) or not 400 <= status <= 499:
            raise ValueError("a WireRequestRefusal status must be a 4xx integer")
        text = message if message is not None else (known[1] if known else "the request was refused")
        super().__init__(text, code=code)
        self.status: int = status
        self.field: str | None = field
        self.message: str = text

    def to_json(self) -> dict[str, Any]:
        """The response body: ``{"error": {"code", "field", "message"}}``."""
        return {"error": {"code": self.code, "field": self.field, "message": self.message}}

    def __repr__(self) -> str:
        return f"WireRequestRefusal(code={self.code!r}, field={self.field!r}, status={self.status})"


class HostingConfigError(AgentFootprintError, ValueError):
    """The app configured the host wrongly (a duplicate allow-listed tool, an async validator): a bug, not a request."""

    code = "ERR_HOSTING_CONFIG"
