"""``jwt_identity``: verified bearer tokens bind the caller; every bad token is a 401 that never echoes it."""

from __future__ import annotations

import asyncio
import importlib
import json
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx2
import jwt
import pytest
from agui_http import body, client, factory, text_of, turn, user
from agui_live import live_server, stream
from agui_served import JWT_AUDIENCE, JWT_ISSUER
from cryptography.hazmat.primitives.asymmetric import ec, ed25519, rsa
from hypothesis import given, settings
from hypothesis import strategies as st
from jwt.algorithms import ECAlgorithm, OKPAlgorithm, RSAAlgorithm
from tests._live import free_port, stop, wait_healthy

from agentfootprint.hosting import (
    HostingConfigError,
    HostUnavailableError,
    WireRequestRefusal,
    ag_ui_app,
    jwt_identity,
)
from agentfootprint.identity import Identity
from agentfootprint.providers import mock

HERE = Path(__file__).parent
ISSUER = "https://login.example.test/"
AUDIENCE = "agent-api"
RSA_KEY = rsa.generate_private_key(public_exponent=65537, key_size=2048)
RSA_NEXT = rsa.generate_private_key(public_exponent=65537, key_size=2048)
EC_KEY = ec.generate_private_key(ec.SECP256R1())
ED_KEY = ed25519.Ed25519PrivateKey.generate()


def jwk(private: Any, kid: str) -> dict[str, Any]:
    """The public JWK of a private key, with its kid."""
    public = private.public_key()
    if isinstance(private, rsa.RSAPrivateKey):
        data = RSAAlgorithm.to_jwk(public, as_dict=True)
    elif isinstance(private, ec.EllipticCurvePrivateKey):
        data = ECAlgorithm.to_jwk(public, as_dict=True)
    else:
        data = OKPAlgorithm.to_jwk(public, as_dict=True)
    return {**data, "kid": kid, "use": "sig"}


JWKS = {"keys": [jwk(RSA_KEY, "rsa-1"), jwk(EC_KEY, "ec-1"), jwk(ED_KEY, "ed-1")]}


def token(
    private: Any = RSA_KEY, kid: str | None = "rsa-1", alg: str = "RS256", now: float | None = None, **claims: Any
) -> str:
    """A signed token: issuer, audience, subject and an expiry an hour out unless ``claims`` say otherwise."""
    at = time.time() if now is None else now
    payload = {"iss": ISSUER, "aud": AUDIENCE, "sub": "alice", "tenant": "acme", "iat": at, "exp": at + 3600}
    payload.update(claims)
    payload = {k: v for k, v in payload.items() if v is not None}
    headers = {"kid": kid} if kid is not None else {}
    return jwt.encode(payload, private, algorithm=alg, headers=headers)


class Req:
    """The part of a request a binder reads."""

    def __init__(self, authorization: str | None) -> None:
        self.headers = {"authorization": authorization} if authorization is not None else {}


def binder(**kw: Any) -> Any:
    return jwt_identity(JWKS, issuer=ISSUER, audience=AUDIENCE, **kw)


async def refused(bound: Any, authorization: str | None) -> WireRequestRefusal:
    with pytest.raises(WireRequestRefusal) as info:
        await bound(Req(authorization))
    refusal = info.value
    assert (refusal.status, refusal.code, refusal.field) == (401, "ERR_AGUI_UNAUTHORIZED", "authorization")
    assert refusal.headers["WWW-Authenticate"].startswith("Bearer")
    if authorization:
        text = json.dumps(refusal.to_json()) + str(refusal) + repr(refusal)
        assert authorization.split()[-1] not in text and authorization.split()[-1][:20] not in text
    return refusal


@pytest.mark.parametrize(
    ("private", "kid", "alg"), [(RSA_KEY, "rsa-1", "RS256"), (EC_KEY, "ec-1", "ES256"), (ED_KEY, "ed-1", "EdDSA")]
)
async def test_a_valid_token_binds_sub_and_tenant(private: Any, kid: str, alg: str) -> None:
    bound = await binder()(Req(f"Bearer {token(private, kid, alg)}"))
    assert bound == Identity(principal="alice", tenant="acme")


async def test_no_tenant_claim_binds_the_principal_alone_and_the_claim_name_is_the_apps() -> None:
    assert await binder()(Req(f"Bearer {token(tenant=None)}")) == Identity(principal="alice")
    bound = await binder(tenant_claim="org")(Req(f"Bearer {token(org='umbrella')}"))
    assert bound == Identity(principal="alice", tenant="umbrella")


async def test_the_leeway_is_60_seconds_either_way() -> None:
    now = time.time()
    assert (await binder()(Req(f"Bearer {token(exp=now - 50)}"))).principal == "alice"
    assert (await binder()(Req(f"Bearer {token(nbf=now + 50)}"))).principal == "alice"
    assert (await refused(binder(), f"Bearer {token(exp=now - 90)}")).reason == "ERR_AGUI_TOKEN_EXPIRED"
    assert (await refused(binder(), f"Bearer {token(nbf=now + 90)}")).reason == "ERR_AGUI_TOKEN_NOT_YET_VALID"


def _none_token() -> str:
    return jwt.encode({"iss": ISSUER, "aud": AUDIENCE, "sub": "x", "exp": time.time() + 60}, None, algorithm="none")


def _hs_token() -> str:
    """The classic confusion: an HMAC token keyed with the public key's text, naming the RSA key's id."""
    import hashlib
    import hmac

    def part(data: dict[str, Any]) -> str:
        return jwt.utils.base64url_encode(json.dumps(data).encode()).decode()

    signing = part({"alg": "HS256", "typ": "JWT", "kid": "rsa-1"}) + "." + part({"iss": ISSUER, "sub": "x"})
    secret = json.dumps(JWKS["keys"][0]).encode()
    mac = hmac.new(secret, signing.encode(), hashlib.sha256).digest()
    return f"{signing}.{jwt.utils.base64url_encode(mac).decode()}"


def _tampered() -> str:
    head, _payload, signature = token().split(".")
    forged = jwt.utils.base64url_encode(json.dumps({"iss": ISSUER, "aud": AUDIENCE, "sub": "root"}).encode())
    return f"{head}.{forged.decode()}.{signature}"


BAD_TOKENS = [
    ("absent", None, "ERR_AGUI_TOKEN_MISSING"),
    ("not bearer", "Basic YWxpY2U6cHc=", "ERR_AGUI_TOKEN_MALFORMED"),
    ("empty bearer", "Bearer ", "ERR_AGUI_TOKEN_MALFORMED"),
    ("garbage", "Bearer not.a.jwt", "ERR_AGUI_TOKEN_MALFORMED"),
    ("alg none", f"Bearer {_none_token()}", "ERR_AGUI_TOKEN_ALGORITHM"),
    ("hs256 with the public key", f"Bearer {_hs_token()}", "ERR_AGUI_TOKEN_ALGORITHM"),
    ("wrong issuer", f"Bearer {token(iss='https://evil.test/')}", "ERR_AGUI_TOKEN_ISSUER"),
    ("wrong audience", f"Bearer {token(aud='other-api')}", "ERR_AGUI_TOKEN_AUDIENCE"),
    ("no expiry", f"Bearer {token(exp=None)}", "ERR_AGUI_TOKEN_CLAIMS"),
    ("no subject", f"Bearer {token(sub=None)}", "ERR_AGUI_TOKEN_CLAIMS"),
    ("subject not a string", f"Bearer {token(sub=42)}", "ERR_AGUI_TOKEN_CLAIMS"),
    ("tenant not a string", f"Bearer {token(tenant=['a'])}", "ERR_AGUI_TOKEN_CLAIMS"),
    ("unknown kid", f"Bearer {token(kid='rsa-9')}", "ERR_AGUI_TOKEN_KEY_UNKNOWN"),
    ("no kid, several keys", f"Bearer {token(kid=None)}", "ERR_AGUI_TOKEN_KEY_UNKNOWN"),
    ("signed by another key", f"Bearer {token(RSA_NEXT)}", "ERR_AGUI_TOKEN_SIGNATURE"),
    ("key of another type", f"Bearer {token(RSA_KEY, 'ec-1')}", "ERR_AGUI_TOKEN_ALGORITHM"),
    ("tampered payload", f"Bearer {_tampered()}", "ERR_AGUI_TOKEN_SIGNATURE"),
    ("oversized", "Bearer " + "a" * 20_000, "ERR_AGUI_TOKEN_MALFORMED"),
]


@pytest.mark.parametrize(("name", "authorization", "reason"), BAD_TOKENS, ids=[b[0] for b in BAD_TOKENS])
async def test_every_bad_token_is_a_401_naming_authorization(name: str, authorization: str | None, reason: str) -> None:
    assert (await refused(binder(), authorization)).reason == reason


async def test_optional_serves_a_request_without_a_token_as_anonymous_but_never_a_bad_one() -> None:
    assert await binder(optional=True)(Req(None)) is None
    await refused(binder(optional=True), "Bearer not.a.jwt")


async def test_a_jwks_url_is_fetched_once_cached_and_refetched_for_a_new_key_id() -> None:
    served = {"keys": [jwk(RSA_KEY, "rsa-1")]}
    fetches: list[str] = []

    def handler(request: httpx2.Request) -> httpx2.Response:
        fetches.append(str(request.url))
        return httpx2.Response(200, json=served)

    http = httpx2.AsyncClient(transport=httpx2.MockTransport(handler))
    bound = jwt_identity(
        "https://login.example.test/jwks.json",
        issuer=ISSUER,
        audience=AUDIENCE,
        http_client=http,
        min_refresh_seconds=0,
    )
    for _ in range(3):
        assert (await bound(Req(f"Bearer {token()}"))).principal == "alice"
    assert fetches == ["https://login.example.test/jwks.json"], "cached"

    served = {"keys": [jwk(RSA_NEXT, "rsa-2")]}  # the issuer rotated its key
    assert (await bound(Req(f"Bearer {token(RSA_NEXT, 'rsa-2')}"))).principal == "alice"
    assert len(fetches) == 2
    assert (await refused(bound, f"Bearer {token()}")).reason == "ERR_AGUI_TOKEN_KEY_UNKNOWN", "the old key retired"
    await http.aclose()


async def test_unknown_key_ids_refetch_at_most_once_per_interval() -> None:
    fetches: list[int] = []

    def handler(request: httpx2.Request) -> httpx2.Response:
        fetches.append(1)
        return httpx2.Response(200, json={"keys": [jwk(RSA_KEY, "rsa-1")]})

    http = httpx2.AsyncClient(transport=httpx2.MockTransport(handler))
    bound = jwt_identity("https://login.example.test/jwks", issuer=ISSUER, audience=AUDIENCE, http_client=http)
    for i in range(10):
        await refused(bound, f"Bearer {token(kid=f'forged-{i}')}")
    assert len(fetches) == 1, "random key ids cannot make the host hammer the issuer"
    await http.aclose()


async def test_an_unreachable_jwks_is_a_503_with_retry_after_not_a_401() -> None:
    def handler(request: httpx2.Request) -> httpx2.Response:
        return httpx2.Response(500)

    http = httpx2.AsyncClient(transport=httpx2.MockTransport(handler))
    bound = jwt_identity("https://login.example.test/jwks", issuer=ISSUER, audience=AUDIENCE, http_client=http)
    app = ag_ui_app(factory(mock("hi")), bind_thread=bound)
    async with client(app) as web:
        response = await web.post("/agui", json=body(user("u1")), headers={"authorization": f"Bearer {token()}"})
    assert response.status_code == 503 and response.headers["retry-after"] == "5"
    assert response.json()["error"]["code"] == "ERR_AGUI_IDENTITY_UNAVAILABLE"
    await http.aclose()


def test_configuration_is_checked_up_front() -> None:
    with pytest.raises(HostingConfigError):
        jwt_identity({"keys": []}, issuer=ISSUER, audience=AUDIENCE)
    with pytest.raises(HostingConfigError):
        jwt_identity("ftp://x", issuer=ISSUER, audience=AUDIENCE)
    with pytest.raises(HostingConfigError):
        jwt_identity(JWKS, issuer="", audience=AUDIENCE)
    with pytest.raises(HostingConfigError):
        jwt_identity(JWKS, issuer=ISSUER, audience=AUDIENCE, algorithms=["HS256"])
    with pytest.raises(HostingConfigError):
        jwt_identity(JWKS, issuer=ISSUER, audience=AUDIENCE, leeway=-1)


async def test_over_http_a_refused_token_never_runs_the_agent_and_threads_are_per_subject() -> None:
    provider = mock(replies=["one", "two"])
    app = ag_ui_app(factory(provider), bind_thread=binder())
    alice = {"authorization": f"Bearer {token()}"}
    bob = {"authorization": f"Bearer {token(sub='bob')}"}
    async with client(app) as http:
        bad = await http.post("/agui", json=body(user("u1")), headers={"authorization": f"Bearer {token(aud='x')}"})
        assert bad.status_code == 401 and bad.headers["www-authenticate"].startswith("Bearer")
        assert bad.json()["error"] == {
            "code": "ERR_AGUI_UNAUTHORIZED",
            "field": "authorization",
            "message": "the bearer token is meant for another audience",
            "reason": "ERR_AGUI_TOKEN_AUDIENCE",
        }
        missing = await http.post("/agui", json=body(user("u1")))
        assert missing.status_code == 401 and missing.json()["error"]["reason"] == "ERR_AGUI_TOKEN_MISSING"
        assert provider.calls == 0, "the agent never ran"
        status, events = await turn(http, body(user("u1")), headers=alice)
        assert status == 200 and text_of(events) == "one"
        status, refused_bob = await turn(http, body(user("u1"), user("u2")), headers=bob)
        assert status == 404 and refused_bob["error"]["reason"] == "ERR_AGUI_THREAD_NOT_FOUND"
        assert (await http.get("/agui/threads/t1/recording", headers=bob)).status_code == 404
        assert (await http.get("/agui/threads/t1/recording", headers=alice)).status_code == 200


@pytest.fixture
def jwks_server(tmp_path: Path) -> Iterator[tuple[str, Path]]:
    """A live JWKS endpoint on 127.0.0.1 serving the file it is given (rewrite the file to rotate keys)."""
    keys = tmp_path / "jwks.json"
    keys.write_text(json.dumps({"keys": [jwk(RSA_KEY, "rsa-1")]}))
    port = free_port()
    command = [sys.executable, "-m", "uvicorn", "jwks_served:build_app", "--factory", "--host", "127.0.0.1"]
    command += ["--port", str(port), "--log-level", "warning", "--app-dir", str(HERE)]
    env = {**os.environ, "JWKS_FILE": str(keys)}
    proc = subprocess.Popen(command, cwd=HERE, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    base = f"http://127.0.0.1:{port}"
    try:
        wait_healthy(base, proc, what="JWKS server")
        yield f"{base}/jwks.json", keys
    finally:
        stop(proc)


async def test_over_live_servers_tokens_verify_against_a_fetched_jwks_that_rotates(
    jwks_server: tuple[str, Path], tmp_path: Path
) -> None:
    url, keys = jwks_server
    served = {"iss": JWT_ISSUER, "aud": JWT_AUDIENCE}
    alice = {"authorization": f"Bearer {token(**served)}"}
    with live_server(tmp_path / "threads.db", jwks_url=url) as base:
        agui = f"{base}/agui"
        async with httpx2.AsyncClient(timeout=30) as http:
            events = await stream(http, agui, body(user("u1", "hi"), thread="a-1"), headers=alice)
            assert events[-1]["type"] == "RUN_FINISHED"
            listed = (await http.get(f"{agui}/threads", headers=alice)).json()["threads"]
            assert [t["threadId"] for t in listed] == ["a-1"]

            guest = await stream(http, agui, body(user("u1", "hi"), thread="g-1"))
            assert guest[-1]["type"] == "RUN_FINISHED", "no token: a guest (optional=True)"
            taken = await http.post(
                agui, json=body(user("u1", "hi"), user("u2", "mine now"), thread="g-1"), headers=alice
            )
            assert taken.status_code == 404, "a guest's thread is never handed to a signed-in caller"
            assert (await http.get(f"{agui}/threads/g-1", headers=alice)).status_code == 404
            again = await stream(http, agui, body(user("u1", "hi"), user("u2", "still mine"), thread="g-1"))
            assert again[-1]["type"] == "RUN_FINISHED", "and the guest is not locked out"

            for bad, reason in (
                (token(aud="other", iss=JWT_ISSUER), "ERR_AGUI_TOKEN_AUDIENCE"),
                (token(exp=time.time() - 120, **served), "ERR_AGUI_TOKEN_EXPIRED"),
                (_none_token(), "ERR_AGUI_TOKEN_ALGORITHM"),
            ):
                refused = await http.post(
                    agui, json=body(user("u1"), thread="x-1"), headers={"authorization": f"Bearer {bad}"}
                )
                assert refused.status_code == 401 and refused.headers["www-authenticate"].startswith("Bearer")
                assert refused.json()["error"]["reason"] == reason and bad not in refused.text

            keys.write_text(json.dumps({"keys": [jwk(RSA_NEXT, "rsa-2")]}))  # the issuer rotates its key
            rotated = {"authorization": f"Bearer {token(RSA_NEXT, 'rsa-2', **served)}"}
            events = await stream(
                http, agui, body(user("u1", "hi"), user("u2", "again"), thread="a-1"), headers=rotated
            )
            assert events[-1]["type"] == "RUN_FINISHED", "the new key was fetched; same subject, same thread"
            retired = await http.post(agui, json=body(user("u1"), thread="a-2"), headers=alice)
            assert retired.status_code == 401 and retired.json()["error"]["reason"] == "ERR_AGUI_TOKEN_KEY_UNKNOWN"

            long_id = await http.post(agui, json=body(user("u1"), thread="t" * 129), headers=rotated)
            assert long_id.status_code == 400 and long_id.json()["error"]["code"] == "ERR_INVALID_RUN_INPUT"


# -- several issuers: a principal is (issuer, subject) ---------------------------------------------------------------
OTHER_ISSUER = "https://other-idp.example.test/"


def two_issuers(**kw: Any) -> Any:
    return jwt_identity(JWKS, issuer=[ISSUER, OTHER_ISSUER], audience=AUDIENCE, **kw)


async def test_with_several_issuers_the_caller_carries_its_issuer_and_one_issuer_stays_as_it_was() -> None:
    assert await two_issuers()(Req(f"Bearer {token()}")) == Identity(principal="alice", tenant="acme", issuer=ISSUER)
    other = await two_issuers()(Req(f"Bearer {token(iss=OTHER_ISSUER)}"))
    assert other == Identity(principal="alice", tenant="acme", issuer=OTHER_ISSUER)
    assert await binder()(Req(f"Bearer {token()}")) == Identity(principal="alice", tenant="acme"), "one issuer"
    assert (await refused(two_issuers(), f"Bearer {token(iss='https://evil.test/')}")).reason == "ERR_AGUI_TOKEN_ISSUER"


async def test_the_same_subject_of_another_issuer_never_reads_continues_lists_or_deletes_the_thread() -> None:
    provider = mock(replies=["one", "two", "three"])
    app = ag_ui_app(factory(provider), bind_thread=two_issuers())
    first = {"authorization": f"Bearer {token()}"}
    second = {"authorization": f"Bearer {token(iss=OTHER_ISSUER)}"}  # the same "alice", "acme" — another provider
    async with client(app) as http:
        status, events = await turn(http, body(user("u1")), headers=first)
        assert status == 200 and text_of(events) == "one"
        status, foreign = await turn(http, body(user("u1"), user("u2")), headers=second)
        assert status == 404 and foreign["error"]["reason"] == "ERR_AGUI_THREAD_NOT_FOUND"
        for path in ("/agui/threads/t1", "/agui/threads/t1/recording"):
            assert (await http.get(path, headers=second)).status_code == 404
            assert (await http.get(path, headers=first)).status_code == 200, "control: its owner reads it"
        assert (await http.get("/agui/threads", headers=second)).json()["threads"] == []
        assert [t["threadId"] for t in (await http.get("/agui/threads", headers=first)).json()["threads"]] == ["t1"]
        assert (await http.delete("/agui/threads/t1", headers=second)).status_code == 404
        status, events = await turn(http, body(user("u1"), user("u2")), headers=first)
        assert status == 200 and text_of(events) == "two", "the owner continues its thread"
    assert provider.calls == 2


_NAME = st.text(alphabet=st.sampled_from('a|",[]\\\x00:/'), min_size=1, max_size=6)

CRAFTED = [
    # (tenant, subject, issuer) triples whose naive joins collide; every one must own its threads alone.
    ("acme", "alice", ISSUER),
    ("acme", "alice", OTHER_ISSUER),
    ("acme", f'alice", "{OTHER_ISSUER}', ISSUER),
    ("acme", "alice|" + OTHER_ISSUER, ISSUER),
    ("acme|alice", OTHER_ISSUER, ISSUER),
    ("acme", "alice\x00", ISSUER),
    ("acme", 'alice"]', ISSUER),
    ("acme", "alice", None),
    (None, "alice", ISSUER),
]


def test_owner_keys_of_crafted_subjects_tenants_and_issuers_never_collide() -> None:
    from agentfootprint.hosting.sessions import owner_key

    keys = {owner_key(Identity(tenant=t, principal=p, issuer=i)) for t, p, i in CRAFTED}
    assert len(keys) == len(CRAFTED)


@settings(max_examples=200, deadline=None)
@given(a=st.tuples(_NAME, _NAME, st.none() | _NAME), b=st.tuples(_NAME, _NAME, st.none() | _NAME))
def test_owner_keys_are_equal_only_for_the_same_tenant_subject_and_issuer(
    a: tuple[str, str, str | None], b: tuple[str, str, str | None]
) -> None:
    from agentfootprint.hosting.sessions import owner_key

    same = owner_key(Identity(tenant=a[0], principal=a[1], issuer=a[2])) == owner_key(
        Identity(tenant=b[0], principal=b[1], issuer=b[2])
    )
    assert same == (a == b)


async def test_a_crafted_subject_naming_another_issuer_cannot_reach_that_issuers_thread() -> None:
    provider = mock(replies=["one", "two"])
    app = ag_ui_app(factory(provider), bind_thread=two_issuers())
    owner = {"authorization": f"Bearer {token(iss=OTHER_ISSUER)}"}
    crafted_sub = 'alice", "' + OTHER_ISSUER  # the JSON owner of (acme, alice, OTHER_ISSUER), were it spliced
    crafted = {"authorization": f"Bearer {token(sub=crafted_sub)}"}
    async with client(app) as http:
        status, _ = await turn(http, body(user("u1")), headers=owner)
        assert status == 200
        status, _ = await turn(http, body(user("u1"), user("u2")), headers=crafted)
        assert status == 404
        assert (await http.get("/agui/threads/t1", headers=crafted)).status_code == 404
    assert provider.calls == 1


# -- the JWKS fetch: one overall deadline, one refresh at a time, a stale set serving meanwhile ---------------------
async def _trickling_jwks(connections: list[int], stop_serving: asyncio.Event) -> tuple[str, asyncio.Server]:
    """A JWKS endpoint on 127.0.0.1 that answers headers at once, then one body byte every 50 ms (for up to 60 s)."""

    async def serve(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        connections.append(1)
        await reader.readuntil(b"\r\n\r\n")
        writer.write(b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: 1000000\r\n\r\n")
        try:
            for _ in range(1200):
                if stop_serving.is_set():
                    break
                writer.write(b" ")
                await writer.drain()
                await asyncio.sleep(0.05)
        except (ConnectionError, asyncio.CancelledError):
            pass
        finally:
            writer.close()

    server = await asyncio.start_server(serve, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    return f"http://127.0.0.1:{port}/jwks.json", server


async def test_a_jwks_provider_trickling_bytes_is_cut_off_at_the_overall_deadline_by_one_fetch() -> None:
    connections: list[int] = []
    stop_serving = asyncio.Event()
    url, server = await _trickling_jwks(connections, stop_serving)
    bound = jwt_identity(url, issuer=ISSUER, audience=AUDIENCE, fetch_timeout=1.0)
    loop = asyncio.get_running_loop()
    began = loop.time()
    try:
        outcomes = await asyncio.gather(*(bound(Req(f"Bearer {token()}")) for _ in range(8)), return_exceptions=True)
        elapsed = loop.time() - began
        again = loop.time()
        with pytest.raises(HostUnavailableError):  # within min_refresh_seconds: no new fetch, no wait
            await bound(Req(f"Bearer {token()}"))
        assert loop.time() - again < 0.5
    finally:
        stop_serving.set()
        server.close()
        await server.wait_closed()
    assert all(isinstance(o, HostUnavailableError) and o.code == "ERR_AGUI_IDENTITY_UNAVAILABLE" for o in outcomes)
    # A byte every 50 ms never trips a per-read timeout: only a total deadline ends this fetch (here 1 s; the
    # generous bound leaves room for a slow machine, and the trickle would go on for a minute).
    assert elapsed < 10.0
    assert connections == [1], "eight callers waited on one fetch"


def _over(http: httpx2.AsyncClient, **kw: Any) -> Any:
    """A binder fetching its JWKS by URL through ``http``."""
    return jwt_identity("https://login.example.test/jwks", issuer=ISSUER, audience=AUDIENCE, http_client=http, **kw)


async def test_a_jwks_over_one_mebibyte_is_refused_and_a_fresh_one_is_fetched_control() -> None:
    served = {"keys": [jwk(RSA_KEY, "rsa-1")], "padding": "x" * (1 << 20)}

    def handler(request: httpx2.Request) -> httpx2.Response:
        return httpx2.Response(200, json=served)

    http = httpx2.AsyncClient(transport=httpx2.MockTransport(handler))
    with pytest.raises(HostUnavailableError):
        await _over(http)(Req(f"Bearer {token()}"))
    served.pop("padding")
    control = _over(http)
    assert (await control(Req(f"Bearer {token()}"))).principal == "alice"
    await http.aclose()


class _Clock:
    """A monotonic clock the test moves by hand."""

    def __init__(self) -> None:
        self.now = 1000.0

    def monotonic(self) -> float:
        return self.now


async def test_a_stale_key_set_serves_every_caller_while_one_refresh_hangs(monkeypatch: pytest.MonkeyPatch) -> None:
    clock = _Clock()
    monkeypatch.setattr(importlib.import_module("agentfootprint.hosting.identity"), "time", clock)
    release = asyncio.Event()
    fetches: list[str] = []
    cut_off: list[bool] = []

    async def handler(request: httpx2.Request) -> httpx2.Response:
        fetches.append("fetch")
        if len(fetches) == 1:
            return httpx2.Response(200, json={"keys": [jwk(RSA_KEY, "rsa-1")]})
        try:  # every refresh after the first hangs until the test releases it, then names the rotated key too
            await release.wait()
        except asyncio.CancelledError:
            cut_off.append(True)
            raise
        return httpx2.Response(200, json={"keys": [jwk(RSA_KEY, "rsa-1"), jwk(RSA_NEXT, "rsa-2")]})

    http = httpx2.AsyncClient(transport=httpx2.MockTransport(handler))
    bound = _over(http, cache_seconds=60, min_refresh_seconds=10, fetch_timeout=30)
    assert (await bound(Req(f"Bearer {token()}"))).principal == "alice"
    assert fetches == ["fetch"]

    clock.now += 61  # the cached set is stale now; its refresh will hang
    stale = asyncio.gather(*(bound(Req(f"Bearer {token(sub=f'user-{i}')}")) for i in range(20)))
    callers = await asyncio.wait_for(stale, 20)  # needs no time at all; the bound only ends a hang
    assert [c.principal for c in callers] == [f"user-{i}" for i in range(20)], "the stale set served them all"
    assert fetches == ["fetch", "fetch"], "one refresh for twenty stale callers"
    assert not release.is_set() and not cut_off, "and none of them waited for it"

    rotated = asyncio.ensure_future(bound(Req(f"Bearer {token(RSA_NEXT, 'rsa-2')}")))
    await asyncio.sleep(0)
    assert not rotated.done(), "a key the stale set lacks waits for the refresh in flight"
    release.set()
    assert (await rotated).principal == "alice"
    assert fetches == ["fetch", "fetch"], "it joined that refresh rather than starting another"
    await http.aclose()


async def test_threads_of_a_one_issuer_host_stay_theirs_and_adding_an_issuer_hands_them_to_no_one() -> None:
    from agentfootprint.hosting import memory_sessions

    store = memory_sessions()
    alice = {"authorization": f"Bearer {token()}"}
    async with client(ag_ui_app(factory(mock(replies=["one", "two"])), bind_thread=binder(), sessions=store)) as http:
        status, _ = await turn(http, body(user("u1")), headers=alice)
        assert status == 200
    async with client(ag_ui_app(factory(mock(replies=["two"])), bind_thread=binder(), sessions=store)) as http:
        assert (await http.get("/agui/threads/t1", headers=alice)).status_code == 200, "control: same one issuer"
    app = ag_ui_app(factory(mock(replies=["two"])), bind_thread=two_issuers(), sessions=store)
    async with client(app) as http:
        for caller in (alice, {"authorization": f"Bearer {token(iss=OTHER_ISSUER)}"}):
            assert (await http.get("/agui/threads/t1", headers=caller)).status_code == 404
            assert (await http.get("/agui/threads", headers=caller)).json()["threads"] == []
