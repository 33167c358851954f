"""Refusals of an AG-UI request: a 4xx status, a stable code and the wire field named, never the value."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from agentfootprint.errors import AgentFootprintError

__all__ = [
    "INVALID_RUN_INPUT",
    "REFUSALS",
    "RUN_INPUT_REASONS",
    "UNAUTHORIZED",
    "HostUnavailableError",
    "HostingConfigError",
    "WireRequestRefusal",
    "public_code",
]

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
    "ERR_AGUI_THREAD_EXPIRED": (410, "this thread was dropped from the server's memory: start a new thread"),
    "ERR_AGUI_NO_RECORDING": (404, "this thread has no finished run to show yet"),
    "ERR_AGUI_TEXT_REQUIRED": (400, "this agent reads text: the user message carries none"),
    "ERR_AGUI_MESSAGE_TOO_LARGE": (413, "a message is larger than this server accepts"),
    "ERR_AGUI_RATE_LIMITED": (429, "too many turns for this caller: retry after the time in Retry-After"),
    "ERR_AGUI_TOO_MANY_RUNNING": (429, "this caller already has as many turns running as allowed"),
    "ERR_AGUI_SIGN_IN_REQUIRED": (401, "only a signed-in caller has a list of threads"),
    "ERR_AGUI_TOKEN_MISSING": (401, "an Authorization: Bearer token is required"),
    "ERR_AGUI_TOKEN_MALFORMED": (401, "the bearer token is not a well-formed JWT"),
    "ERR_AGUI_TOKEN_ALGORITHM": (401, "the bearer token is signed with an algorithm this server does not accept"),
    "ERR_AGUI_TOKEN_KEY_UNKNOWN": (401, "the bearer token names a signing key this server does not know"),
    "ERR_AGUI_TOKEN_SIGNATURE": (401, "the bearer token's signature does not verify"),
    "ERR_AGUI_TOKEN_EXPIRED": (401, "the bearer token has expired"),
    "ERR_AGUI_TOKEN_NOT_YET_VALID": (401, "the bearer token is not valid yet"),
    "ERR_AGUI_TOKEN_ISSUER": (401, "the bearer token was issued by an issuer this server does not trust"),
    "ERR_AGUI_TOKEN_AUDIENCE": (401, "the bearer token is meant for another audience"),
    "ERR_AGUI_TOKEN_CLAIMS": (401, "the bearer token lacks a claim this server needs, or holds one of the wrong type"),
}
"""Every refusal the core raises: reason code → (status, fixed message). Messages never carry request values."""

INVALID_RUN_INPUT = "ERR_INVALID_RUN_INPUT"
"""The code every shape, id and body-reading refusal carries (the detailed code is its ``reason``)."""

RUN_INPUT_REASONS: frozenset[str] = frozenset(
    {
        "ERR_AGUI_NOT_JSON",
        "ERR_AGUI_NOT_OBJECT",
        "ERR_AGUI_TOO_DEEP",
        "ERR_AGUI_DUPLICATE_KEY",
        "ERR_AGUI_UNREADABLE",
        "ERR_AGUI_FIELD_MISSING",
        "ERR_AGUI_FIELD_TYPE",
        "ERR_AGUI_FIELD_VALUE",
        "ERR_AGUI_ID_FORMAT",
        "ERR_AGUI_ID_TOO_LONG",
        "ERR_AGUI_DUPLICATE_ID",
        "ERR_AGUI_DUPLICATE_TOOL",
        "ERR_AGUI_MESSAGE_ROLE",
        "ERR_AGUI_SYSTEM_MESSAGE",
        "ERR_AGUI_CONTENT",
        "ERR_AGUI_TEXT_INVALID",
        "ERR_AGUI_TOOL_NAME",
    }
)
"""Reasons refused as invalid run input: the request's shape, its ids' format and length, or an unreadable body."""

UNAUTHORIZED = "ERR_AGUI_UNAUTHORIZED"
"""The code every bearer-token refusal carries (401; the detailed code is its ``reason``)."""


def public_code(reason: str) -> str:
    """The code a refusal carries for a detailed ``reason``: the seed's for run input, one for tokens, else itself."""
    if reason in RUN_INPUT_REASONS:
        return INVALID_RUN_INPUT
    if reason.startswith("ERR_AGUI_TOKEN_"):
        return UNAUTHORIZED
    return reason


class WireRequestRefusal(AgentFootprintError):
    """A request refused by rule: ``status`` (4xx), stable ``code``, the wire ``field`` (with path) or None.

    ``reason`` is the detailed code; shape, id and body-reading refusals carry ``code`` ``ERR_INVALID_RUN_INPUT``."""

    code = "ERR_AGUI_REFUSED"

    def __init__(
        self,
        code: str,
        field: str | None = None,
        *,
        status: int | None = None,
        message: str | None = None,
        headers: Mapping[str, str] | None = None,
    ):
        known = REFUSALS.get(code)
        status = status if status is not None else (known[0] if known else 400)
        if not isinstance(status, int) or isinstance(status, bool) or not 400 <= status <= 499:
            raise ValueError("a WireRequestRefusal status must be a 4xx integer")
        text = message if message is not None else (known[1] if known else "the request was refused")
        super().__init__(text, code=public_code(code))
        self.reason: str = code
        self.status: int = status
        self.field: str | None = field
        self.message: str = text
        self.headers: dict[str, str] = dict(headers or {})

    def to_json(self) -> dict[str, Any]:
        """The response body: ``{"error": {"code", "field", "message", "reason"}}``."""
        return {"error": {"code": self.code, "field": self.field, "message": self.message, "reason": self.reason}}

    def __repr__(self) -> str:
        fields = f"code={self.code!r}, reason={self.reason!r}, field={self.field!r}, status={self.status}"
        return f"WireRequestRefusal({fields})"


class HostUnavailableError(AgentFootprintError):
    """The host cannot serve a request right now for a reason of its own (503 with ``Retry-After``), in fixed words."""

    def __init__(self, code: str, message: str, *, retry_after: int = 5) -> None:
        super().__init__(message, code=code)
        self.message = message
        self.retry_after = retry_after


class HostingConfigError(AgentFootprintError, ValueError):
    """The app configured the host wrongly (a duplicate allow-listed tool, an async validator): a bug, not a request."""

    code = "ERR_HOSTING_CONFIG"
