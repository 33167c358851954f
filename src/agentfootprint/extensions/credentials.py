"""Credentials a tool declares, resolved before it runs; consent a person must give pauses the run.

``AgentBuilder.credentials(provider, needs={"create_issue": need("github", scopes=["repo"], mode="user")})``. The
provider's ``get_credential(request)`` returns ``Issued(credential)`` or ``AuthorizationRequired(url)``. Issued: the
tool reads ``ctx.service("credential")`` (``.to_headers()``; never put it in a result). Authorization required:
by default (``on_authorization_required="pause"``) the run pauses before the tool runs and the caller finds the URL
in ``RunResult.extensions["credentials"]``; ``resume(checkpoint, "approved")`` resolves again and runs the tool. The
URL never enters tracked state, snapshots, narrative, events or the pause checkpoint. ``"tell-model"`` gives the
model a refusal instead and the turn raises ``CredentialConsentRequiredError``.
"""

from __future__ import annotations

import inspect
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol, runtime_checkable

from agentfootprint.agent import CallTool, Extension, RunContext, RunOutcome, ToolCallRequest
from agentfootprint.errors import AgentFootprintError
from agentfootprint.events import types as ev
from agentfootprint.events.catalogue import (
    CredentialAcquired,
    CredentialAuthorizationRequired,
    CredentialFailed,
    CredentialRequested,
)
from agentfootprint.identity import Identity
from agentfootprint.tools import ToolOutcome

__all__ = [
    "AuthorizationRequired",
    "Credential",
    "CredentialConsentRequiredError",
    "CredentialNeed",
    "CredentialProvider",
    "CredentialRequest",
    "Credentials",
    "Issued",
    "api_key",
    "bearer",
    "need",
    "static_tokens",
]

_ERR_CREDENTIAL = "ERR_CREDENTIAL"
_ERR_AUTHORIZATION_REQUIRED = "ERR_AUTHORIZATION_REQUIRED"


class Credential:
    """A vended secret with its way of being used (``to_headers()``); it never prints or serialises its value."""

    __slots__ = ("_headers", "kind")

    def __init__(self, kind: str, headers: Mapping[str, str]) -> None:
        self.kind = kind
        self._headers = dict(headers)

    def to_headers(self) -> dict[str, str]:
        return dict(self._headers)

    def __repr__(self) -> str:
        return f"<Credential kind={self.kind!r}>"

    __str__ = __repr__


def bearer(token: str) -> Credential:
    return Credential("bearer", {"Authorization": f"Bearer {token}"})


def api_key(key: str, header: str = "x-api-key") -> Credential:
    return Credential("api_key", {header: key})


@dataclass(frozen=True, slots=True)
class CredentialNeed:
    """What a tool needs: a service, scopes, and whose access (``machine`` by default, ``user`` delegated)."""

    service: str
    scopes: tuple[str, ...] = ()
    mode: Literal["machine", "user"] = "machine"


def need(service: str, *, scopes: Sequence[str] = (), mode: Literal["machine", "user"] = "machine") -> CredentialNeed:
    if not isinstance(service, str) or not service.strip():
        raise ValueError("a credential need names its service")
    if mode not in ("machine", "user"):
        raise ValueError("a credential need's mode is 'machine' or 'user'")
    return CredentialNeed(service=service, scopes=tuple(scopes), mode=mode)


@dataclass(frozen=True, slots=True)
class CredentialRequest:
    service: str
    scopes: tuple[str, ...] = ()
    mode: Literal["machine", "user"] = "machine"
    identity: Identity | None = None


@dataclass(frozen=True, slots=True)
class Issued:
    credential: Credential
    expires_at: float | None = None


@dataclass(frozen=True, slots=True)
class AuthorizationRequired:
    """A person must consent at ``authorization_url`` (a bearer capability: it goes to the caller only)."""

    authorization_url: str = field(repr=False)
    session_id: str | None = None


@runtime_checkable
class CredentialProvider(Protocol):
    def get_credential(self, request: CredentialRequest) -> Any: ...


class _Static:
    def __init__(self, creds: Mapping[str, str | Credential]) -> None:
        self._creds = {k: (bearer(v) if isinstance(v, str) else v) for k, v in creds.items()}

    def get_credential(self, request: CredentialRequest) -> Issued:
        found = self._creds.get(request.service)
        if found is None:
            raise KeyError(f"no credential for service '{request.service[:80]}'")
        return Issued(found)


def static_tokens(creds: Mapping[str, str | Credential]) -> CredentialProvider:
    """A service → credential map (a plain string is a bearer token); for development and tests."""
    return _Static(creds)


class CredentialConsentRequiredError(AgentFootprintError, RuntimeError):
    """Under ``tell-model``, a turn that met a consent block: the caller gets the URL, the model never did."""

    code = "ERR_CREDENTIAL_CONSENT_REQUIRED"

    def __init__(self, service: str, authorization_url: str) -> None:
        super().__init__(f"a person must authorize service '{service[:80]}' before this turn can finish")
        self.service = service
        self.authorization_url = authorization_url


def _refusal(service: str) -> str:
    return (
        f"[authorization required: '{service}' — a person must consent before this tool can run. The caller has "
        f"been told; you cannot do it yourself. Continue with work that does not need '{service}', or say plainly "
        "that you could not finish this step.]"
    )


class Credentials(Extension):
    """Resolves declared credentials around tool calls; the URL lives only on the agent instance and the result."""

    name = "credentials"

    def __init__(
        self,
        *,
        provider: CredentialProvider,
        needs: Mapping[str, CredentialNeed | str],
        on_authorization_required: Literal["pause", "tell-model"] = "pause",
    ) -> None:
        if not isinstance(provider, CredentialProvider):
            raise TypeError("credentials() takes a provider with get_credential(request)")
        if on_authorization_required not in ("pause", "tell-model"):
            raise ValueError("on_authorization_required must be 'pause' or 'tell-model'")
        self.provider = provider
        self.needs = {tool: (need(n) if isinstance(n, str) else n) for tool, n in needs.items()}
        for n in self.needs.values():
            if not isinstance(n, CredentialNeed):
                raise TypeError("credentials(needs=...) maps tool names to need(service, ...) or a service name")
        self.mode = on_authorization_required
        self._outstanding_of_last: dict[str, Any] = {}

    async def before_run(self, ctx: RunContext) -> None:
        ctx.agent_state["outstanding"] = {}  # cleared at every run door: one run never raises on another's block

    async def wrap_tool_call(self, ctx: RunContext, call: ToolCallRequest, call_next: CallTool) -> ToolOutcome:
        wanted = self.needs.get(call.name)
        if wanted is None or call.tool is None:
            return await call_next(call)
        facts = {"service": wanted.service, "tool": call.name, "tool_call_id": call.tool_call_id, "mode": wanted.mode}
        ctx.emit(ev.CREDENTIAL_REQUESTED, lambda: CredentialRequested(**facts))
        resuming = ctx.resumed and not ctx.state.get("first_done")  # the paused call comes first on a resumed leg
        ctx.state["first_done"] = True
        request = CredentialRequest(wanted.service, wanted.scopes, wanted.mode, ctx.identity)
        try:
            result = self.provider.get_credential(request)
            if inspect.isawaitable(result):
                result = await result
        except Exception as exc:
            failed = CredentialFailed(**facts, error_type=type(exc).__name__)
            ctx.emit(ev.CREDENTIAL_FAILED, failed)
            return ToolOutcome(
                content=f"Error: the credential for '{wanted.service}' could not be obtained ({type(exc).__name__})",
                is_error=True,
                error_code=_ERR_CREDENTIAL,
            )
        if isinstance(result, AuthorizationRequired):
            outstanding: dict[str, Any] = ctx.agent_state.setdefault("outstanding", {})
            outstanding[wanted.service] = {**facts, "authorization_url": result.authorization_url}
            required = lambda: CredentialAuthorizationRequired(**facts)  # noqa: E731  (the service, never the URL)
            ctx.emit(ev.CREDENTIAL_AUTHORIZATION_REQUIRED, required)
            if self.mode == "tell-model":
                return ToolOutcome(
                    content=_refusal(wanted.service), is_error=True, error_code=_ERR_AUTHORIZATION_REQUIRED
                )
            if resuming:  # consent was said to be given, yet the service still asks: no second pause
                return ToolOutcome(
                    content=_refusal(wanted.service), is_error=True, error_code=_ERR_AUTHORIZATION_REQUIRED
                )
            question = (
                f"Authorization required: a person must consent for '{wanted.service}' before '{call.name}' runs."
            )
            return ToolOutcome(content="", needs_check_in=True, question=question, args=dict(call.args))
        if not isinstance(result, Issued):
            return ToolOutcome(
                content=f"Error: the credential provider gave no credential for '{wanted.service}'",
                is_error=True,
                error_code=_ERR_CREDENTIAL,
            )
        ctx.agent_state.setdefault("outstanding", {}).pop(wanted.service, None)
        kind = result.credential.kind
        ctx.emit(ev.CREDENTIAL_ACQUIRED, lambda: CredentialAcquired(**facts, kind=kind))
        ctx.offer_to_tools("credential", result.credential)
        try:
            return await call_next(call)
        finally:
            ctx.offer_to_tools("credential", None)

    def authorization_required(self) -> list[dict[str, Any]]:
        """The consent blocks of the last run (service, tool, URL) — for the caller only."""
        return [dict(v) for v in self._outstanding_of_last.values()]

    async def after_run(self, ctx: RunContext, outcome: RunOutcome) -> None:
        outstanding: dict[str, Any] = dict(ctx.agent_state.get("outstanding", {}))
        self._outstanding_of_last = outstanding
        if self.mode == "tell-model" and outstanding and outcome.status == "completed":
            first = next(iter(outstanding.values()))
            raise CredentialConsentRequiredError(first["service"], first["authorization_url"])

    def result(self, ctx: RunContext, outcome: RunOutcome) -> Any:
        outstanding = ctx.agent_state.get("outstanding", {})
        return {"authorization_required": [dict(v) for v in outstanding.values()]} if outstanding else None
