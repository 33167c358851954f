"""``jwt_identity``: a ``bind_thread`` that verifies the caller's ``Authorization: Bearer`` JWT (PyJWT, lazily).

Keys come from a JWKS (a dict, or a URL fetched with caching; an unknown key id refetches, so keys can rotate).
RS256, ES256 and EdDSA; issuer, audience, expiry and not-before are checked with a leeway. ``sub`` → principal, the
tenant claim → tenant; with several issuers, ``iss`` → issuer too (a subject is unique only within its issuer).
Every failure is a 401 JSON refusal naming ``authorization``; the token is never echoed."""

from __future__ import annotations

import asyncio
import json
import logging
import time
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from agentfootprint.hosting.refusal import HostingConfigError, HostUnavailableError, WireRequestRefusal
from agentfootprint.identity import Identity

if TYPE_CHECKING:
    import httpx2

__all__ = ["DEFAULT_ALGORITHMS", "JwtIdentity", "jwt_identity"]

logger = logging.getLogger("agentfootprint.hosting")

DEFAULT_ALGORITHMS = ("RS256", "ES256", "EdDSA")
"""The signature algorithms accepted by default (``none`` and shared-secret HMAC never are)."""

_NEVER = frozenset({"none", "HS256", "HS384", "HS512"})
_MAX_TOKEN_CHARS = 16_384
_MAX_JWKS_BYTES = 1 << 20
_CHALLENGE = 'Bearer error="invalid_token"'


def _refuse(reason: str, *, challenge: str = _CHALLENGE) -> WireRequestRefusal:
    return WireRequestRefusal(reason, "authorization", headers={"WWW-Authenticate": challenge})


class JwtIdentity:
    """A ``bind_thread``: ``await binder(request)`` → the verified caller, or a 401 refusal (see ``jwt_identity``)."""

    def __init__(
        self,
        jwks: Mapping[str, Any] | str,
        *,
        issuer: str | Sequence[str],
        audience: str | Sequence[str],
        tenant_claim: str | None = "tenant",
        leeway: float = 60.0,
        algorithms: Sequence[str] = DEFAULT_ALGORITHMS,
        optional: bool = False,
        cache_seconds: float = 300.0,
        min_refresh_seconds: float = 30.0,
        http_client: httpx2.AsyncClient | None = None,
        fetch_timeout: float = 5.0,
    ) -> None:
        try:
            import jwt  # noqa: F401
        except ImportError:
            raise HostingConfigError("jwt_identity needs PyJWT: pip install 'agentfootprint[jwt]'") from None
        self._issuer = _names(issuer, "issuer")
        if any(len(name) > 256 for name in self._issuer):
            raise HostingConfigError("an issuer must be at most 256 characters")
        self._audience = _names(audience, "audience")
        self._algorithms = _algorithms(algorithms)
        if tenant_claim is not None and (not isinstance(tenant_claim, str) or not tenant_claim):
            raise HostingConfigError("tenant_claim must be a claim name or None")
        self._tenant_claim = tenant_claim
        self._leeway = _seconds(leeway, "leeway", 0, 600)
        self._cache_seconds = _seconds(cache_seconds, "cache_seconds", 1, 86_400)
        self._min_refresh = _seconds(min_refresh_seconds, "min_refresh_seconds", 0, 86_400)
        self._fetch_timeout = _seconds(fetch_timeout, "fetch_timeout", 0.1, 60)
        self._optional = bool(optional)
        self._http = http_client
        self._url: str | None = None
        self._keys: dict[str | None, Any] = {}
        self._fetched_at: float | None = None
        self._attempted_at: float | None = None
        self._inflight: asyncio.Task[bool] | None = None
        if isinstance(jwks, str):
            if not jwks.startswith(("https://", "http://")):
                raise HostingConfigError("jwks must be a JWKS dict or an http(s) URL")
            self._url = jwks
        elif isinstance(jwks, Mapping):
            self._keys = _key_set(jwks)
            if not self._keys:
                raise HostingConfigError("the JWKS holds no usable signing key (RSA, EC P-256 or Ed25519)")
        else:
            raise HostingConfigError("jwks must be a JWKS dict or an http(s) URL")

    async def __call__(self, request: Any) -> Identity | None:
        """The caller named by the request's bearer token (verified), or a 401 ``WireRequestRefusal``."""
        token = _bearer(request)
        if token is None:
            if self._optional:
                return None
            raise _refuse("ERR_AGUI_TOKEN_MISSING", challenge="Bearer")
        return await self.verify(token)

    async def verify(self, token: str) -> Identity:
        """Verify one token (a compact JWS) and return its caller; refusals never quote it."""
        import jwt

        try:
            header = jwt.get_unverified_header(token)
        except jwt.PyJWTError:
            raise _refuse("ERR_AGUI_TOKEN_MALFORMED") from None
        alg = header.get("alg")
        if not isinstance(alg, str) or alg not in self._algorithms:
            raise _refuse("ERR_AGUI_TOKEN_ALGORITHM")
        kid = header.get("kid")
        if kid is not None and not isinstance(kid, str):
            raise _refuse("ERR_AGUI_TOKEN_MALFORMED")
        key = _bound_to(await self._key(kid), alg)
        try:
            claims = jwt.decode(
                token,
                key=key,
                algorithms=[alg],
                audience=list(self._audience),
                issuer=list(self._issuer) if len(self._issuer) > 1 else self._issuer[0],
                leeway=self._leeway,
                options={"require": ["exp", "iss", "aud", "sub"]},
            )
        except jwt.PyJWTError as err:
            raise _refuse(_reason(err)) from None
        return self._identity(claims)

    def _identity(self, claims: Mapping[str, Any]) -> Identity:
        subject = claims.get("sub")
        if not isinstance(subject, str) or not subject or len(subject) > 256:
            raise _refuse("ERR_AGUI_TOKEN_CLAIMS")
        tenant = claims.get(self._tenant_claim) if self._tenant_claim is not None else None
        if tenant is not None and (not isinstance(tenant, str) or not tenant or len(tenant) > 256):
            raise _refuse("ERR_AGUI_TOKEN_CLAIMS")
        # One issuer: its subjects are the principals. Several: a subject is only unique within its issuer, so the
        # issuer is part of the caller (and of the owner key its threads are stored under).
        issuer = claims.get("iss") if len(self._issuer) > 1 else None
        if issuer is not None and issuer not in self._issuer:
            raise _refuse("ERR_AGUI_TOKEN_ISSUER")
        return Identity(principal=subject, tenant=tenant, issuer=issuer)

    # -- keys ------------------------------------------------------------------------------------------------------
    async def _key(self, kid: str | None) -> Any:
        waited = False
        if self._url is not None and self._stale():
            refresh = self._start_refresh(force=False)
            # A stale set that holds the key serves it while the refresh runs; otherwise wait for that refresh.
            if refresh is not None and self._find(kid) is None:
                await asyncio.shield(refresh)
                waited = True
        key = self._find(kid)
        if key is None and self._url is not None and not waited:
            refresh = self._start_refresh(force=True)
            if refresh is not None and await asyncio.shield(refresh):
                key = self._find(kid)
        if key is None:
            if not self._keys and self._url is not None:
                raise HostUnavailableError("ERR_AGUI_IDENTITY_UNAVAILABLE", "the signing keys could not be fetched")
            raise _refuse("ERR_AGUI_TOKEN_KEY_UNKNOWN")
        return key

    def _find(self, kid: str | None) -> Any:
        if kid is not None:
            return self._keys.get(kid)
        keys = list(self._keys.values())
        return keys[0] if len(keys) == 1 else None

    def _just_tried(self) -> bool:
        """A fetch was tried less than ``min_refresh_seconds`` ago (a forced one waits for the interval)."""
        return self._attempted_at is not None and time.monotonic() - self._attempted_at < self._min_refresh

    def _stale(self) -> bool:
        return self._fetched_at is None or time.monotonic() - self._fetched_at >= self._cache_seconds

    def _start_refresh(self, *, force: bool) -> asyncio.Task[bool] | None:
        """The one JWKS refresh in flight (joined, or started; a forced one at most every ``min_refresh_seconds``),
        or None when the keys are too fresh to refetch."""
        loop = asyncio.get_running_loop()
        running = self._inflight
        if running is not None and not running.done() and running.get_loop() is loop:
            return running
        if force and self._just_tried():
            return None
        if not force and not self._stale():
            return None
        self._attempted_at = time.monotonic()
        self._inflight = loop.create_task(self._refresh())
        return self._inflight

    async def _refresh(self) -> bool:
        """Fetch the JWKS within ``fetch_timeout`` in all (connect, headers and body); on failure keep the old keys."""
        started = time.monotonic()
        try:
            keys = await asyncio.wait_for(self._fetch(), self._fetch_timeout)
        except Exception as err:
            logger.warning("could not fetch the JWKS (%s); keeping %d cached keys", type(err).__name__, len(self._keys))
            self._fetched_at = started - self._cache_seconds + self._min_refresh
            return False
        self._keys, self._fetched_at = keys, started
        return True

    async def _fetch(self) -> dict[str | None, Any]:
        import httpx2

        assert self._url is not None
        if self._http is not None:
            raw = await _read_capped(self._http, self._url, self._fetch_timeout)
        else:
            async with httpx2.AsyncClient(timeout=self._fetch_timeout) as http:
                raw = await _read_capped(http, self._url, self._fetch_timeout)
        data = json.loads(raw)
        if not isinstance(data, Mapping):
            raise ValueError("the JWKS is not a JSON object")
        keys = _key_set(data)
        if not keys:
            raise ValueError("the JWKS holds no usable signing key")
        return keys


async def _read_capped(http: httpx2.AsyncClient, url: str, timeout: float) -> bytes:
    """The body of ``GET url`` (a 2xx), refused past ``_MAX_JWKS_BYTES``."""
    async with http.stream("GET", url, timeout=timeout) as response:
        response.raise_for_status()
        body = bytearray()
        async for chunk in response.aiter_bytes():
            body += chunk
            if len(body) > _MAX_JWKS_BYTES:
                raise ValueError("the JWKS is larger than 1 MiB")
    return bytes(body)


def _key_set(jwks: Mapping[str, Any]) -> dict[str | None, Any]:
    """The usable signature keys of a JWKS by ``kid`` (keys for encryption, or of unknown types, are skipped)."""
    from jwt import PyJWK, PyJWTError

    found: dict[str | None, Any] = {}
    entries = jwks.get("keys")
    if not isinstance(entries, list):
        return found
    for entry in entries:
        if not isinstance(entry, Mapping) or entry.get("use", "sig") != "sig":
            continue
        try:
            key = PyJWK(dict(entry))
        except (PyJWTError, ValueError, TypeError, KeyError):  # PyJWT says InvalidKeyError for a bad or unknown key
            continue
        if key.algorithm_name in _NEVER:
            continue
        kid = entry.get("kid")
        found[kid if isinstance(kid, str) else None] = key
    return found


_RSA_FAMILY = ("RS", "PS")


def _bound_to(key: Any, alg: str) -> Any:
    """``key`` for a token signed with ``alg``: an RSA JWK that names no ``alg`` verifies every RSA algorithm the
    host accepts (PyJWT binds such a key to RS256 alone); a key that names its algorithm keeps it."""
    data = getattr(key, "_jwk_data", None)
    if getattr(key, "algorithm_name", alg) == alg or not isinstance(data, Mapping) or data.get("alg") is not None:
        return key
    if data.get("kty") != "RSA" or not alg.startswith(_RSA_FAMILY):
        return key
    from jwt import PyJWK, PyJWTError

    try:
        return PyJWK(dict(data), algorithm=alg)
    except (PyJWTError, ValueError, TypeError, KeyError):  # cannot happen for a key already read as RSA; refused below
        return key


def _reason(err: Exception) -> str:
    import jwt
    from jwt.exceptions import InvalidSubjectError

    table: tuple[tuple[type[Exception], str], ...] = (
        (jwt.ExpiredSignatureError, "ERR_AGUI_TOKEN_EXPIRED"),
        (jwt.ImmatureSignatureError, "ERR_AGUI_TOKEN_NOT_YET_VALID"),
        (jwt.InvalidIssuerError, "ERR_AGUI_TOKEN_ISSUER"),
        (jwt.InvalidAudienceError, "ERR_AGUI_TOKEN_AUDIENCE"),
        (jwt.InvalidSignatureError, "ERR_AGUI_TOKEN_SIGNATURE"),
        (jwt.InvalidAlgorithmError, "ERR_AGUI_TOKEN_ALGORITHM"),
        (jwt.MissingRequiredClaimError, "ERR_AGUI_TOKEN_CLAIMS"),
        (InvalidSubjectError, "ERR_AGUI_TOKEN_CLAIMS"),
        (jwt.InvalidIssuedAtError, "ERR_AGUI_TOKEN_CLAIMS"),
    )
    for kind, reason in table:
        if isinstance(err, kind):
            return reason
    return "ERR_AGUI_TOKEN_MALFORMED"


def _bearer(request: Any) -> str | None:
    headers = getattr(request, "headers", None)
    value = headers.get("authorization") if headers is not None else None
    if value is None:
        return None
    scheme, _, token = str(value).strip().partition(" ")
    token = token.strip()
    if scheme.lower() != "bearer" or not token or len(token) > _MAX_TOKEN_CHARS or not token.isascii():
        raise _refuse("ERR_AGUI_TOKEN_MALFORMED")
    return token


def _names(value: str | Sequence[str], what: str) -> tuple[str, ...]:
    names = (value,) if isinstance(value, str) else tuple(value) if isinstance(value, Sequence) else ()
    if not names or not all(isinstance(n, str) and n for n in names):
        raise HostingConfigError(f"{what} must be a non-empty string or a list of them")
    return names


def _algorithms(value: Sequence[str]) -> frozenset[str]:
    chosen = frozenset(value) if not isinstance(value, str) else frozenset({value})
    if not chosen or chosen & _NEVER or not chosen <= {"RS256", "RS384", "RS512", "PS256", "ES256", "ES384", "EdDSA"}:
        raise HostingConfigError("algorithms must be asymmetric JWS algorithms (e.g. RS256, ES256, EdDSA)")
    return chosen


def _seconds(value: float, what: str, low: float, high: float) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or not low <= value <= high:
        raise HostingConfigError(f"{what} must be a number of seconds from {low} to {high}")
    return float(value)


def jwt_identity(
    jwks: Mapping[str, Any] | str,
    *,
    issuer: str | Sequence[str],
    audience: str | Sequence[str],
    tenant_claim: str | None = "tenant",
    leeway: float = 60.0,
    algorithms: Sequence[str] = DEFAULT_ALGORITHMS,
    optional: bool = False,
    cache_seconds: float = 300.0,
    min_refresh_seconds: float = 30.0,
    http_client: httpx2.AsyncClient | None = None,
    fetch_timeout: float = 5.0,
) -> JwtIdentity:
    """A ``bind_thread`` verifying ``Authorization: Bearer <JWT>`` against ``jwks`` (a dict, or a URL, cached).

    ``optional=True`` serves a request with no Authorization header as anonymous (a bad token is still 401).
    ``fetch_timeout`` bounds one whole JWKS fetch; while a refresh runs, a stale set that holds the key serves."""
    return JwtIdentity(
        jwks,
        issuer=issuer,
        audience=audience,
        tenant_claim=tenant_claim,
        leeway=leeway,
        algorithms=algorithms,
        optional=optional,
        cache_seconds=cache_seconds,
        min_refresh_seconds=min_refresh_seconds,
        http_client=http_client,
        fetch_timeout=fetch_timeout,
    )
