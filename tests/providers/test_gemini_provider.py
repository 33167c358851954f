"""Gemini specifics: request shape (checked with google-genai), Vertex AI auth, thinking config, Google errors."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from typing import Any

import pytest
from google.genai import types
from google.oauth2.credentials import Credentials

from agentfootprint.providers import (
    GeminiProvider,
    LLMRequest,
    Message,
    ProviderAuthError,
    ProviderConfigError,
    ProviderResponseError,
    ProviderServerError,
    RateLimitError,
    ReasoningBlock,
    ToolCall,
    ToolSpec,
    gemini,
)
from agentfootprint.providers.gemini_api import GENERATED_ID_PREFIX, build_body

from ._support import FakeServer, collect, json_reply, raw_reply, user_request
from ._vendors import API_KEY, MODEL, GeminiWire, Turn, VendorServer


@pytest.fixture
def server() -> Iterator[VendorServer]:
    live = VendorServer()
    yield live
    live.close()


def conversation() -> LLMRequest:
    return LLMRequest(
        system_prompt="Refunds within 30 days.",
        messages=[
            Message(role="user", content="Refund A-1?"),
            Message(
                role="assistant",
                content="Let me check.",
                tool_calls=[
                    ToolCall(id="fc-1", name="lookup_order", args={"id": "A-1"}, signature="c2ln"),
                    ToolCall(id=f"{GENERATED_ID_PREFIX}1", name="get_policy", args={}),
                ],
                reasoning=[ReasoningBlock(kind="summary", text="need data", signature="dGhv", source="gemini.thought")],
            ),
            Message(role="tool", content='{"days": 47}', tool_call_id="fc-1", tool_name="lookup_order"),
            Message(role="tool", content="30 days", tool_call_id=f"{GENERATED_ID_PREFIX}1", tool_name="get_policy"),
        ],
        tools=[ToolSpec(name="lookup_order", description="Find", input_schema={"type": "object", "properties": {}})],
        temperature=0.2,
        max_tokens=300,
        seed=7,
        response_format={"type": "json_schema", "json_schema": {"name": "x", "schema": {"type": "object"}}},
    )


def test_request_body_is_what_google_genai_accepts() -> None:
    body = build_body(conversation(), thinking_budget=512, include_thoughts=True)
    for item in body["contents"]:
        types.Content.model_validate(item)
    types.Content.model_validate(body["systemInstruction"])
    types.Tool.model_validate(body["tools"][0])
    config = types.GenerationConfig.model_validate(body["generationConfig"])
    assert config.thinking_config == types.ThinkingConfig(thinking_budget=512, include_thoughts=True)
    assert (config.temperature, config.max_output_tokens, config.seed) == (0.2, 300, 7)
    assert config.response_mime_type == "application/json"
    model_turn = body["contents"][1]
    assert model_turn["parts"][0] == {"text": "need data", "thought": True, "thoughtSignature": "dGhv"}
    assert model_turn["parts"][2] == {
        "functionCall": {"name": "lookup_order", "args": {"id": "A-1"}, "id": "fc-1"},
        "thoughtSignature": "c2ln",
    }
    assert model_turn["parts"][3] == {"functionCall": {"name": "get_policy", "args": {}}}
    results = body["contents"][2]
    assert results["role"] == "user"
    assert results["parts"] == [
        {"functionResponse": {"name": "lookup_order", "response": {"days": 47}, "id": "fc-1"}},
        {"functionResponse": {"name": "get_policy", "response": {"result": "30 days"}}},
    ]


def test_whole_conversation_over_the_loopback_server(server: VendorServer) -> None:
    server.use(GeminiWire(), Turn(text="No refund."))
    provider = gemini(API_KEY, MODEL, base_url=server.url)
    response = asyncio.run(provider.complete(conversation()))
    assert response.content == "No refund."
    assert server.problems == []


def test_vertex_ai_uses_google_credentials_and_the_publisher_path() -> None:
    fake = FakeServer(json_reply({"candidates": [{"content": {"parts": [{"text": "hi"}]}, "finishReason": "STOP"}]}))
    credentials = Credentials(token="ya29.vertex-token-abcdef")
    provider = gemini(
        model="gemini-x",
        vertex=True,
        project="proj-1",
        location="europe-west4",
        credentials=credentials,
        transport=fake.transport,
    )
    response = asyncio.run(provider.complete(user_request()))
    assert response.content == "hi"
    assert fake.last.url == (
        "https://europe-west4-aiplatform.googleapis.com/v1/projects/proj-1/locations/europe-west4"
        "/publishers/google/models/gemini-x:generateContent"
    )
    assert fake.last.headers["authorization"] == "Bearer ya29.vertex-token-abcdef"
    assert "x-goog-api-key" not in fake.last.headers


def test_vertex_token_is_scrubbed_from_errors() -> None:
    token = "ya29.vertex-token-abcdef"
    fake = FakeServer(json_reply({"error": {"code": 500, "message": f"token {token[:10]}... broke"}}, status=500))
    provider = gemini(
        model="g", vertex=True, project="p", credentials=Credentials(token=token), transport=fake.transport
    )
    with pytest.raises(ProviderServerError) as info:
        asyncio.run(provider.complete(user_request()))
    assert "ya29.verte" not in str(info.value)


def test_vertex_needs_a_project(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("GOOGLE_CLOUD_PROJECT", raising=False)
    with pytest.raises(ProviderConfigError) as info:
        gemini(vertex=True)
    assert "GOOGLE_CLOUD_PROJECT" in str(info.value)


def test_missing_key_says_what_to_set(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("GEMINI_API_KEY", raising=False)
    monkeypatch.delenv("GOOGLE_API_KEY", raising=False)
    fake = FakeServer(json_reply({}))
    with pytest.raises(ProviderAuthError) as info:
        asyncio.run(gemini(model="g", transport=fake.transport).complete(user_request()))
    assert "GEMINI_API_KEY" in str(info.value) and fake.seen == []


def test_key_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GOOGLE_API_KEY", "AIza-from-env-123456")
    fake = FakeServer(json_reply({"candidates": [{"content": {"parts": [{"text": "ok"}]}, "finishReason": "STOP"}]}))
    asyncio.run(gemini(model="g", transport=fake.transport).complete(user_request()))
    assert fake.last.headers["x-goog-api-key"] == "AIza-from-env-123456"


def test_blocked_prompt_says_what_to_do() -> None:
    fake = FakeServer(json_reply({"promptFeedback": {"blockReason": "SAFETY"}, "usageMetadata": {}}))
    with pytest.raises(ProviderResponseError) as info:
        asyncio.run(gemini("AIza-test-0123456789", "g", transport=fake.transport).complete(user_request()))
    assert "SAFETY" in str(info.value) and "safety settings" in str(info.value)


def test_safety_finish_is_content_filter() -> None:
    body = {"candidates": [{"content": {"parts": []}, "finishReason": "SAFETY"}]}
    response = asyncio.run(
        gemini("AIza-test-0123456789", "g", transport=FakeServer(json_reply(body)).transport).complete(user_request())
    )
    assert (response.content, response.finish_reason) == ("", "content_filter")


def test_rate_limit_retry_delay_comes_from_the_details() -> None:
    body = {
        "error": {
            "code": 429,
            "message": "Quota exceeded",
            "status": "RESOURCE_EXHAUSTED",
            "details": [{"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": "17s"}],
        }
    }
    with pytest.raises(RateLimitError) as info:
        asyncio.run(
            gemini("AIza-test-0123456789", "g", transport=FakeServer(json_reply(body, status=429)).transport).complete(
                user_request()
            )
        )
    assert info.value.retry_after == 17.0


def test_error_event_mid_stream() -> None:
    data = json.dumps({"candidates": [{"content": {"parts": [{"text": "Hel"}]}}]})
    body = f"data: {data}\n\ndata: " + json.dumps({"error": {"code": 500, "message": "backend died"}}) + "\n\n"
    provider = gemini("AIza-test-0123456789", "g", transport=FakeServer(raw_reply(body)).transport)
    with pytest.raises(ProviderServerError) as info:
        asyncio.run(collect(provider.stream(user_request())))
    assert "backend died" in str(info.value)


def test_stream_cut_before_the_finish_is_an_error() -> None:
    data = json.dumps({"candidates": [{"content": {"parts": [{"text": "Hel"}]}}]})
    provider = gemini("AIza-test-0123456789", "g", transport=FakeServer(raw_reply(f"data: {data}\n\n")).transport)
    with pytest.raises(ProviderResponseError):
        asyncio.run(collect(provider.stream(user_request())))


@pytest.mark.parametrize("budget", [-2, True, 1.5])
def test_bad_thinking_budget_is_refused(budget: Any) -> None:
    with pytest.raises(ProviderConfigError):
        GeminiProvider("k", "g", thinking_budget=budget)


def test_a_signature_without_thoughts_is_kept_but_not_sent_as_an_empty_thought() -> None:
    body = {
        "candidates": [{"content": {"parts": [{"text": "No.", "thoughtSignature": "c2ln"}]}, "finishReason": "STOP"}]
    }
    provider = gemini("AIza-test-0123456789", "g", transport=FakeServer(json_reply(body)).transport)
    response = asyncio.run(provider.complete(user_request()))
    assert response.reasoning == [ReasoningBlock(kind="summary", signature="c2ln", source="gemini.thought")]
    echoed = build_body(LLMRequest(messages=[Message(role="assistant", content="No.", reasoning=response.reasoning)]))
    assert echoed["contents"] == [{"role": "model", "parts": [{"text": "No."}]}]


def test_vertex_signs_in_with_application_default_credentials(tmp_path: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """A service-account file found through GOOGLE_APPLICATION_CREDENTIALS; google-auth fetches the token over HTTP."""
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
    from threading import Thread
    from urllib.parse import parse_qs

    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric import rsa

    grants: list[str] = []

    class TokenEndpoint(BaseHTTPRequestHandler):
        def log_message(self, format: str, *args: Any) -> None:
            return

        def do_POST(self) -> None:
            form = parse_qs(self.rfile.read(int(self.headers["content-length"])).decode())
            grants.append(form["grant_type"][0])
            body = json.dumps({"access_token": "ya29.from-adc-0123456789", "expires_in": 3600}).encode()
            self.send_response(200)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

    endpoint = ThreadingHTTPServer(("127.0.0.1", 0), TokenEndpoint)
    Thread(target=endpoint.serve_forever, daemon=True).start()
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    pem = key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption())
    account = {
        "type": "service_account",
        "project_id": "proj-1",
        "private_key_id": "k1",
        "private_key": pem.decode(),
        "client_email": "agent@proj-1.iam.gserviceaccount.com",
        "client_id": "1",
        "token_uri": f"http://127.0.0.1:{endpoint.server_address[1]}/token",
    }
    path = tmp_path / "sa.json"
    path.write_text(json.dumps(account))
    monkeypatch.setenv("GOOGLE_APPLICATION_CREDENTIALS", str(path))
    answer = FakeServer(json_reply({"candidates": [{"content": {"parts": [{"text": "adc"}]}, "finishReason": "STOP"}]}))
    provider = gemini(model="g", vertex=True, project="proj-1", transport=answer.transport)
    try:
        assert asyncio.run(provider.complete(user_request())).content == "adc"
        assert asyncio.run(provider.complete(user_request())).content == "adc"
    finally:
        endpoint.shutdown()
        endpoint.server_close()
    assert answer.last.headers["authorization"] == "Bearer ya29.from-adc-0123456789"
    assert grants == ["urn:ietf:params:oauth:grant-type:jwt-bearer"]


def test_vertex_without_google_auth_says_which_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    import sys

    monkeypatch.setitem(sys.modules, "google.auth", None)
    provider = gemini(model="g", vertex=True, project="p", transport=FakeServer(json_reply({})).transport)
    with pytest.raises(ProviderConfigError) as info:
        asyncio.run(provider.complete(user_request()))
    assert "agentfootprint[gemini]" in str(info.value)


def test_cached_content_tokens_are_reported_within_input() -> None:
    response = types.GenerateContentResponse(
        candidates=[
            types.Candidate(content=types.Content(role="model", parts=[types.Part(text="ok")]), finish_reason="STOP")
        ],
        usage_metadata=types.GenerateContentResponseUsageMetadata(
            prompt_token_count=4000, cached_content_token_count=3500, candidates_token_count=6, total_token_count=4006
        ),
    )
    raw = response.model_dump_json(by_alias=True, exclude_none=True).encode()
    fake = FakeServer(raw_reply(raw, content_type="application/json"))
    provider = gemini(API_KEY, MODEL, transport=fake.transport)
    usage = asyncio.run(provider.complete(user_request())).usage
    assert (usage.input_tokens, usage.cached_input_tokens, usage.output_tokens) == (4000, 3500, 6)
