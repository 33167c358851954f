"""docs/providers.md: every ``python`` block is a whole program: run alone (a fresh interpreter, an empty folder)
against vendor wires served on loopback, it prints the answer they give.

The blocks run here, not by the whole-program runner (tests/docs/test_docs_pages.py): each needs a vendor's server,
which this test serves and points the block at through the environment variables the page names."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests._doc_blocks import run_alone

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
PICKED = (
    "picked openai_compatible because OPENAI_BASE_URL, OPENAI_API_KEY are set (also configured: azure_openai, "
    "gemini, bedrock, ollama; set AGENTFOOTPRINT_PROVIDER to choose)"
)


def printed(block: str) -> list[str]:
    """The lines ``block`` prints against the scripted vendors."""
    if "pick_provider_from_env" in block:
        return [PICKED, ANSWER.text]
    if "with_fallback" in block:  # anthropic is rate limited, then refuses the request: the fallback answers
        tries = ["anthropic 1 error ERR_PROVIDER_RATE_LIMIT", "anthropic 2 error ERR_PROVIDER_REQUEST"]
        return [ANSWER.text, *tries, "openai_compatible 1 ok None"]
    if "block.source" in block:
        return [f"answer: {ANSWER.text}", "openai.reasoning_content thinking 47 > 30, so no."]
    return [ANSWER.text]


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
    index: int, servers: dict[str, VendorServer], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
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
    done = run_alone(block, tmp_path, timeout=120)
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.splitlines() == printed(block)
    used = [name for name, server in servers.items() if server.seen]
    assert used, "the block reached no provider"
    for name in used:
        assert servers[name].problems == [], f"{name}: {servers[name].problems}"
