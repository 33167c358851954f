"""Bedrock specifics: SigV4 through botocore (session tokens too), Bedrock API keys, event-stream errors, config."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator

import pytest
from botocore.credentials import Credentials

from agentfootprint.providers import (
    LLMRequest,
    Message,
    ModelNotFoundError,
    ProviderAuthError,
    ProviderConfigError,
    ProviderRequestError,
    ProviderResponseError,
    ProviderServerError,
    RateLimitError,
    ReasoningBlock,
    ToolCall,
    ToolSpec,
    bedrock,
)
from agentfootprint.providers.bedrock_api import build_body

from ._sdk_bodies import converse_output
from ._support import FakeServer, Reply, collect, json_reply, user_request
from ._vendors import AWS_ACCESS, AWS_SECRET, BEDROCK_MODEL, REGION, BedrockWire, Turn, VendorServer, eventstream_frame

TOKEN = "IQoJb3JpZ2luX2VjEXAMPLEsessionTOKEN0123456789"


@pytest.fixture
def server() -> Iterator[VendorServer]:
    live = VendorServer()
    yield live
    live.close()


def test_session_credentials_sign_with_their_token(server: VendorServer) -> None:
    server.use(BedrockWire(session_token=TOKEN), Turn(text="signed"))
    provider = bedrock(
        BEDROCK_MODEL, region=REGION, endpoint_url=server.url, credentials=Credentials(AWS_ACCESS, AWS_SECRET, TOKEN)
    )
    assert asyncio.run(provider.complete(user_request())).content == "signed"
    assert server.problems == []
    assert server.seen[0].headers["x-amz-security-token"] == TOKEN


def test_credentials_from_the_environment_chain(server: VendorServer, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", AWS_ACCESS)
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", AWS_SECRET)
    monkeypatch.delenv("AWS_SESSION_TOKEN", raising=False)
    monkeypatch.delenv("AWS_PROFILE", raising=False)
    server.use(BedrockWire(), Turn(text="from env"))
    provider = bedrock(BEDROCK_MODEL, region=REGION, endpoint_url=server.url)
    assert asyncio.run(provider.complete(user_request())).content == "from env"
    assert server.problems == []


def test_bedrock_api_key_is_a_bearer_token(server: VendorServer) -> None:
    server.use(BedrockWire(bearer="ABSKbedrock-api-key-0123456789"), Turn(text="keyed"))
    provider = bedrock(BEDROCK_MODEL, region=REGION, endpoint_url=server.url, api_key="ABSKbedrock-api-key-0123456789")
    chunks = asyncio.run(collect(provider.stream(user_request())))
    assert chunks[-1].response is not None and chunks[-1].response.content == "keyed"
    assert server.problems == []


def test_no_credentials_says_what_to_set(monkeypatch: pytest.MonkeyPatch, tmp_path: object) -> None:
    for name in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AWS_PROFILE"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", str(tmp_path) + "/none")
    monkeypatch.setenv("AWS_CONFIG_FILE", str(tmp_path) + "/none")
    monkeypatch.setenv("AWS_EC2_METADATA_DISABLED", "true")
    monkeypatch.setenv("AWS_CONTAINER_CREDENTIALS_FULL_URI", "")
    fake = FakeServer(json_reply({}))
    provider = bedrock("m", region=REGION, transport=fake.transport)
    with pytest.raises(ProviderAuthError) as info:
        asyncio.run(provider.complete(user_request()))
    assert "AWS_ACCESS_KEY_ID" in str(info.value) and fake.seen == []


def test_no_region_says_what_to_set(monkeypatch: pytest.MonkeyPatch, tmp_path: object) -> None:
    for name in ("AWS_REGION", "AWS_DEFAULT_REGION", "AWS_PROFILE"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("AWS_CONFIG_FILE", str(tmp_path) + "/none")
    with pytest.raises(ProviderConfigError) as info:
        bedrock("m")
    assert "AWS_REGION" in str(info.value)


def test_reasoning_and_tool_turns_echo_in_converse_shape() -> None:
    request = LLMRequest(
        messages=[
            Message(role="user", content="Refund?"),
            Message(
                role="assistant",
                tool_calls=[ToolCall(id="tu-1", name="lookup", args={"id": 1})],
                reasoning=[
                    ReasoningBlock(text="think", signature="c2ln", source="bedrock.reasoning_content"),
                    ReasoningBlock(kind="redacted", signature="cmVk", source="bedrock.reasoning_content"),
                    ReasoningBlock(text="not ours", signature="x", source="anthropic.thinking"),
                ],
            ),
            Message(role="tool", content='{"age": 47}', tool_call_id="tu-1", tool_name="lookup"),
            Message(role="tool", content="plain", tool_call_id="tu-2", tool_name="other"),
        ],
        temperature=0.3,
    )
    body = build_body(request, thinking_budget=2048)
    assert body["messages"][1]["content"] == [
        {"reasoningContent": {"reasoningText": {"text": "think", "signature": "c2ln"}}},
        {"reasoningContent": {"redactedContent": "cmVk"}},
        {"toolUse": {"toolUseId": "tu-1", "name": "lookup", "input": {"id": 1}}},
    ]
    assert body["messages"][2]["content"] == [
        {"toolResult": {"toolUseId": "tu-1", "content": [{"json": {"age": 47}}]}},
        {"toolResult": {"toolUseId": "tu-2", "content": [{"text": "plain"}]}},
    ]
    assert body["inferenceConfig"] == {"maxTokens": 3072}
    assert body["additionalModelRequestFields"] == {"thinking": {"type": "enabled", "budget_tokens": 2048}}
    from botocore.session import get_session
    from botocore.validate import ParamValidator

    shape = get_session().get_service_model("bedrock-runtime").operation_model("Converse").input_shape
    assert not ParamValidator().validate({"modelId": "m", **body}, shape).has_errors()


def _converse_errors(body: dict[str, object]) -> str:
    from botocore.session import get_session
    from botocore.validate import ParamValidator

    shape = get_session().get_service_model("bedrock-runtime").operation_model("Converse").input_shape
    report = ParamValidator().validate({"modelId": "m", **body}, shape)
    return str(report.generate_report()) if report.has_errors() else ""


@pytest.mark.parametrize("description", ["", " ", "\n\t"])
def test_a_tool_without_description_passes_converse_validation(description: str) -> None:
    tools = [ToolSpec(name="now", description=description), ToolSpec(name="lookup", description="Find an order.")]
    body = build_body(LLMRequest(messages=[Message(role="user", content="hi")], tools=tools))
    specs = [tool["toolSpec"] for tool in body["toolConfig"]["tools"]]
    assert "description" not in specs[0]
    assert specs[1]["description"] == "Find an order."
    assert _converse_errors(body) == ""


def test_botocore_refuses_the_empty_description_we_no_longer_send() -> None:
    body = {
        "messages": [{"role": "user", "content": [{"text": "hi"}]}],
        "toolConfig": {"tools": [{"toolSpec": {"name": "now", "description": "", "inputSchema": {"json": {}}}}]},
    }
    assert "description" in _converse_errors(body)


def _stream(*frames: bytes) -> Reply:
    return Reply(200, b"".join(frames), {"content-type": "application/vnd.amazon.eventstream"})


def _event(name: str, payload: dict[str, object]) -> bytes:
    headers = {":event-type": name, ":content-type": "application/json", ":message-type": "event"}
    return eventstream_frame(headers, json.dumps(payload).encode())


@pytest.mark.parametrize(
    ("exception", "error"),
    [
        ("throttlingException", RateLimitError),
        ("validationException", ProviderRequestError),
        ("modelStreamErrorException", ProviderServerError),
        ("internalServerException", ProviderServerError),
    ],
)
def test_exceptions_inside_the_stream_are_typed(exception: str, error: type[Exception]) -> None:
    frame = eventstream_frame(
        {":exception-type": exception, ":content-type": "application/json", ":message-type": "exception"},
        json.dumps({"message": "stream broke"}).encode(),
    )
    fake = FakeServer(_stream(_event("messageStart", {"role": "assistant"}), frame))
    provider = bedrock("m", region=REGION, api_key="ABSK-test-0123456789", transport=fake.transport)
    with pytest.raises(error) as info:
        asyncio.run(collect(provider.stream(user_request())))
    assert "stream broke" in str(info.value)


def test_corrupt_frames_are_a_bad_response() -> None:
    good = _event("messageStart", {"role": "assistant"})
    corrupt = good[:-1] + bytes([good[-1] ^ 0xFF])
    provider = bedrock(
        "m", region=REGION, api_key="ABSK-test-0123456789", transport=FakeServer(_stream(corrupt)).transport
    )
    with pytest.raises(ProviderResponseError):
        asyncio.run(collect(provider.stream(user_request())))


def test_stream_without_message_stop_is_incomplete() -> None:
    frames = [
        _event("messageStart", {"role": "assistant"}),
        _event("contentBlockDelta", {"contentBlockIndex": 0, "delta": {"text": "Hi"}}),
    ]
    provider = bedrock(
        "m", region=REGION, api_key="ABSK-test-0123456789", transport=FakeServer(_stream(*frames)).transport
    )
    with pytest.raises(ProviderResponseError):
        asyncio.run(collect(provider.stream(user_request())))


@pytest.mark.parametrize(
    ("status", "kind", "error"),
    [
        (403, "AccessDeniedException", ProviderAuthError),
        (400, "ExpiredTokenException", ProviderAuthError),
        (404, "ResourceNotFoundException", ModelNotFoundError),
        (424, "ModelErrorException", ProviderServerError),
        (429, "ModelNotReadyException", ProviderServerError),
        (400, "ServiceQuotaExceededException", RateLimitError),
        (400, "ValidationException", ProviderRequestError),
    ],
)
def test_aws_error_types(status: int, kind: str, error: type[Exception]) -> None:
    reply = Reply(status, json.dumps({"Message": "nope"}).encode(), {"x-amzn-errortype": f"{kind}:http://x/"})
    provider = bedrock("m", region=REGION, api_key="ABSK-test-0123456789", transport=FakeServer(reply).transport)
    with pytest.raises(error) as info:
        asyncio.run(provider.complete(user_request()))
    assert "nope" in str(info.value)


def test_thinking_budget_is_checked() -> None:
    with pytest.raises(ProviderConfigError):
        bedrock("m", region=REGION, api_key="ABSK-test-0123456789", thinking_budget=100)


def test_without_botocore_says_which_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    import sys

    monkeypatch.setitem(sys.modules, "botocore.auth", None)
    with pytest.raises(ProviderConfigError) as info:
        bedrock("m", region=REGION)
    assert "agentfootprint[bedrock]" in str(info.value)
    assert bedrock("m", region=REGION, api_key="ABSK-test-0123456789").region == REGION


def test_cached_prompt_tokens_count_as_input() -> None:
    from agentfootprint.providers import Usage
    from agentfootprint.providers.bedrock_api import parse_response

    usage = {
        "inputTokens": 12,
        "outputTokens": 5,
        "totalTokens": 2017,
        "cacheReadInputTokens": 1500,
        "cacheWriteInputTokens": 500,
    }
    response = parse_response(converse_output(usage))
    assert response.usage == Usage(input_tokens=2012, output_tokens=5, cached_input_tokens=1500, cache_write_tokens=500)
    assert response.usage.total_tokens == usage["totalTokens"]


def test_streamed_cached_prompt_tokens_count_as_input() -> None:
    from agentfootprint.providers import Usage

    usage = {"inputTokens": 3, "outputTokens": 2, "totalTokens": 405, "cacheReadInputTokens": 400}
    frames = _stream(
        _event("messageStart", {"role": "assistant"}),
        _event("contentBlockDelta", {"contentBlockIndex": 0, "delta": {"text": "ok"}}),
        _event("contentBlockStop", {"contentBlockIndex": 0}),
        _event("messageStop", {"stopReason": "end_turn"}),
        _event("metadata", {"usage": usage, "metrics": {"latencyMs": 5}}),
    )
    server = FakeServer(frames)
    provider = bedrock(BEDROCK_MODEL, region=REGION, api_key="k", transport=server.transport)
    chunks = asyncio.run(collect(provider.stream(user_request())))
    assert chunks[-1].response is not None
    assert chunks[-1].response.usage == Usage(input_tokens=403, output_tokens=2, cached_input_tokens=400)


@pytest.mark.parametrize("bad", [-3, "x", None])
def test_hostile_cache_counts(bad: object) -> None:
    from agentfootprint.providers._wire import WireFormatError
    from agentfootprint.providers.bedrock_api import parse_response

    body = {"output": {"message": {"role": "assistant", "content": [{"text": "ok"}]}}, "stopReason": "end_turn"}
    body["usage"] = {"inputTokens": 1, "outputTokens": 1, "cacheReadInputTokens": bad}
    if bad is None:
        assert parse_response(body).usage.cached_input_tokens == 0
        return
    with pytest.raises(WireFormatError):
        parse_response(body)
