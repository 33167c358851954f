"""A chart as text: its numbered description and its Mermaid diagram, exactly; the blocking twins."""

from __future__ import annotations

import asyncio

import pytest

from agentfootprint._sync import SyncInRunningLoopError
from agentfootprint.flow import CancelToken, FlowCancelledError, FlowChart, flow_chart, pause


def every_kind() -> FlowChart:
    inner = flow_chart("Inner A", lambda s: None, id="ia").then("Inner B", lambda s: None, id="ib").build()
    return (
        flow_chart('Say "hi"', lambda s: None, id="start", description="Reads x")
        .decider("Route", lambda s: "a", id="route", description="Pick")
        .branch("a", "Path A", lambda s: None)
        .branch("b", "Path B", inner)
        .default("a")
        .end()
        .selector("Pick", lambda s: ["p"], id="pick")
        .branch("p", "P", lambda s: None)
        .branch("q", "Q", lambda s: None)
        .end()
        .parallel([("x", "X", lambda s: None), ("y", "Y", lambda s: None)], id="fan")
        .subflow("mount", inner, name="Mounted")
        .then("Again", lambda s: None, id="again")
        .loop_to("route")
        .build()
    )


def test_the_description_numbers_every_step_and_says_how_it_branches() -> None:
    assert every_kind().description.splitlines() == [
        'FlowChart: Say "hi"',
        "Steps:",
        '1. Say "hi" — Reads x',
        "2. Route — Pick (branches: a, b)",
        "   3. Path A",
        "   4. Path B (subflow: Inner A)",
        "5. Pick (selects from: p, q)",
        "   6. P",
        "   7. Q",
        "8. Parallel (in parallel: x, y)",
        "   9. X",
        "   10. Y",
        "11. Mounted (subflow: Inner A)",
        "12. Again",
        "   → loops back to step 2 (route)",
    ]


def test_the_mermaid_diagram_draws_every_kind_of_node_and_edge() -> None:
    assert every_kind().to_mermaid() == EXPECTED_MERMAID


def test_blocking_twins_refuse_inside_a_running_loop_naming_the_async_twin() -> None:
    chart = flow_chart("A", lambda s: pause("q"), id="a").build()
    paused = chart.run_sync()
    assert paused.paused and paused.checkpoint is not None
    assert chart.resume_sync(paused.checkpoint, "yes").paused is False

    async def inside() -> None:
        with pytest.raises(SyncInRunningLoopError) as run_err:
            chart.run_sync()
        assert str(run_err.value).endswith("(await chart.run(...))")
        with pytest.raises(SyncInRunningLoopError) as resume_err:
            chart.resume_sync(paused.checkpoint or {}, "yes")
        assert str(resume_err.value).endswith("(await chart.resume(...))")

    asyncio.run(inside())


async def test_resume_takes_the_cancel_token_and_names_its_origin() -> None:
    chart = (
        flow_chart("Ask", lambda s: s.set("a", pause("q")), id="ask").then("B", lambda s: s.set("b", 1), id="b").build()
    )
    r = await chart.run()
    token = CancelToken()
    token.cancel("stop")
    with pytest.raises(FlowCancelledError) as ei:
        await chart.resume(r.checkpoint or {}, "yes", cancel=token)
    assert str(ei.value) == "run cancelled before stage 'ask': stop"
    resumed = await chart.resume(r.checkpoint or {}, "yes", origin={"sealed": True})
    assert resumed.snapshot.resumed_from == {"sealed": True, "run_id": r.run_id, "commits": 1}


def test_mermaid_labels_trade_double_quotes_and_newlines_and_stop_at_80() -> None:
    text = flow_chart('A "b"\nc' + "d" * 100, lambda s: None, id="a").build().to_mermaid()
    assert text.splitlines()[1].endswith("[\"A 'b' c" + "d" * 73 + '"]')


EXPECTED_MERMAID = """flowchart TD
    n_2b020927d3["Say 'hi'"]
    n_fc166eb813{"Route"}
    n_86f7e437fa["Path A"]
    subgraph n_e9d71f5ee7["Path B"]
    n_d9e7d9f15c["Inner A"]
    n_c8be281364["Inner B"]
    n_d9e7d9f15c --> n_c8be281364
    end
    n_4c2e8554e3{"Pick"}
    n_516b9783fc["P"]
    n_22ea1c649c["Q"]
    n_2899441143[["Parallel"]]
    n_11f6ad8ec5["X"]
    n_95cb0bfd29["Y"]
    subgraph n_c7a6dddea9["Mounted"]
    n_7fc795489f["Inner A"]
    n_4537bc7824["Inner B"]
    n_7fc795489f --> n_4537bc7824
    end
    n_aaa4d5f872["Again"]
    n_2b020927d3 --> n_fc166eb813
    n_fc166eb813 -->|a| n_86f7e437fa
    n_fc166eb813 -->|b| n_e9d71f5ee7
    n_86f7e437fa --> n_4c2e8554e3
    n_e9d71f5ee7 --> n_4c2e8554e3
    n_4c2e8554e3 -->|p| n_516b9783fc
    n_4c2e8554e3 -->|q| n_22ea1c649c
    n_4c2e8554e3 --> n_2899441143
    n_2899441143 --> n_11f6ad8ec5
    n_11f6ad8ec5 --> n_c7a6dddea9
    n_2899441143 --> n_95cb0bfd29
    n_95cb0bfd29 --> n_c7a6dddea9
    n_c7a6dddea9 --> n_aaa4d5f872
    n_aaa4d5f872 -.->|loop| n_fc166eb813"""
