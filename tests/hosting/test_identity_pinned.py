"""``jwt_identity`` pinned: a kid-less token against one key, JWKs without ``use``, algorithm names, claim and size
bounds, configuration bounds, and the JWKS fetch (its timeout, size cap, cache and retry intervals), each exact."""

from __future__ import annotations

import asyncio
import importlib
import json
import logging
import sys
import time
from typing import Any

import httpx2
import jwt
import pytest
from test_hosting_identity import AUDIENCE, EC_KEY, ED_KEY, ISSUER, RSA_KEY, RSA_NEXT, Req, _Clock, jwk, token

from agentfootprint.hosting import HostingConfigError, HostUnavailableError, WireRequestRefusal, jwt_identity
from agentfootprint.hosting.identity import DEFAULT_ALGORITHMS, JwtIdentity
from agentfootprint.identity import Identity

URL = "https://login.example.test/jwks"
ALICE = Identity(principal="alice", tenant="acme")


def bound(jwks: Any = None, **kw: Any) -> Any:
    keys = {"keys": [jwk(RSA_KEY, "rsa-1"), jwk(EC_KEY, "ec-1")]} if jwks is None else jwks
    return jwt_identity(keys, issuer=kw.pop("issuer", ISSUER), audience=kw.pop("audience", AUDIENCE), **kw)


async def reason(binder: Any, authorization: str | None) -> str:
    with pytest.raises(WireRequestRefusal) as info:
        await binder(Req(authorization))
    refusal = info.value
    assert (refusal.status, refusal.code, refusal.field) == (401, "ERR_AGUI_UNAUTHORIZED", "authorization")
    expected = "Bearer" if refusal.reason == "ERR_AGUI_TOKEN_MISSING" else 'Bearer error="invalid_token"'
    assert refusal.headers == {"WWW-Authenticate": expected}
    return str(refusal.reason)


def forged(header: dict[str, Any], payload: dict[str, Any] | None = None) -> str:
    """A token with any header (its signature is junk: these are refused before any key is used)."""

    def part(data: dict[str, Any]) -> str:
        return jwt.utils.base64url_encode(json.dumps(data).encode()).decode()

    return f"{part(header)}.{part(payload or {'sub': 'alice'})}.c2ln"


# -- keys: kid, use, type ------------------------------------------------------------------------------------------


async def test_a_token_without_kid_is_verified_by_the_only_key_of_a_one_key_jwks() -> None:
    one = bound({"keys": [jwk(RSA_KEY, "rsa-1")]})
    assert await one(Req(f"Bearer {token(kid=None)}")) == ALICE
    assert await one(Req(f"Bearer {token(kid='rsa-1')}")) == ALICE
    assert await reason(one, f"Bearer {token(RSA_NEXT, kid=None)}") == "ERR_AGUI_TOKEN_SIGNATURE"
    assert await reason(bound(), f"Bearer {token(kid=None)}") == "ERR_AGUI_TOKEN_KEY_UNKNOWN", "control: two keys"


async def test_a_jwk_without_a_string_kid_is_the_key_for_tokens_without_one() -> None:
    for kid in (None, 5):
        entry = {k: v for k, v in jwk(RSA_KEY, "x").items() if k != "kid"}
        if kid is not None:
            entry["kid"] = kid
        nameless = bound({"keys": [entry]})
        assert await nameless(Req(f"Bearer {token(kid=None)}")) == ALICE
        assert await reason(nameless, f"Bearer {token(kid='rsa-1')}") == "ERR_AGUI_TOKEN_KEY_UNKNOWN"


async def test_a_jwk_without_use_signs_and_one_for_encryption_is_skipped() -> None:
    plain = {k: v for k, v in jwk(RSA_KEY, "rsa-1").items() if k != "use"}
    assert await bound({"keys": [plain]})(Req(f"Bearer {token()}")) == ALICE
    mixed = bound({"keys": [{**jwk(RSA_KEY, "rsa-1"), "use": "enc"}, jwk(EC_KEY, "ec-1")]})
    assert await reason(mixed, f"Bearer {token()}") == "ERR_AGUI_TOKEN_KEY_UNKNOWN"
    assert await mixed(Req(f"Bearer {token(EC_KEY, 'ec-1', 'ES256')}")) == ALICE


NO_USABLE_KEY = [
    {"keys": [{**jwk(RSA_KEY, "rsa-1"), "use": "enc"}]},
    {"keys": [{"kty": "oct", "k": "c2VjcmV0", "kid": "hmac"}]},
    {"keys": ["rsa-1", 5, None, {"kty": "RSA", "kid": "broken"}, {"kty": "nope"}]},
    {"keys": {"rsa-1": jwk(RSA_KEY, "rsa-1")}},
    {"keys": []},
    {},
]


@pytest.mark.parametrize("jwks", NO_USABLE_KEY, ids=["enc", "hmac", "junk", "keys-not-a-list", "empty", "no-keys"])
def test_a_jwks_with_no_usable_signing_key_is_refused_up_front(jwks: dict[str, Any]) -> None:
    with pytest.raises(HostingConfigError) as info:
        bound(jwks)
    assert str(info.value) == "the JWKS holds no usable signing key (RSA, EC P-256 or Ed25519)"


async def test_junk_entries_beside_a_good_key_are_skipped_given_or_fetched() -> None:
    junk = ["rsa-1", {"kty": "RSA", "kid": "rsa-1x"}, {"kty": "nope"}, {"kty": "oct", "k": "c2VjcmV0", "kid": "rsa-2"}]
    jwks = {"keys": [*junk, jwk(RSA_KEY, "rsa-1")]}
    fetched = fetching([jwks], [])
    for binder in (bound(jwks), fetched):  # one malformed key once made the whole fetched set a 503
        assert await binder(Req(f"Bearer {token()}")) == ALICE
        assert await reason(binder, f"Bearer {token(kid='rsa-2')}") == "ERR_AGUI_TOKEN_KEY_UNKNOWN"


# -- algorithms ----------------------------------------------------------------------------------------------------

ALGORITHM_CONFIG = "algorithms must be asymmetric JWS algorithms (e.g. RS256, ES256, EdDSA)"


@pytest.mark.parametrize("algorithms", [["XX999"], [], ["RS256", "HS256"], ["none"], "HS512", ["rs256"], ["ES256K"]])
def test_an_unsupported_or_symmetric_algorithm_name_is_refused_up_front(algorithms: Any) -> None:
    with pytest.raises(HostingConfigError) as info:
        bound(algorithms=algorithms)
    assert str(info.value) == ALGORITHM_CONFIG


async def test_only_the_chosen_algorithms_verify() -> None:
    assert DEFAULT_ALGORITHMS == ("RS256", "ES256", "EdDSA")
    es_only = bound(algorithms="ES256")
    assert await es_only(Req(f"Bearer {token(EC_KEY, 'ec-1', 'ES256')}")) == ALICE
    assert await reason(es_only, f"Bearer {token()}") == "ERR_AGUI_TOKEN_ALGORITHM"
    rs512 = bound({"keys": [{**jwk(RSA_KEY, "rsa-1"), "alg": "RS512"}]}, algorithms=["RS512", "PS256", "RS384"])
    assert await rs512(Req(f"Bearer {token(alg='RS512')}")) == ALICE
    assert await reason(rs512, f"Bearer {token()}") == "ERR_AGUI_TOKEN_ALGORITHM"
    ed = bound({"keys": [jwk(ED_KEY, "ed-1")]})
    assert await ed(Req(f"Bearer {token(ED_KEY, 'ed-1', 'EdDSA')}")) == ALICE


@pytest.mark.parametrize(
    ("header", "expected"),
    [
        ({"alg": "RS257", "kid": "rsa-1"}, "ERR_AGUI_TOKEN_ALGORITHM"),
        ({"alg": "", "kid": "rsa-1"}, "ERR_AGUI_TOKEN_ALGORITHM"),
        ({"alg": 5, "kid": "rsa-1"}, "ERR_AGUI_TOKEN_ALGORITHM"),
        ({"alg": ["RS256"], "kid": "rsa-1"}, "ERR_AGUI_TOKEN_ALGORITHM"),
        ({"kid": "rsa-1"}, "ERR_AGUI_TOKEN_ALGORITHM"),
        ({"alg": "HS256", "kid": "rsa-1"}, "ERR_AGUI_TOKEN_ALGORITHM"),
        ({"alg": "RS256", "kid": 5}, "ERR_AGUI_TOKEN_MALFORMED"),
        ({"alg": "RS256", "kid": ["rsa-1"]}, "ERR_AGUI_TOKEN_MALFORMED"),
        ({"alg": "RS256", "kid": "nobody"}, "ERR_AGUI_TOKEN_KEY_UNKNOWN"),
        ({"alg": "RS256", "kid": "rsa-1"}, "ERR_AGUI_TOKEN_SIGNATURE"),
    ],
)
async def test_a_header_naming_an_unknown_algorithm_or_a_bad_kid_is_refused_before_any_key(
    header: dict[str, Any], expected: str
) -> None:
    assert await reason(bound(), f"Bearer {forged(header)}") == expected


# -- claims --------------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("claims", "expected"),
    [
        ({"sub": ""}, "ERR_AGUI_TOKEN_CLAIMS"),
        ({"sub": "s" * 257}, "ERR_AGUI_TOKEN_CLAIMS"),
        ({"tenant": ""}, "ERR_AGUI_TOKEN_CLAIMS"),
        ({"tenant": "t" * 257}, "ERR_AGUI_TOKEN_CLAIMS"),
        ({"tenant": 5}, "ERR_AGUI_TOKEN_CLAIMS"),
        ({"iat": "yesterday"}, "ERR_AGUI_TOKEN_CLAIMS"),
        ({"aud": None}, "ERR_AGUI_TOKEN_CLAIMS"),
        ({"iss": None}, "ERR_AGUI_TOKEN_CLAIMS"),
    ],
)
async def test_claims_out_of_bounds_are_refused(claims: dict[str, Any], expected: str) -> None:
    assert await reason(bound(), f"Bearer {token(**claims)}") == expected


async def test_claims_at_their_bounds_bind() -> None:
    binder = bound()
    at_bounds = await binder(Req(f"Bearer {token(sub='s' * 256, tenant='t' * 256)}"))
    assert at_bounds == Identity(principal="s" * 256, tenant="t" * 256)
    untenanted = bound(tenant_claim=None)
    assert await untenanted(Req(f"Bearer {token(tenant=5)}")) == Identity(principal="alice")
    both = bound(audience=["other-api", AUDIENCE], issuer=[ISSUER])
    assert await both(Req(f"Bearer {token()}")) == ALICE, "a list of one issuer is one issuer: no issuer bound"


async def test_the_leeway_is_the_configured_one() -> None:
    now = time.time()
    assert await reason(bound(leeway=0), f"Bearer {token(exp=now - 5)}") == "ERR_AGUI_TOKEN_EXPIRED"
    assert await bound(leeway=600)(Req(f"Bearer {token(exp=now - 500)}")) == ALICE


# -- the Authorization header ---------------------------------------------------------------------------------------


KIDS = ("k", "kk", "kkk", "kkkk")


def sized(total: int) -> str:
    """A valid token exactly ``total`` characters long (two padding claims fill it: base64 grows 4 per 3 bytes)."""
    at = float(int(time.time()))  # one instant: a float clock's digits would move the length between tries
    near = (total - len(token(now=at, pad=""))) * 3 // 4
    for kid in KIDS:  # the header's length moves the total by other steps than the payload's
        for pad in range(near - 6, near + 6):
            for extra in range(4):
                candidate = token(kid=kid, now=at, pad="p" * pad, q="q" * extra)
                if len(candidate) == total:
                    return candidate
    raise AssertionError(f"no token of {total} characters")


async def test_the_bearer_scheme_is_case_blind_and_the_token_capped_at_16384_ascii_characters() -> None:
    binder = bound({"keys": [jwk(RSA_KEY, kid) for kid in ("rsa-1", *KIDS)]})
    assert await binder(Req(f"bearer {token()}")) == ALICE
    assert await binder(Req(f"  BEARER   {token()}  ")) == ALICE
    assert await binder(Req(f"Bearer {sized(16_384)}")) == ALICE
    assert await reason(binder, f"Bearer {sized(16_385)}") == "ERR_AGUI_TOKEN_MALFORMED"
    assert await reason(binder, f"Bearer {token()}é") == "ERR_AGUI_TOKEN_MALFORMED"
    assert await reason(binder, f"Token {token()}") == "ERR_AGUI_TOKEN_MALFORMED"
    assert await reason(binder, "Bearer") == "ERR_AGUI_TOKEN_MALFORMED"
    assert await reason(binder, None) == "ERR_AGUI_TOKEN_MISSING"


async def test_a_request_without_headers_is_anonymous_only_when_optional() -> None:
    assert await bound(optional=True)(object()) is None
    with pytest.raises(WireRequestRefusal) as info:
        await bound()(object())
    assert info.value.reason == "ERR_AGUI_TOKEN_MISSING"


# -- configuration bounds ------------------------------------------------------------------------------------------

BOUNDS = [
    ("leeway", 0, 600),
    ("cache_seconds", 1, 86_400),
    ("min_refresh_seconds", 0, 86_400),
    ("fetch_timeout", 0.1, 60),
]


@pytest.mark.parametrize(("name", "low", "high"), BOUNDS, ids=[b[0] for b in BOUNDS])
def test_each_duration_is_checked_against_its_range(name: str, low: float, high: float) -> None:
    for good in (low, high):
        bound(**{name: good})
    for bad in (low - 0.01, high + 0.01, True, "5", None):
        with pytest.raises(HostingConfigError) as info:
            bound(**{name: bad})
        assert str(info.value) == f"{name} must be a number of seconds from {low} to {high}"


def test_names_and_sources_are_checked_up_front() -> None:
    cases: list[tuple[dict[str, Any], str]] = [
        ({"issuer": []}, "issuer must be a non-empty string or a list of them"),
        ({"issuer": [ISSUER, ""]}, "issuer must be a non-empty string or a list of them"),
        ({"issuer": 5}, "issuer must be a non-empty string or a list of them"),
        ({"audience": ""}, "audience must be a non-empty string or a list of them"),
        ({"audience": [AUDIENCE, 5]}, "audience must be a non-empty string or a list of them"),
        ({"issuer": "i" * 257}, "an issuer must be at most 256 characters"),
        ({"issuer": [ISSUER, "i" * 257]}, "an issuer must be at most 256 characters"),
        ({"tenant_claim": ""}, "tenant_claim must be a claim name or None"),
        ({"tenant_claim": 5}, "tenant_claim must be a claim name or None"),
        ({"jwks": ["keys"]}, "jwks must be a JWKS dict or an http(s) URL"),
        ({"jwks": "ftp://login.example.test/jwks"}, "jwks must be a JWKS dict or an http(s) URL"),
        ({"jwks": "login.example.test/jwks"}, "jwks must be a JWKS dict or an http(s) URL"),
    ]
    for options, message in cases:
        jwks = options.pop("jwks", None)
        with pytest.raises(HostingConfigError) as info:
            bound(jwks, **options)
        assert str(info.value) == message, options
    bound(issuer="i" * 256)
    bound("http://login.example.test/jwks")
    bound(URL)


# -- the JWKS fetch ------------------------------------------------------------------------------------------------


def served(answers: list[Any], seen: list[httpx2.Request]) -> httpx2.AsyncClient:
    """A client whose JWKS endpoint answers each fetch with the next of ``answers`` (a JWKS, bytes or a status)."""

    def handler(request: httpx2.Request) -> httpx2.Response:
        seen.append(request)
        answer = answers[min(len(seen), len(answers)) - 1]
        if isinstance(answer, int):
            return httpx2.Response(answer)
        if isinstance(answer, bytes):
            return httpx2.Response(200, content=answer)
        return httpx2.Response(200, json=answer)

    return httpx2.AsyncClient(transport=httpx2.MockTransport(handler))


GOOD = {"keys": [jwk(RSA_KEY, "rsa-1")]}


def fetching(answers: list[Any], seen: list[httpx2.Request], **kw: Any) -> Any:
    """A binder whose JWKS is fetched from ``URL``, answered by ``served(answers, seen)``."""
    return jwt_identity(URL, issuer=ISSUER, audience=AUDIENCE, http_client=served(answers, seen), **kw)


async def test_the_fetch_asks_with_the_fetch_timeout_and_the_url_given() -> None:
    seen: list[httpx2.Request] = []
    binder = fetching([GOOD], seen, fetch_timeout=2.5)
    assert await binder(Req(f"Bearer {token()}")) == ALICE
    assert [(r.method, str(r.url)) for r in seen] == [("GET", URL)]
    assert seen[0].extensions["timeout"] == {"connect": 2.5, "read": 2.5, "write": 2.5, "pool": 2.5}


async def test_a_jwks_endpoint_that_never_answers_is_cut_off_at_fetch_timeout() -> None:
    cut_off: list[bool] = []

    async def handler(request: httpx2.Request) -> httpx2.Response:
        try:
            await asyncio.Event().wait()  # never set: only the binder's deadline ends this
        except asyncio.CancelledError:
            cut_off.append(True)
            raise
        raise AssertionError("unreachable")

    http = httpx2.AsyncClient(transport=httpx2.MockTransport(handler))
    binder = jwt_identity(URL, issuer=ISSUER, audience=AUDIENCE, http_client=http, fetch_timeout=0.1)
    with pytest.raises(HostUnavailableError) as info:
        await asyncio.wait_for(binder(Req(f"Bearer {token()}")), 30)  # the bound only ends a hang
    assert (info.value.code, str(info.value)) == (
        "ERR_AGUI_IDENTITY_UNAVAILABLE",
        "the signing keys could not be fetched",
    )
    assert cut_off == [True]


def exactly(size: int) -> bytes:
    """A good JWKS serialized to exactly ``size`` bytes (a padding member fills it)."""
    base = json.dumps({**GOOD, "pad": ""}).encode()
    data = json.dumps({**GOOD, "pad": "x" * (size - len(base))}).encode()
    assert len(data) == size
    return data


@pytest.mark.parametrize(
    ("answer", "problem"),
    [
        (exactly((1 << 20) + 1), "ValueError"),
        (b"[1, 2]", "ValueError"),
        (b"{not json", "JSONDecodeError"),
        ({"keys": [{"kty": "oct", "k": "c2VjcmV0"}]}, "ValueError"),
        (404, "HTTPStatusError"),
    ],
    ids=["over 1 MiB", "not an object", "not json", "no usable key", "404"],
)
async def test_a_bad_jwks_answer_is_a_503_logged_by_its_kind_and_1_mib_exactly_is_served(
    answer: Any, problem: str, caplog: pytest.LogCaptureFixture
) -> None:
    seen: list[httpx2.Request] = []
    caplog.set_level(logging.WARNING, logger="agentfootprint.hosting")
    binder = fetching([answer], seen)
    with pytest.raises(HostUnavailableError):
        await binder(Req(f"Bearer {token()}"))
    assert [r.getMessage() for r in caplog.records] == [f"could not fetch the JWKS ({problem}); keeping 0 cached keys"]
    control = fetching([exactly(1 << 20)], [])
    assert await control(Req(f"Bearer {token()}")) == ALICE


@pytest.fixture
def clock(monkeypatch: pytest.MonkeyPatch) -> _Clock:
    now = _Clock()
    monkeypatch.setattr(importlib.import_module("agentfootprint.hosting.identity"), "time", now)
    return now


async def settle() -> None:
    for _ in range(20):
        await asyncio.sleep(0)


async def test_a_failed_fetch_is_retried_after_min_refresh_seconds_and_not_before(clock: _Clock) -> None:
    seen: list[httpx2.Request] = []
    binder = fetching([500, GOOD], seen, cache_seconds=300, min_refresh_seconds=10)
    with pytest.raises(HostUnavailableError):
        await binder(Req(f"Bearer {token()}"))
    clock.now += 9.99
    with pytest.raises(HostUnavailableError):
        await binder(Req(f"Bearer {token()}"))
    assert len(seen) == 1, "no second fetch within the interval"
    clock.now += 0.01
    assert await binder(Req(f"Bearer {token()}")) == ALICE
    assert len(seen) == 2


async def test_a_cached_set_is_refreshed_at_cache_seconds_and_not_before(clock: _Clock) -> None:
    seen: list[httpx2.Request] = []
    both = {"keys": [jwk(RSA_KEY, "rsa-1"), jwk(RSA_NEXT, "rsa-2")]}
    binder = fetching([GOOD, both], seen, cache_seconds=60, min_refresh_seconds=0)
    assert await binder(Req(f"Bearer {token()}")) == ALICE
    clock.now += 59.99
    assert await binder(Req(f"Bearer {token()}")) == ALICE
    await settle()
    assert len(seen) == 1, "still fresh"
    clock.now += 0.01
    assert await binder(Req(f"Bearer {token()}")) == ALICE, "the stale set serves the key it holds"
    await settle()
    assert len(seen) == 2, "and one refresh ran meanwhile"
    assert await binder(Req(f"Bearer {token(RSA_NEXT, 'rsa-2')}")) == ALICE
    assert len(seen) == 2, "the refreshed set is fresh again"


async def test_an_unknown_kid_refetches_at_min_refresh_seconds_and_not_before(clock: _Clock) -> None:
    seen: list[httpx2.Request] = []
    binder = fetching([GOOD], seen, cache_seconds=3600, min_refresh_seconds=10)
    assert await binder(Req(f"Bearer {token()}")) == ALICE
    clock.now += 9.99
    assert await reason(binder, f"Bearer {token(kid='rsa-9')}") == "ERR_AGUI_TOKEN_KEY_UNKNOWN"
    assert len(seen) == 1
    clock.now += 0.01
    assert await reason(binder, f"Bearer {token(kid='rsa-9')}") == "ERR_AGUI_TOKEN_KEY_UNKNOWN"
    assert len(seen) == 2, "a forced refetch once the interval has passed"
    assert await reason(binder, f"Bearer {token(kid='rsa-9')}") == "ERR_AGUI_TOKEN_KEY_UNKNOWN"
    assert len(seen) == 2


@pytest.mark.parametrize("name", ["RS256", "RS384", "RS512", "PS256", "ES256", "ES384", "EdDSA"])
async def test_each_asymmetric_algorithm_name_may_be_chosen_alone(name: str) -> None:
    only = bound(algorithms=[name])
    expected = "ERR_AGUI_TOKEN_SIGNATURE" if name == "RS256" else "ERR_AGUI_TOKEN_ALGORITHM"
    assert await reason(only, f"Bearer {token(RSA_NEXT)}") == expected


def test_without_pyjwt_the_binder_says_which_extra_to_install(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "jwt", None)
    with pytest.raises(HostingConfigError) as info:
        bound()
    assert str(info.value) == "jwt_identity needs PyJWT: pip install 'agentfootprint[jwt]'"


async def test_a_token_that_is_not_a_jws_is_malformed() -> None:
    for junk in ("not.a.jwt", "a.b", "x", "....", "e30"):
        assert await reason(bound(), f"Bearer {junk}") == "ERR_AGUI_TOKEN_MALFORMED"


@pytest.mark.parametrize("make", [jwt_identity, JwtIdentity])
async def test_the_defaults_are_a_5s_fetch_300s_cache_and_30s_between_refetches(make: Any, clock: _Clock) -> None:
    seen: list[httpx2.Request] = []
    binder = make(URL, issuer=ISSUER, audience=AUDIENCE, http_client=served([GOOD], seen))
    assert await binder(Req(f"Bearer {token()}")) == ALICE
    assert seen[0].extensions["timeout"] == {"connect": 5.0, "read": 5.0, "write": 5.0, "pool": 5.0}
    clock.now += 29.99
    assert await reason(binder, f"Bearer {token(kid='rsa-9')}") == "ERR_AGUI_TOKEN_KEY_UNKNOWN"
    assert len(seen) == 1
    clock.now += 0.01
    assert await reason(binder, f"Bearer {token(kid='rsa-9')}") == "ERR_AGUI_TOKEN_KEY_UNKNOWN"
    assert len(seen) == 2, "30 s after the last fetch an unknown kid refetches"
    clock.now += 299.99 - 30
    assert await binder(Req(f"Bearer {token()}")) == ALICE
    await settle()
    assert len(seen) == 2, "fresh until 300 s after the last fetch"
    clock.now += 30.01
    assert await binder(Req(f"Bearer {token()}")) == ALICE
    await settle()
    assert len(seen) == 3


async def test_an_rsa_jwk_without_alg_verifies_every_accepted_rsa_algorithm_and_one_with_alg_only_its_own() -> None:
    bare = {k: v for k, v in jwk(RSA_KEY, "rsa-1").items() if k != "alg"}
    assert "alg" not in bare
    rsa = ["RS256", "RS384", "RS512", "PS256"]
    loose = bound({"keys": [bare]}, algorithms=rsa)
    for alg in rsa:
        assert await loose(Req(f"Bearer {token(alg=alg)}")) == ALICE, alg
    assert await reason(loose, f"Bearer {token(RSA_NEXT, alg='RS512')}") == "ERR_AGUI_TOKEN_SIGNATURE"
    assert await reason(loose, f"Bearer {token(EC_KEY, alg='ES256')}") == "ERR_AGUI_TOKEN_ALGORITHM"
    pinned = bound({"keys": [{**bare, "alg": "RS256"}]}, algorithms=rsa)
    assert await pinned(Req(f"Bearer {token(alg='RS256')}")) == ALICE
    assert await reason(pinned, f"Bearer {token(alg='RS512')}") == "ERR_AGUI_TOKEN_ALGORITHM"
    only = bound({"keys": [bare]}, algorithms=["RS256"])
    assert await reason(only, f"Bearer {token(alg='RS512')}") == "ERR_AGUI_TOKEN_ALGORITHM"
