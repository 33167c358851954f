"""One provider contract, run against every wire provider over a loopback server that speaks the vendor's wire.

Answer, tool round trip (through a real agent), streaming, usage and pricing, errors that say what to do, retry
with every attempt recorded, reasoning recorded but never answered, and keys (fragments included) never shown.
Every request is validated with the vendor's own SDK types and every reply is built from them (see ``_vendors``).
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from botocore.credentials import Credentials

from agentfootprint import Agent, tool
from agentfootprint.providers import (
    LLMResponse,
    ModelNotFoundError,
    Provider,
    ProviderAuthError,
    ProviderConnectionError,
    ProviderError,
    ProviderRequestError,
    ProviderServerError,
    RateLimitError,
    ReasoningBlock,
    anthropic,
    azure_openai,
    bedrock,
    gemini,
    ollama,
    openai_compatible,
    with_fallback,
    with_retry,
)

from ._support import FakeSleep, collect, user_request
from ._vendors import (
    API_KEY,
    AWS_ACCESS,
    AWS_SECRET,
    BEDROCK_MODEL,
    DEPLOYMENT,
    MODEL,
    REGION,
    AnthropicWire,
    BedrockWire,
    Fail,
    GeminiWire,
    OllamaWire,
    OpenAIWire,
    Turn,
    VendorServer,
    Wire,
)

Build = Callable[[str], Provider]

VENDORS: dict[str, tuple[Callable[[], Wire], Build]] = {
    "openai_compatible": (OpenAIWire, lambda url: openai_compatible(url + "/v1", API_KEY, MODEL)),
    "azure_openai": (
        lambda: OpenAIWire(azure=True),
        lambda url: azure_openai(url, DEPLOYMENT, api_key=API_KEY),
    ),
    "anthropic": (AnthropicWire, lambda url: anthropic(API_KEY, MODEL, base_url=url)),
    "gemini": (GeminiWire, lambda url: gemini(API_KEY, MODEL, base_url=url)),
    "bedrock": (
        BedrockWire,
        lambda url: bedrock(
            BEDROCK_MODEL, region=REGION, endpoint_url=url, credentials=Credentials(AWS_ACCESS, AWS_SECRET)
        ),
    ),
    "ollama": (OllamaWire, lambda url: ollama(MODEL, base_url=url)),
}
NAMES = sorted(VENDORS)
KEYED = [name for name in NAMES if name != "ollama"]


@pytest.fixture(scope="module")
def server() -> Iterator[VendorServer]:
    live = VendorServer()
    yield live
    live.close()


class Vendor:
    """One vendor under test: its server (scripted) and a provider pointed at it."""

    def __init__(self, name: str, server: VendorServer) -> None:
        self.name = name
        self.server = server
        make_wire, self.build = VENDORS[name]
        self.wire = make_wire()

    @property
    def model(self) -> str:
        """The model name an agent asks this vendor for."""
        return BEDROCK_MODEL if self.name == "bedrock" else MODEL

    def provider(self, *outcomes: Turn | Fail) -> Provider:
        self.server.use(self.wire, *outcomes)
        return self.build(self.server.url)


@pytest.fixture(params=NAMES)
def vendor(request: pytest.FixtureRequest, server: VendorServer) -> Iterator[Vendor]:
    under_test = Vendor(request.param, server)
    yield under_test
    assert server.problems == [], f"{request.param}: requests the vendor's SDK rejects: {server.problems}"


def complete(provider: Provider, **kw: Any) -> LLMResponse:
    return asyncio.run(provider.complete(user_request(**kw)))


def stream(provider: Provider) -> tuple[list[Any], LLMResponse]:
    chunks = asyncio.run(collect(provider.stream(user_request())))
    assert chunks[-1].kind == "done" and chunks[-1].response is not None
    return chunks[:-1], chunks[-1].response


def fragments(secret: str, size: int = 6) -> set[str]:
    return {secret[i : i + size] for i in range(len(secret) - size + 1)}


@tool
def lookup_order(order_id: str) -> str:
    """Look up an order by id."""
    return f"order {order_id}: purchased 47 days ago"


REFUND_CALL = Turn(calls=[("call_7", "lookup_order", {"order_id": "A-1001"})], usage=(20, 8))
ANSWER = Turn(text="No refund: the order is older than 30 days.", usage=(40, 12))


def test_answer(vendor: Vendor) -> None:
    response = complete(vendor.provider(Turn(text="Refunds within 30 days.", usage=(12, 5))))
    assert response.content == "Refunds within 30 days."
    assert response.tool_calls == [] and response.reasoning == []
    assert response.finish_reason == "stop"
    assert (response.usage.input_tokens, response.usage.output_tokens) == (12, 5)
    if vendor.name == "bedrock":  # Converse names no model in its reply: the request's is not repeated
        assert response.model is None
    else:
        assert response.model in (MODEL, DEPLOYMENT)
    assert len(vendor.server.seen) == 1


def test_tool_call_is_parsed(vendor: Vendor) -> None:
    response = complete(vendor.provider(REFUND_CALL))
    call_id = "call_0" if vendor.name == "ollama" else "call_7"  # Ollama's wire has no call ids
    assert [(c.id, c.name, c.args, c.args_error) for c in response.tool_calls] == [
        (call_id, "lookup_order", {"order_id": "A-1001"}, None)
    ]
    assert response.finish_reason == "tool_calls"


def test_stream_yields_what_complete_returns(vendor: Vendor) -> None:
    turn = Turn(text="No refund: older than 30 days.", calls=[("call_7", "lookup_order", {"order_id": "A-1"})])
    whole = complete(vendor.provider(turn))
    chunks, streamed = stream(vendor.provider(turn))
    assert streamed == whole
    assert "".join(c.text for c in chunks if c.kind == "text") == whole.content
    assert [c.tool_call for c in chunks if c.kind == "tool_call"] == whole.tool_calls
    assert len([c for c in chunks if c.kind == "text"]) > 1


@pytest.mark.parametrize("streaming", [False, True], ids=["complete", "stream"])
def test_tool_round_trip_through_an_agent(vendor: Vendor, streaming: bool) -> None:
    provider = vendor.provider(REFUND_CALL, ANSWER)
    agent = (
        Agent.create(provider=provider, model=vendor.model).system("Refunds within 30 days.").tool(lookup_order).build()
    )
    tokens: list[str] = []
    if streaming:
        agent.on("agentfootprint.stream.token", lambda event: tokens.append(event.payload["text"]))
    result = agent.run_sync("Should order A-1001 be refunded?")
    assert result.answer == ANSWER.text
    assert len(vendor.server.seen) == 2
    second = vendor.server.seen[1].raw.decode()
    assert "purchased 47 days ago" in second and "lookup_order" in second
    if vendor.name != "ollama":
        assert "call_7" in second
    if streaming:
        assert "".join(tokens) == ANSWER.text


def test_usage_and_pricing(vendor: Vendor) -> None:
    provider = vendor.provider(REFUND_CALL, ANSWER)
    agent = (
        Agent.create(provider=provider, model=vendor.model)
        .tool(lookup_order)
        .pricing({"*": {"input": 1.0, "output": 2.0}})
        .build()
    )
    result = agent.run_sync("Should order A-1001 be refunded?")
    assert (result.usage.input_tokens, result.usage.output_tokens) == (60, 20)
    assert result.cost == pytest.approx((60 * 1.0 + 20 * 2.0) / 1000.0)


ERRORS: dict[str, type[ProviderError]] = {
    "auth": ProviderAuthError,
    "model": ModelNotFoundError,
    "rate": RateLimitError,
    "server": ProviderServerError,
    "bad_request": ProviderRequestError,
}


@pytest.mark.parametrize("kind", sorted(ERRORS))
@pytest.mark.parametrize("streaming", [False, True], ids=["complete", "stream"])
def test_errors_are_typed_and_say_what_to_do(vendor: Vendor, kind: str, streaming: bool) -> None:
    if vendor.name == "ollama" and kind == "auth":
        pytest.skip("Ollama has no keys: a 401 comes from a proxy, covered by test_ollama_provider")
    provider = vendor.provider(Fail(kind, "try again", retry_after=2.0))  # type: ignore[arg-type]
    with pytest.raises(ERRORS[kind]) as info:
        stream(provider) if streaming else complete(provider)
    error = info.value
    message = str(error)
    assert error.provider == provider.name
    assert error.retryable is (kind in ("rate", "server"))
    if kind == "auth":
        assert "Check " in message
    if kind == "model":
        assert isinstance(error, ModelNotFoundError) and error.model in (MODEL, BEDROCK_MODEL, DEPLOYMENT)
    if kind == "rate" and vendor.name not in ("bedrock", "ollama"):
        assert isinstance(error, RateLimitError) and error.retry_after == 2.0


@pytest.mark.parametrize("streaming", [False, True], ids=["complete", "stream"])
def test_retry_records_every_attempt(vendor: Vendor, streaming: bool) -> None:
    sleep = FakeSleep()
    provider = with_retry(
        vendor.provider(Fail("server"), Fail("rate"), Turn(text="ok")), max_attempts=3, base_delay=0.25, sleep=sleep
    )
    response = stream(provider)[1] if streaming else complete(provider)
    assert response.content == "ok"
    assert [(a.attempt, a.outcome, a.error_code) for a in response.attempts] == [
        (1, "error", "ERR_PROVIDER_SERVER"),
        (2, "error", "ERR_PROVIDER_RATE_LIMIT"),
        (3, "ok", None),
    ]
    assert response.attempts[1].status == 429
    assert {a.provider for a in response.attempts} == {provider.name}
    assert sleep.delays == [0.25, 0.5]
    assert len(vendor.server.seen) == 3


def test_retry_gives_up_with_every_attempt_on_the_error(vendor: Vendor) -> None:
    provider = with_retry(vendor.provider(Fail("server")), max_attempts=2, sleep=FakeSleep())
    with pytest.raises(ProviderServerError) as info:
        complete(provider)
    assert [(a.attempt, a.outcome) for a in info.value.attempts] == [(1, "error"), (2, "error")]


def test_fallback_moves_on_and_records_both(vendor: Vendor) -> None:
    first = vendor.provider(Fail("bad_request"), Turn(text="second try"))
    provider = with_fallback(first, first)
    response = complete(provider)
    assert response.content == "second try"
    assert [(a.outcome, a.error_code) for a in response.attempts] == [("error", "ERR_PROVIDER_REQUEST"), ("ok", None)]


def test_connection_refused_is_typed(vendor: Vendor) -> None:
    from tests._live import free_port

    provider = VENDORS[vendor.name][1](f"http://127.0.0.1:{free_port()}")
    with pytest.raises(ProviderConnectionError):
        complete(provider)


@pytest.mark.parametrize("name", KEYED)
@pytest.mark.parametrize("kind", ["auth", "bad_request", "server"])
def test_keys_and_their_fragments_never_reach_an_error(server: VendorServer, name: str, kind: str) -> None:
    secret = AWS_SECRET if name == "bedrock" else API_KEY
    echo = f"you sent {secret[:9]}****{secret[-4:]} (full: {secret}; tail {secret[-8:]})"
    vendor = Vendor(name, server)
    provider = vendor.provider(Fail(kind, echo))  # type: ignore[arg-type]
    with pytest.raises(ERRORS[kind]) as info:
        complete(provider)
    surfaces = [str(info.value), repr(info.value), repr(vars(info.value)), repr(provider)]
    for surface in surfaces:
        leaked = [piece for piece in fragments(secret) if piece in surface]
        assert leaked == [], f"{name}: key fragments on a surface: {leaked}"
    assert "[redacted]" in str(info.value)
    assert server.problems == []


REASONING = Turn(
    text="No refund.", reasoning="The order is 47 days old; policy allows 30.", usage=(30, 20), reasoning_tokens=9
)
SOURCES = {
    "openai_compatible": "openai.reasoning_content",
    "azure_openai": "openai.reasoning_content",
    "anthropic": "anthropic.thinking",
    "gemini": "gemini.thought",
    "bedrock": "bedrock.reasoning_content",
    "ollama": "ollama.thinking",
}


def test_reasoning_is_normalized_and_never_the_answer(vendor: Vendor) -> None:
    whole = complete(vendor.provider(REASONING))
    assert whole.content == "No refund."
    assert [(b.text, b.source) for b in whole.reasoning] == [(REASONING.reasoning, SOURCES[vendor.name])]
    assert whole.reasoning_text == REASONING.reasoning
    chunks, streamed = stream(vendor.provider(REASONING))
    assert streamed == whole
    assert "".join(c.text for c in chunks if c.kind == "reasoning") == REASONING.reasoning
    assert "".join(c.text for c in chunks if c.kind == "text") == "No refund."
    if vendor.name in ("anthropic", "bedrock"):
        assert whole.reasoning[0].signature == REASONING.signature
    if vendor.name in ("openai_compatible", "azure_openai", "gemini"):
        assert whole.usage.reasoning_tokens == 9


def test_reasoning_is_recorded_redactable_and_not_answered(vendor: Vendor) -> None:
    agent = Agent.create(provider=vendor.provider(REASONING), model=vendor.model).build()
    result = agent.run_sync("Refund A-1001?")
    assert result.answer == "No refund."
    snapshot = agent.last_snapshot()
    assert snapshot is not None
    recorded = snapshot.state["last_response"]["reasoning"]
    assert [(b["text"], b["source"]) for b in recorded] == [(REASONING.reasoning, SOURCES[vendor.name])]
    hidden = Agent.create(provider=vendor.provider(REASONING), model=vendor.model).redact(keys=["reasoning"]).build()
    assert hidden.run_sync("Refund A-1001?").answer == "No refund."
    served = hidden.last_snapshot()
    assert served is not None
    assert "47 days old" not in json.dumps(served.model_dump(mode="json"), default=str)


@pytest.mark.parametrize("name", ["anthropic", "bedrock", "gemini"])
def test_signed_reasoning_goes_back_with_the_tool_results(server: VendorServer, name: str) -> None:
    vendor = Vendor(name, server)
    thinking_call = Turn(calls=REFUND_CALL.calls, reasoning="I need the order date.", signature="c2lnLTI=")
    agent = Agent.create(provider=vendor.provider(thinking_call, ANSWER), model=vendor.model).tool(lookup_order).build()
    assert agent.run_sync("Refund A-1001?").answer == ANSWER.text
    second = server.seen[1].body
    if name == "anthropic":
        assistant = second["messages"][1]["content"]
        assert assistant[0] == {"type": "thinking", "thinking": "I need the order date.", "signature": "c2lnLTI="}
    elif name == "bedrock":
        assistant = second["messages"][1]["content"]
        assert assistant[0] == {
            "reasoningContent": {"reasoningText": {"text": "I need the order date.", "signature": "c2lnLTI="}}
        }
    else:
        calls = [p for p in second["contents"][1]["parts"] if "functionCall" in p]
        assert calls[0]["thoughtSignature"] == "c2lnLTI="
    assert server.problems == []


def test_reasoning_blocks_round_trip_as_json() -> None:
    block = ReasoningBlock(kind="redacted", signature="b3BhcXVl", source="anthropic.redacted_thinking")
    assert ReasoningBlock.model_validate(json.loads(block.model_dump_json())) == block
