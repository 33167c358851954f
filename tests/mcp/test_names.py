"""MCP tool names providers refuse (dots, over 64 characters) reach the model mapped, and its calls reach the
server under the server's own name; the mapping is deterministic, injective and reversible over arbitrary names."""

from __future__ import annotations

import hashlib
import re
import sys
import warnings
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agentfootprint import Agent
from agentfootprint.mcp import mcp_stdio
from agentfootprint.mcp._client_limits import keep_tools
from agentfootprint.mcp._names import model_tool_name
from tests.providers._vendors import BEDROCK_MODEL, MODEL, Turn, VendorServer, bedrock_service
from tests.providers.test_provider_contract import VENDORS

SERVER = Path(__file__).with_name("growing_server.py")
LONG = "reports." + "quarterly_revenue_by_region_" * 3
PROVIDER_NAME = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")  # OpenAI's and Anthropic's documented tool-name pattern


def bedrock_name_ok(name: str) -> bool:
    """Bedrock's ToolName shape, read from botocore's service model (min, max, pattern)."""
    converse = bedrock_service().operation_model("Converse").input_shape
    shape = converse.members["toolConfig"].members["tools"].member.members["toolSpec"].members["name"]
    meta = shape.metadata
    return meta["min"] <= len(name) <= meta["max"] and re.fullmatch(meta["pattern"], name) is not None


@dataclass(frozen=True)
class Spec:
    name: str
    description: str = "d"
    input_schema: Any = None


# -- the mapping -------------------------------------------------------------------------------------------------
def test_names_every_provider_accepts_are_kept_others_mapped_with_a_hash_suffix() -> None:
    assert model_tool_name("get_time") == "get_time"
    assert model_tool_name("weather.forecast") == "weather_forecast-x" + _digest("weather.forecast")
    assert model_tool_name(LONG) == LONG[:52].replace(".", "_") + "-x" + _digest(LONG)
    assert model_tool_name("7zip") == "_7zip-x" + _digest("7zip")
    assert model_tool_name("") == "_-x" + _digest("")
    looks_mapped = "weather_forecast-x" + _digest("weather.forecast")  # a server name shaped like a mapped one
    assert model_tool_name(looks_mapped) != looks_mapped


def test_a_server_name_shaped_like_a_mapped_one_cannot_take_the_mapped_name() -> None:
    hostile = ["a.b", model_tool_name("a.b"), "a/b", "a b", "a\x00b", "é.b"]
    specs = [Spec(n) for n in hostile]
    kept, dropped = keep_tools("s", specs, max_tools=99, max_description_chars=9, max_schema_bytes=99)
    assert dropped == []
    assert [spec.name for _, spec in kept] == hostile
    assert len({name for name, _ in kept}) == len(hostile)
    assert all(PROVIDER_NAME.match(name) for name, _ in kept)


def _digest(name: str) -> str:
    return hashlib.sha256(name.encode()).hexdigest()[:10]


@settings(max_examples=300, deadline=None)
@given(names=st.lists(st.text(max_size=90) | st.from_regex(r"[a-z_.]{1,80}", fullmatch=True), unique=True))
def test_the_mapping_is_injective_reversible_and_accepted_by_every_provider(names: list[str]) -> None:
    mapped = [model_tool_name(n) for n in names]
    assert len(set(mapped)) == len(names)
    assert all(PROVIDER_NAME.match(m) and bedrock_name_ok(m) for m in mapped)
    assert [model_tool_name(n) for n in names] == mapped  # deterministic
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # an empty name is dropped with a warning
        kept, dropped = keep_tools(
            "s", [Spec(n) for n in names], max_tools=10**6, max_description_chars=9, max_schema_bytes=99
        )
    back = {model: spec.name for model, spec in kept}
    assert back == {m: n for m, n in zip(mapped, names, strict=True) if n}  # each model name leads back to its tool
    assert [d.name for d in dropped] == [n for n in names if not n]  # only an empty name is refused


# -- on the wire, checked with the providers' own request types ----------------------------------------------------
WIRE_VENDORS = ["anthropic", "bedrock", "openai_compatible"]  # the providers whose tool-name pattern refuses dots


@pytest.fixture
def vendor_server() -> Iterator[VendorServer]:
    live = VendorServer()
    yield live
    live.close()


@pytest.mark.integration
@pytest.mark.parametrize("vendor", WIRE_VENDORS)
def test_dotted_and_long_server_names_go_out_mapped_and_calls_come_back_to_the_server(
    vendor: str, vendor_server: VendorServer
) -> None:
    make_wire, build = VENDORS[vendor]
    model = BEDROCK_MODEL if vendor == "bedrock" else MODEL
    calls = [
        ("c1", model_tool_name("weather.forecast"), {"city": "Oslo"}),
        ("c2", model_tool_name(LONG), {}),
    ]
    vendor_server.use(make_wire(), Turn(calls=calls), Turn(text="done"))
    tools = mcp_stdio(sys.executable, [str(SERVER), "modern"], name="growing", timeout_s=30)
    agent = Agent.create(provider=build(vendor_server.url), model=model).tool_provider(tools).build()
    assert agent.run_sync("go").answer == "done"
    assert vendor_server.problems == []
    sent = [_tool_names(vendor, seen.body) for seen in vendor_server.seen]
    assert sent[0] == sorted([model_tool_name("weather.forecast"), model_tool_name(LONG), "grow"])
    assert all(PROVIDER_NAME.match(n) and bedrock_name_ok(n) for names in sent for n in names)
    results = agent.last_snapshot().state["tool_results"]  # type: ignore[union-attr]
    assert [(r["content"], r["is_error"]) for r in results] == [
        ("forecast for Oslo: sun", False),
        ("long name reached", False),
    ]
    assert tools.server_names[model_tool_name(LONG)] == LONG


def _tool_names(vendor: str, body: dict[str, Any]) -> list[str]:
    if vendor == "openai_compatible":
        return sorted(t["function"]["name"] for t in body["tools"])
    if vendor == "anthropic":
        return sorted(t["name"] for t in body["tools"])
    return sorted(t["toolSpec"]["name"] for t in body["toolConfig"]["tools"])
