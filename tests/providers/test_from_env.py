"""``provider_from_env`` over a matrix of environments: what it picks, why, what it says is missing, no values."""

from __future__ import annotations

import asyncio
import itertools
import logging
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agentfootprint.providers import (
    AnthropicProvider,
    AzureOpenAIProvider,
    BedrockProvider,
    GeminiProvider,
    OllamaProvider,
    OpenAICompatibleProvider,
    ProviderNotConfiguredError,
    pick_provider_from_env,
    provider_from_env,
)
from agentfootprint.providers.from_env import ORDER

from ._support import user_request
from ._vendors import API_KEY, AWS_ACCESS, AWS_SECRET, MODEL, OpenAIWire, Turn, VendorServer

KEY = "sk-env-7f6e5d4c3b2a1098zyxw"
CONFIGS: dict[str, dict[str, str]] = {
    "anthropic": {"ANTHROPIC_API_KEY": KEY},
    "openai_compatible": {"OPENAI_BASE_URL": "http://127.0.0.1:9/v1", "OPENAI_API_KEY": KEY},
    "openai": {"OPENAI_API_KEY": KEY},
    "azure_openai": {"AZURE_OPENAI_ENDPOINT": "https://res.openai.azure.com", "AZURE_OPENAI_API_KEY": KEY},
    "gemini": {"GEMINI_API_KEY": KEY},
    "bedrock": {"AWS_ACCESS_KEY_ID": AWS_ACCESS, "AWS_SECRET_ACCESS_KEY": AWS_SECRET, "AWS_REGION": "eu-west-1"},
    "ollama": {"OLLAMA_HOST": "127.0.0.1:11434"},
}
CLASSES: dict[str, type] = {
    "anthropic": AnthropicProvider,
    "openai_compatible": OpenAICompatibleProvider,
    "openai": OpenAICompatibleProvider,
    "azure_openai": AzureOpenAIProvider,
    "gemini": GeminiProvider,
    "bedrock": BedrockProvider,
    "ollama": OllamaProvider,
}
SECRETS = (KEY, AWS_SECRET)


def leaks(text: str) -> list[str]:
    return [s[i : i + 6] for s in SECRETS for i in range(len(s) - 5) if s[i : i + 6] in text]


@pytest.mark.parametrize("kind", ORDER)
def test_each_provider_alone_is_picked_and_built(kind: str, caplog: pytest.LogCaptureFixture) -> None:
    env = CONFIGS[kind]
    pick = pick_provider_from_env(env)
    assert pick.kind == kind
    assert pick.also_configured == []
    assert pick.reason.startswith(f"picked {kind} because ")
    with caplog.at_level(logging.INFO, logger="agentfootprint.providers"):
        provider = provider_from_env(env)
    assert type(provider) is CLASSES[kind]
    assert provider.name == kind
    said = caplog.text + pick.model_dump_json() + repr(provider)
    assert f"picked {kind}" in caplog.text
    assert leaks(said) == []


@pytest.mark.parametrize(("first", "second"), list(itertools.combinations(ORDER, 2)))
def test_precedence_and_the_choice_variable(first: str, second: str) -> None:
    env = {**CONFIGS[first], **CONFIGS[second]}
    pick = pick_provider_from_env(env)
    expected = "openai_compatible" if {first, second} == {"openai", "openai_compatible"} else first
    assert pick.kind == expected
    if expected == first and {first, second} != {"openai", "openai_compatible"}:
        assert second in pick.also_configured and "AGENTFOOTPRINT_PROVIDER" in pick.reason
    chosen = pick_provider_from_env({**env, "AGENTFOOTPRINT_PROVIDER": second})
    assert chosen.kind == second
    assert chosen.variables[0] == "AGENTFOOTPRINT_PROVIDER"


@given(subset=st.sets(st.sampled_from(ORDER)))
@settings(max_examples=60, deadline=None)
def test_any_mix_of_environments_picks_the_first_configured_in_order(subset: set[str]) -> None:
    env: dict[str, str] = {}
    for kind in subset:
        env.update(CONFIGS[kind])
    configured = {k for k in ORDER if all(env.get(n) == v for n, v in CONFIGS[k].items())}
    if not configured:
        with pytest.raises(ProviderNotConfiguredError):
            pick_provider_from_env(env)
        return
    pick = pick_provider_from_env(env)
    if "openai_compatible" in subset:
        configured.add("openai_compatible")
    assert pick.kind == next(k for k in ORDER if k in configured)
    assert leaks(pick.model_dump_json()) == []


def test_nothing_configured_says_exactly_what_to_set() -> None:
    with pytest.raises(ProviderNotConfiguredError) as info:
        provider_from_env({})
    message = str(info.value)
    assert info.value.code == "ERR_PROVIDER_NOT_CONFIGURED"
    for variable in (
        "ANTHROPIC_API_KEY",
        "OPENAI_API_KEY",
        "OPENAI_BASE_URL",
        "AZURE_OPENAI_ENDPOINT",
        "GEMINI_API_KEY",
        "GOOGLE_CLOUD_PROJECT",
        "AWS_REGION",
        "AWS_PROFILE",
        "AWS_BEARER_TOKEN_BEDROCK",
        "OLLAMA_HOST",
        "AGENTFOOTPRINT_PROVIDER",
        "AGENTFOOTPRINT_MODEL",
    ):
        assert variable in message


@pytest.mark.parametrize(
    ("env", "missing"),
    [
        ({"AWS_ACCESS_KEY_ID": AWS_ACCESS, "AWS_SECRET_ACCESS_KEY": AWS_SECRET}, "AWS_REGION"),
        ({"AWS_REGION": "us-east-1"}, "AWS_ACCESS_KEY_ID"),
        ({"AWS_ACCESS_KEY_ID": AWS_ACCESS, "AWS_REGION": "us-east-1"}, "AWS_SECRET_ACCESS_KEY"),
        ({"GOOGLE_GENAI_USE_VERTEXAI": "true"}, "GOOGLE_CLOUD_PROJECT"),
        ({"AGENTFOOTPRINT_PROVIDER": "gemini", "ANTHROPIC_API_KEY": KEY}, "GEMINI_API_KEY"),
        ({"AGENTFOOTPRINT_PROVIDER": "bedrock"}, "AWS_REGION"),
    ],
)
def test_half_configured_environments_say_what_is_missing(env: dict[str, str], missing: str) -> None:
    with pytest.raises(ProviderNotConfiguredError) as info:
        pick_provider_from_env(env)
    assert missing in str(info.value)
    assert leaks(str(info.value)) == []


def test_an_unknown_choice_is_refused_without_quoting_it() -> None:
    with pytest.raises(ProviderNotConfiguredError) as info:
        pick_provider_from_env({"AGENTFOOTPRINT_PROVIDER": "frobnicator-9000", **CONFIGS["anthropic"]})
    assert "frobnicator" not in str(info.value) and "anthropic" in str(info.value)


@pytest.mark.parametrize(("alias", "kind"), [("azure", "azure_openai"), ("AWS", "bedrock"), ("google", "gemini")])
def test_aliases_choose(alias: str, kind: str) -> None:
    env = {**CONFIGS["anthropic"], **CONFIGS[kind], "AGENTFOOTPRINT_PROVIDER": alias}
    assert pick_provider_from_env(env).kind == kind


def test_model_variables_and_override() -> None:
    assert pick_provider_from_env({**CONFIGS["gemini"], "GEMINI_MODEL": "gemini-x"}).model == "gemini-x"
    pick = pick_provider_from_env({**CONFIGS["gemini"], "GEMINI_MODEL": "a", "AGENTFOOTPRINT_MODEL": "b"})
    assert (pick.model, "AGENTFOOTPRINT_MODEL" in pick.variables) == ("b", True)
    provider = provider_from_env({**CONFIGS["bedrock"], "BEDROCK_MODEL_ID": "amazon.nova-lite-v1:0"})
    assert isinstance(provider, BedrockProvider) and provider.model == "amazon.nova-lite-v1:0"
    assert provider.region == "eu-west-1"
    assert provider_from_env(CONFIGS["anthropic"], model="claude-x").model == "claude-x"  # type: ignore[attr-defined]


def test_vertex_and_bedrock_api_key_and_profile_variants() -> None:
    vertex = provider_from_env({"GOOGLE_GENAI_USE_VERTEXAI": "1", "GOOGLE_CLOUD_PROJECT": "proj"})
    assert isinstance(vertex, GeminiProvider) and vertex.vertex
    assert vertex.base_url == "https://aiplatform.googleapis.com"
    keyed = provider_from_env({"AWS_BEARER_TOKEN_BEDROCK": KEY, "AWS_DEFAULT_REGION": "us-west-2"})
    assert isinstance(keyed, BedrockProvider) and keyed.region == "us-west-2"
    assert pick_provider_from_env({"AWS_PROFILE": "dev", "AWS_REGION": "us-east-1"}).variables == [
        "AWS_PROFILE",
        "AWS_REGION",
    ]


def test_azure_with_endpoint_only_signs_in_with_entra_id() -> None:
    pick = pick_provider_from_env({"AZURE_OPENAI_ENDPOINT": "https://res.openai.azure.com"})
    assert (pick.kind, pick.variables) == ("azure_openai", ["AZURE_OPENAI_ENDPOINT"])


def test_the_picked_provider_really_answers() -> None:
    server = VendorServer()
    try:
        server.use(OpenAIWire(), Turn(text="hello from env"))
        provider = provider_from_env({"OPENAI_BASE_URL": server.url + "/v1", "OPENAI_API_KEY": API_KEY}, model=MODEL)
        response = asyncio.run(provider.complete(user_request()))
    finally:
        server.close()
    assert response.content == "hello from env"
    assert server.problems == []


def test_options_reach_the_factory() -> None:
    provider: Any = provider_from_env(CONFIGS["ollama"], timeout=5.0, name="local")
    assert (provider.timeout, provider.name, provider.base_url) == (5.0, "local", "http://127.0.0.1:11434")


@pytest.mark.parametrize(
    "env",
    [
        {"GOOGLE_API_KEY": "google-key-1234567890", "GEMINI_API_KEY": "gemini-key-1234567890"},
        {"GEMINI_API_KEY": "gemini-key-1234567890"},
        {"GOOGLE_API_KEY": "google-key-1234567890", "GEMINI_API_KEY": ""},
    ],
)
def test_gemini_key_precedence_is_google_genais(env: dict[str, str], monkeypatch: pytest.MonkeyPatch) -> None:
    from google.genai._api_client import get_env_api_key

    from agentfootprint.providers import gemini

    for name in ("GOOGLE_API_KEY", "GEMINI_API_KEY"):
        monkeypatch.delenv(name, raising=False)
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    theirs = get_env_api_key()
    from_env: Any = provider_from_env(env)
    assert from_env._api_key == theirs
    assert pick_provider_from_env(env).variables == [next(n for n, v in env.items() if v == theirs)]
    direct: Any = gemini(model="gemini-2.5-flash")
    assert direct._api_key == theirs


def test_ollama_host_without_a_port_keeps_11434() -> None:
    provider: Any = provider_from_env({"OLLAMA_HOST": "0.0.0.0"})
    assert provider.base_url == "http://0.0.0.0:11434"


def test_openai_api_version_reaches_azure() -> None:
    env = {**CONFIGS["azure_openai"], "OPENAI_API_VERSION": "2025-04-01-preview"}
    provider: Any = provider_from_env(env)
    assert provider.api_version == "2025-04-01-preview"
