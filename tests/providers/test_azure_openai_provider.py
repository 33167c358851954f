"""Azure OpenAI specifics: deployments and api-version, key or Entra ID token, the v1 path, configuration errors."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from typing import Any

import pytest
from azure.core.credentials import AccessToken

from agentfootprint import Agent
from agentfootprint.providers import (
    AzureOpenAIProvider,
    ModelRequiredError,
    ProviderAuthError,
    ProviderConfigError,
    azure_openai,
)

from ._support import FakeServer, json_reply, user_request
from ._vendors import API_KEY, DEPLOYMENT, OpenAIWire, Turn, VendorServer

ENTRA = "eyJ0eXAiOiJKV1QiLCJhbGciOiJSUzI1NiJ9.entra-token.0123456789"
ANSWER = {
    "id": "c",
    "object": "chat.completion",
    "created": 1,
    "model": "gpt",
    "choices": [{"index": 0, "message": {"role": "assistant", "content": "ok"}, "finish_reason": "stop"}],
}


@pytest.fixture
def server() -> Iterator[VendorServer]:
    live = VendorServer()
    yield live
    live.close()


class SyncCredential:
    """An azure-core TokenCredential (sync ``get_token``) that records the scopes asked for."""

    def __init__(self) -> None:
        self.scopes: list[tuple[str, ...]] = []

    def get_token(self, *scopes: str, **kwargs: Any) -> AccessToken:
        self.scopes.append(scopes)
        return AccessToken(ENTRA, 4102444800)


class AsyncCredential(SyncCredential):
    """The ``azure.identity.aio`` shape: ``get_token`` is a coroutine."""

    async def get_token(self, *scopes: str, **kwargs: Any) -> AccessToken:  # type: ignore[override]
        return super().get_token(*scopes)


@pytest.mark.parametrize("kind", ["sync-provider", "async-provider", "credential", "async-credential"])
def test_entra_id_tokens(server: VendorServer, kind: str) -> None:
    server.use(OpenAIWire(azure=True, entra_token=ENTRA), Turn(text="signed in"))

    async def async_token() -> str:
        return ENTRA

    credential = AsyncCredential() if kind == "async-credential" else SyncCredential()
    options: dict[str, Any] = {
        "sync-provider": {"token_provider": lambda: ENTRA},
        "async-provider": {"token_provider": async_token},
        "credential": {"credential": credential},
        "async-credential": {"credential": credential},
    }[kind]
    provider = azure_openai(server.url, DEPLOYMENT, api_key=None, **options)
    assert asyncio.run(provider.complete(user_request())).content == "signed in"
    assert server.problems == []
    if "credential" in kind:
        assert credential.scopes == [("https://cognitiveservices.azure.com/.default",)]


def test_key_from_the_environment_and_never_openai_key(monkeypatch: pytest.MonkeyPatch, server: VendorServer) -> None:
    monkeypatch.setenv("AZURE_OPENAI_API_KEY", API_KEY)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-openai-not-for-azure-0000")
    server.use(OpenAIWire(azure=True), Turn(text="keyed"))
    assert asyncio.run(azure_openai(server.url, DEPLOYMENT).complete(user_request())).content == "keyed"
    assert server.problems == []


def test_deployment_wins_over_the_agent_model(server: VendorServer) -> None:
    server.use(OpenAIWire(azure=True), Turn(text="from the deployment"))
    agent = Agent.create(provider=azure_openai(server.url, DEPLOYMENT, api_key=API_KEY), model="gpt-4o").build()
    assert agent.run_sync("hi").answer == "from the deployment"
    assert server.problems == []


def test_agent_model_is_the_deployment_when_none_is_given() -> None:
    fake = FakeServer(json_reply(ANSWER))
    provider = azure_openai("https://res.openai.azure.com/", api_key=API_KEY, transport=fake.transport)
    asyncio.run(provider.complete(user_request(model="my-deploy")))
    assert fake.last.url == (
        "https://res.openai.azure.com/openai/deployments/my-deploy/chat/completions?api-version=2024-10-21"
    )
    with pytest.raises(ModelRequiredError):
        asyncio.run(provider.complete(user_request()))


def test_v1_api_takes_the_deployment_as_model() -> None:
    fake = FakeServer(json_reply(ANSWER))
    provider = azure_openai(
        "https://res.openai.azure.com", "dep", api_key=API_KEY, api_version="v1", transport=fake.transport
    )
    asyncio.run(provider.complete(user_request()))
    assert fake.last.url == "https://res.openai.azure.com/openai/v1/chat/completions"
    assert fake.last.body["model"] == "dep" and fake.last.headers["api-key"] == API_KEY


def test_token_failures_say_what_to_do_and_hide_the_token() -> None:
    def broken() -> str:
        raise RuntimeError(f"cannot refresh {ENTRA}")

    provider = azure_openai("https://res.openai.azure.com", "d", token_provider=broken)
    with pytest.raises(ProviderAuthError) as info:
        asyncio.run(provider.complete(user_request()))
    assert "az login" in str(info.value) and "entra-token" not in str(info.value)


def test_token_is_scrubbed_from_server_errors() -> None:
    fake = FakeServer(json_reply({"error": {"message": f"bad token {ENTRA[:20]}"}}, status=401))
    provider = azure_openai("https://res.openai.azure.com", "d", token_provider=lambda: ENTRA, transport=fake.transport)
    with pytest.raises(ProviderAuthError) as info:
        asyncio.run(provider.complete(user_request()))
    assert ENTRA[:12] not in str(info.value) and "AZURE_OPENAI_API_KEY" in str(info.value)


@pytest.mark.parametrize(
    ("kwargs", "words"),
    [
        ({}, "AZURE_OPENAI_ENDPOINT"),
        ({"endpoint": "https://r", "api_key": "k" * 20, "token_provider": lambda: "t"}, "not both"),
        ({"endpoint": "https://r", "token_provider": "not callable"}, "callable"),
        ({"endpoint": "https://r", "credential": object()}, "get_token"),
    ],
)
def test_configuration_errors(monkeypatch: pytest.MonkeyPatch, kwargs: dict[str, Any], words: str) -> None:
    monkeypatch.delenv("AZURE_OPENAI_ENDPOINT", raising=False)
    monkeypatch.delenv("AZURE_OPENAI_API_KEY", raising=False)
    with pytest.raises(ProviderConfigError) as info:
        AzureOpenAIProvider(**kwargs)
    assert words in str(info.value)


def test_without_a_key_default_azure_credential_signs_in(monkeypatch: pytest.MonkeyPatch) -> None:
    """The real DefaultAzureCredential is used; here no identity is available, so the error says how to sign in."""
    monkeypatch.setenv("AZURE_TOKEN_CREDENTIALS", "EnvironmentCredential")
    for name in ("AZURE_CLIENT_ID", "AZURE_TENANT_ID", "AZURE_CLIENT_SECRET", "AZURE_CLIENT_CERTIFICATE_PATH"):
        monkeypatch.delenv(name, raising=False)
    fake = FakeServer(json_reply(ANSWER))
    provider = azure_openai("https://res.openai.azure.com", "d", transport=fake.transport)
    with pytest.raises(ProviderAuthError) as info:
        asyncio.run(provider.complete(user_request()))
    assert "ClientAuthenticationError" in str(info.value) and "az login" in str(info.value)
    assert fake.seen == []
    from azure.identity import DefaultAzureCredential

    assert isinstance(provider._credential, DefaultAzureCredential)


def test_without_a_key_or_the_extra_says_what_to_install(monkeypatch: pytest.MonkeyPatch) -> None:
    import sys

    monkeypatch.setitem(sys.modules, "azure.identity", None)
    provider = azure_openai("https://res.openai.azure.com", "d", transport=FakeServer(json_reply(ANSWER)).transport)
    with pytest.raises(ProviderAuthError) as info:
        asyncio.run(provider.complete(user_request()))
    assert "AZURE_OPENAI_API_KEY" in str(info.value) and "agentfootprint[azure]" in str(info.value)


@pytest.mark.parametrize("deployment", ["my-o3-deployment", "gpt-4o-prod"])
@pytest.mark.parametrize("stream", [False, True])
def test_azure_sends_max_completion_tokens_whatever_the_deployment(deployment: str, stream: bool) -> None:
    from ._support import collect, fixture, raw_reply
    from ._vendors import check_typed_dict, sdk_adapter

    fake = FakeServer(raw_reply(fixture("openai_stream_text.sse")) if stream else json_reply(ANSWER))
    provider = azure_openai("https://res.openai.azure.com", deployment, api_key=API_KEY, transport=fake.transport)
    request = user_request(max_tokens=512)
    if stream:
        asyncio.run(collect(provider.stream(request)))
    else:
        asyncio.run(provider.complete(request))
    body = fake.last.body
    assert body["max_completion_tokens"] == 512 and "max_tokens" not in body
    check_typed_dict(sdk_adapter("openai", stream), body, "azure request")


def test_deployment_not_found_is_a_missing_model() -> None:
    from agentfootprint.providers import ModelNotFoundError

    body = {
        "error": {
            "code": "DeploymentNotFound",
            "message": "The API deployment for this resource does not exist. If you created the deployment within "
            "the last 5 minutes, please wait a moment and try again.",
        }
    }
    fake = FakeServer(json_reply(body, status=404))
    provider = azure_openai("https://res.openai.azure.com", "gpt-4o-prod", api_key=API_KEY, transport=fake.transport)
    with pytest.raises(ModelNotFoundError) as info:
        asyncio.run(provider.complete(user_request()))
    assert (info.value.model, info.value.status, info.value.retryable) == ("gpt-4o-prod", 404, False)
    assert "deployment" in str(info.value) and "base_url" not in str(info.value)


def test_a_plain_404_still_points_at_the_endpoint() -> None:
    from agentfootprint.providers import ModelNotFoundError, ProviderRequestError

    fake = FakeServer(json_reply({"error": {"code": "404", "message": "Resource not found"}}, status=404))
    provider = azure_openai("https://res.openai.azure.com", "d", api_key=API_KEY, transport=fake.transport)
    with pytest.raises(ProviderRequestError) as info:
        asyncio.run(provider.complete(user_request()))
    assert not isinstance(info.value, ModelNotFoundError)


@pytest.mark.parametrize(
    ("env", "expected"),
    [
        ({"OPENAI_API_VERSION": "2025-04-01-preview"}, "2025-04-01-preview"),
        (
            {"OPENAI_API_VERSION": "2025-04-01-preview", "AZURE_OPENAI_API_VERSION": "2024-12-01-preview"},
            "2024-12-01-preview",
        ),
        ({}, "2024-10-21"),
    ],
)
def test_api_version_from_the_environment(monkeypatch: pytest.MonkeyPatch, env: dict[str, str], expected: str) -> None:
    for name in ("OPENAI_API_VERSION", "AZURE_OPENAI_API_VERSION"):
        monkeypatch.delenv(name, raising=False)
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    fake = FakeServer(json_reply(ANSWER))
    provider = azure_openai("https://res.openai.azure.com", "d", api_key=API_KEY, transport=fake.transport)
    asyncio.run(provider.complete(user_request()))
    assert fake.last.url.endswith(f"?api-version={expected}")
