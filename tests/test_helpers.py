"""The shared leaf helpers: one sync runner, one module:factory loader, one progress bar, the text helpers."""

from __future__ import annotations

import asyncio
import json
import math
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from agentfootprint import Agent
from agentfootprint._loader import FactoryPathError, import_path
from agentfootprint._progress import ProgressBar
from agentfootprint._sync import SyncInRunningLoopError, run_sync
from agentfootprint._text import content_tokens, ellipsize, json_writer, one_line
from agentfootprint.events import EventDispatcher
from agentfootprint.explain import localize_sync
from agentfootprint.flow import flow_chart
from agentfootprint.providers import mock
from agentfootprint.scale import evaluate_sync

# -- one sync runner ----------------------------------------------------------------------------------------------


async def _answer() -> int:
    return 42


def test_run_sync_runs_where_no_loop_runs() -> None:
    assert run_sync(_answer()) == 42


def _twins() -> list[tuple[str, Any]]:
    agent = Agent.create(provider=mock(reply="x")).build()
    chart = flow_chart("S", lambda s: None, id="s").build()
    return [
        ("await agent.run(...)", lambda: agent.run_sync("hi")),
        ("await agent.follow_up(...)", lambda: agent.follow_up_sync("hi")),
        ("await chart.run(...)", lambda: chart.run_sync()),
        ("await localize_context_bug(...)", lambda: localize_sync(agent, samples=0)),
        ("await evaluate(...)", lambda: evaluate_sync("tests.scale.factories:calculator", [])),
        ("await dispatcher.drain(...)", lambda: EventDispatcher().drain_sync()),
    ]


@pytest.mark.parametrize("index", range(6))
async def test_every_sync_twin_inside_a_running_loop_names_its_async_twin(index: int) -> None:
    twin, call = _twins()[index]
    with pytest.raises(SyncInRunningLoopError) as refused:
        call()
    assert refused.value.code == "ERR_SYNC_IN_RUNNING_LOOP" and twin in str(refused.value)
    assert "await the async twin" in str(refused.value) and isinstance(refused.value, RuntimeError)


def test_a_refused_twin_leaves_no_coroutine_unawaited() -> None:
    async def inside() -> None:
        coro = _answer()
        with pytest.raises(SyncInRunningLoopError):
            run_sync(coro)
        assert coro.cr_frame is None  # closed, never left pending

    asyncio.run(inside())


# -- one module:factory loader ------------------------------------------------------------------------------------


def test_a_factory_path_names_a_module_attribute_dotted_attributes_too() -> None:
    assert import_path("agentfootprint._flagship:refunds_agent").__name__ == "refunds_agent"
    assert import_path("agentfootprint.agent:Agent.create") == Agent.create


@pytest.mark.parametrize(
    ("path", "reason"),
    [
        ("no-colon", "shape"),
        ("a:b:c", "shape"),
        (":make", "shape"),
        ("mod:", "shape"),
        ("mod : make", "shape"),
        ("agentfootprint_no_such_module:make", "import"),
        ("agentfootprint._flagship:no_such_factory", "attribute"),
    ],
)
def test_bad_factory_paths_are_refused_by_reason(path: str, reason: str) -> None:
    with pytest.raises(FactoryPathError) as refused:
        import_path(path)
    assert refused.value.reason == reason and refused.value.code == "ERR_FACTORY_PATH"


@pytest.mark.parametrize("value", [None, 3, b"mod:make", ["mod:make"]])
def test_a_factory_path_that_is_not_a_string_is_refused(value: Any) -> None:
    with pytest.raises(FactoryPathError):
        import_path(value)


def test_from_cwd_makes_the_current_directory_importable(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "i14_local_factories.py").write_text("def make():\n    return 'made'\n")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr("sys.path", [p for p in __import__("sys").path if p not in ("", str(tmp_path))])
    with pytest.raises(FactoryPathError):
        import_path("i14_local_factories:make")
    assert import_path("i14_local_factories:make", from_cwd=True)() == "made"


# -- one progress bar ---------------------------------------------------------------------------------------------


def test_a_hidden_progress_bar_counts_nothing_and_closes_twice(capsys: pytest.CaptureFixture[str]) -> None:
    with ProgressBar("reruns", 10, show=False) as bar:
        bar.advance()
        bar.reached(5)
    bar.close()
    assert capsys.readouterr() == ("", "")


def test_a_shown_progress_bar_with_nothing_to_count_is_not_drawn(capsys: pytest.CaptureFixture[str]) -> None:
    with ProgressBar("reruns", 0, show=True) as bar:
        bar.advance()
    assert capsys.readouterr() == ("", "")


# -- text helpers -------------------------------------------------------------------------------------------------


def test_text_helpers_cut_with_an_ellipsis_and_fold_whitespace() -> None:
    assert ellipsize("abcdef", 4) == "abc…" and ellipsize("abc", 4) == "abc"
    assert one_line("a \n  b\tc", 80) == "a b c" and one_line("x" * 10, 5) == "xxxx…"
    assert content_tokens("The VIP override for A-1001 is ON") == ["vip", "override", "a-1001"]


@given(text=st.text(max_size=300), limit=st.integers(min_value=1, max_value=200))
def test_ellipsize_never_exceeds_the_limit_and_keeps_a_prefix(text: str, limit: int) -> None:
    cut = ellipsize(text, limit)
    assert len(cut) <= limit
    assert cut == text or (cut.endswith("…") and text.startswith(cut[:-1]))


JSONISH = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=4), inner, max_size=4),
    max_leaves=20,
)


@given(JSONISH)
def test_json_writer_writes_what_json_dumps_writes_with_sorted_keys_and_no_spaces(value: Any) -> None:
    for ascii_only in (True, False):
        dumps = json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=ascii_only, default=str)
        assert json_writer(ensure_ascii=ascii_only)(value) == dumps


def test_json_writer_exact_text_and_a_cycle_refused_as_json_dumps_refuses_it() -> None:
    class Odd:
        def __str__(self) -> str:
            return "odd"

    value = {"b": [1, math.inf, None], "a": "é\n", "c": Odd()}
    assert json_writer(ensure_ascii=True)(value) == '{"a":"\\u00e9\\n","b":[1,Infinity,null],"c":"odd"}'
    assert json_writer(ensure_ascii=False)(value) == '{"a":"é\\n","b":[1,Infinity,null],"c":"odd"}'
    assert json_writer(ensure_ascii=True)("é") == '"\\u00e9"'
    loop: list[Any] = []
    loop.append(loop)
    with pytest.raises(ValueError, match="Circular reference detected"):
        json_writer(ensure_ascii=True)(loop)
