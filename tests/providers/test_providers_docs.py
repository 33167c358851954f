"""docs/providers.md: every ``python`` block runs as written against vendor wires served on loopback."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from ._vendors import (
    API_KEY,
    AWS_ACCESS,
    AWS_SECRET,
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

DOC = Path(__file__).parents[2] / "docs" / "providers.md"
BLOCKS = re.findall(r"```python\n(.*?)```", DOC.read_text(), flags=re.S)
ANSWER = Turn(text="Refunds are accepted within 30 days.", reasoning="47 > 30, so no.")


@pytest.fixture(scope="module")
def servers() -> Iterator[dict[str, VendorServer]]:
    live = {name: VendorServer() for name in ("openai", "azure", "anthropic", "gemini", "bedrock", "ollama")}
    yield live
    for server in live.values():
        server.close()


def wires() -> dict[str, Wire]:
    return {
        "openai": OpenAIWire(),
        "azure": OpenAIWire(azure=True, deployment="gpt-4o-mini"),
        "anthropic": AnthropicWire(),
        "gemini": GeminiWire(model="gemini-2.5-flash"),
        "bedrock": BedrockWire(model_id="anthropic.claude-3-5-haiku-20241022-v1:0"),
        "ollama": OllamaWire(),
    }


def test_every_provider_has_a_block() -> None:
    text = "\n".join(BLOCKS)
    for factory in ("openai_compatible(", "azure_openai(", "anthropic(", "gemini(", "bedrock(", "ollama("):
        assert factory in text
    for name in ("provider_from_env()", "with_retry(", "with_fallback("):
        assert name in text


@pytest.mark.parametrize("index", range(len(BLOCKS)))
def test_block_runs(
    index: int, servers: dict[str, VendorServer], monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    block = BLOCKS[index]
    env = {
        "OPENAI_BASE_URL": servers["openai"].url + "/v1",
        "OPENAI_API_KEY": API_KEY,
        "AZURE_OPENAI_ENDPOINT": servers["azure"].url,
        "AZURE_OPENAI_API_KEY": API_KEY,
        "ANTHROPIC_BASE_URL": servers["anthropic"].url,
        "GOOGLE_GEMINI_BASE_URL": servers["gemini"].url,
        "GEMINI_API_KEY": API_KEY,
        "AWS_ENDPOINT_URL_BEDROCK_RUNTIME": servers["bedrock"].url,
        "AWS_ACCESS_KEY_ID": AWS_ACCESS,
        "AWS_SECRET_ACCESS_KEY": AWS_SECRET,
        "AWS_REGION": REGION,
        "OLLAMA_HOST": servers["ollama"].url,
    }
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    monkeypatch.delenv("AWS_SESSION_TOKEN", raising=False)
    if "provider_from_env" in block:
        monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    else:
        monkeypatch.setenv("ANTHROPIC_API_KEY", API_KEY)
    falls_back = "with_fallback" in block
    for name, wire in wires().items():
        first: list[Turn | Fail] = [Fail("rate", retry_after=0), Fail("bad_request")] if falls_back else []
        servers[name].use(wire, *(first if name == "anthropic" else []), ANSWER)
    exec(compile(block, f"{DOC.name}[{index}]", "exec"), {"__name__": "docs"})
    out = capsys.readouterr().out
    assert "Refunds are accepted within 30 days." in out
    if "pick_provider_from_env" in block:
        assert "picked openai_compatible because OPENAI_BASE_URL, OPENAI_API_KEY are set" in out
    if falls_back:
        assert out.splitlines()[1:] == [
            "anthropic 1 error ERR_PROVIDER_RATE_LIMIT",
            "anthropic 2 error ERR_PROVIDER_REQUEST",
            "openai_compatible 1 ok None",
        ]
    if "block.source" in block:
        assert "openai.reasoning_content thinking 47 > 30, so no." in out
    used = [name for name, server in servers.items() if server.seen]
    assert used, "the block reached no provider"
    for name in used:
        assert servers[name].problems == [], f"{name}: {servers[name].problems}"
