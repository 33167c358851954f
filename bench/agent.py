"""Agent benchmark: one recorded mock turn vs pydantic-ai (and LangGraph's ReAct agent), and long-run growth."""

from __future__ import annotations

import asyncio
import cProfile
import gc
import pstats
import statistics
import sys
import time
import tracemalloc
import warnings
from dataclasses import replace
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parent))

from _common import time_async, write_results

from agentfootprint import Agent, define_tool
from agentfootprint.providers import LLMRequest, LLMResponse, ToolCall, Usage, mock
from agentfootprint.providers.base import BaseProvider

CPU = time.process_time  # CPU time of this process: a shared machine does not charge us for others

SYSTEM = "You are a helpful weather assistant."
QUESTION = "What is the weather in Paris?"
ANSWER = "It is sunny in Paris."
PROFILE_N = 100  # profiled on 100 vs 400 iterations (same 4x step; 800 under cProfile takes a minute)
BATCH = 10  # turns per timing sample (one turn is ~1-5 ms; a batch keeps timer noise down)
TURN_ROUNDS = 5
GROWTH_ROUNDS = 3
DEFAULT_EXTENSIONS = ("honesty", "tool_sessions", "receipts")  # what every agent is given unless it declines

# Every model function and tool below is ``async`` in all three frameworks: pydantic-ai and LangChain send a sync
# model function or tool to a worker thread, which would charge them for a thread hop we do not pay.


# ---------------------------------------------------------------- one turn: agentfootprint


async def _weather(args: dict[str, Any], ctx: Any) -> str:
    return f"sunny in {args['city']}"


WEATHER = define_tool(
    name="weather",
    description="Current weather for a city",
    input_schema={"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
    execute=_weather,
)


async def _respond(request: LLMRequest) -> Any:
    if request.messages[-1].role == "tool":
        return ANSWER
    return {"tool_calls": [{"id": "call_1", "name": "weather", "args": {"city": "Paris"}}]}


def our_turn_agent(declined: tuple[str, ...] = ()) -> Any:
    # record_requests=False: the mock's request transcript is test instrumentation (a deep copy of every request,
    # kept for the provider's life); pydantic-ai's FunctionModel keeps none either. The run's own record is complete.
    provider = mock(respond=_respond, record_requests=False)
    agent = Agent.create(provider=provider, model="m", max_iterations=5).system(SYSTEM).tool(WEATHER).build()
    if not declined:
        return agent
    # diagnostic arm only: the share of the extensions every agent gets (the config's default list, left out)
    defaults = tuple(f for f in agent.config.default_extensions if getattr(f, "name", None) not in declined)
    kept = tuple(e for e in agent.config.extensions if e.name not in declined)
    return Agent(replace(agent.config, default_extensions=defaults, extensions=kept))


def _median_ratio(a: list[float], b: list[float]) -> float:
    return statistics.median(x / y for x, y in zip(a, b, strict=True))


# ---------------------------------------------------------------- one turn: pydantic-ai


def pydantic_ai_agent() -> Any:
    from pydantic_ai import Agent as PydanticAgent
    from pydantic_ai.messages import ModelResponse, TextPart, ToolCallPart, ToolReturnPart
    from pydantic_ai.models.function import AgentInfo, FunctionModel

    async def model_fn(messages: list[Any], info: AgentInfo) -> ModelResponse:
        if isinstance(messages[-1].parts[-1], ToolReturnPart):
            return ModelResponse(parts=[TextPart(ANSWER)])
        return ModelResponse(parts=[ToolCallPart("weather", {"city": "Paris"}, tool_call_id="call_1")])

    agent: Any = PydanticAgent(FunctionModel(model_fn), system_prompt=SYSTEM)

    @agent.tool_plain
    async def weather(city: str) -> str:
        """Current weather for a city"""
        return f"sunny in {city}"

    return agent


# ---------------------------------------------------------------- one turn: LangGraph prebuilt ReAct agent


def langgraph_react_agent() -> Any:
    from langchain_core.language_models.chat_models import BaseChatModel
    from langchain_core.messages import AIMessage, ToolMessage
    from langchain_core.outputs import ChatGeneration, ChatResult
    from langchain_core.tools import tool as lc_tool

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # create_react_agent is deprecated in LangGraph 1.x but still shipped
        from langgraph.prebuilt import create_react_agent

    class FakeToolModel(BaseChatModel):
        """A scripted chat model: a tool call, then the answer once a tool result is in."""

        @property
        def _llm_type(self) -> str:
            return "fake-tool-model"

        def bind_tools(self, tools: Any, **kwargs: Any) -> Any:
            return self

        def _reply(self, messages: list[Any]) -> ChatResult:
            if isinstance(messages[-1], ToolMessage):
                msg = AIMessage(content=ANSWER)
            else:
                msg = AIMessage(content="", tool_calls=[{"id": "call_1", "name": "weather", "args": {"city": "Paris"}}])
            return ChatResult(generations=[ChatGeneration(message=msg)])

        def _generate(self, messages: list[Any], stop: Any = None, run_manager: Any = None, **kw: Any) -> ChatResult:
            return self._reply(messages)

        async def _agenerate(
            self, messages: list[Any], stop: Any = None, run_manager: Any = None, **kw: Any
        ) -> ChatResult:
            return self._reply(messages)

    @lc_tool("weather")
    async def weather(city: str) -> str:
        """Current weather for a city"""
        return f"sunny in {city}"

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return create_react_agent(FakeToolModel(), [weather], prompt=SYSTEM)


async def turn_times() -> dict[str, Any]:
    ours = our_turn_agent()
    theirs = pydantic_ai_agent()
    first = await ours.run(QUESTION)
    other = await theirs.run(QUESTION)
    assert first.answer == ANSWER and first.iterations == 2, first
    assert other.output == ANSWER and len(other.all_messages()) == 4, other.all_messages()

    bare = our_turn_agent(declined=DEFAULT_EXTENSIONS)
    assert (await bare.run(QUESTION)).answer == ANSWER

    def batch(run: Any) -> Any:
        async def go() -> None:
            for _ in range(BATCH):
                await run()

        return go

    arms: dict[str, Any] = {
        "agentfootprint": batch(lambda: ours.run(QUESTION)),
        "agentfootprint_without_default_extensions": batch(lambda: bare.run(QUESTION)),
        "pydantic_ai": batch(lambda: theirs.run(QUESTION)),
    }
    lg_note = ""
    try:
        lg = langgraph_react_agent()
        lg_out = await lg.ainvoke({"messages": [("user", QUESTION)]})
        kinds = [type(m).__name__ for m in lg_out["messages"]]
        assert kinds == ["HumanMessage", "AIMessage", "ToolMessage", "AIMessage"], kinds
        assert lg_out["messages"][-1].content == ANSWER and lg_out["messages"][2].status == "success"
        arms["langgraph"] = batch(lambda: lg.ainvoke({"messages": [("user", QUESTION)]}))
    except Exception as exc:  # optional peer: report why it was skipped
        lg_note = f"LangGraph ReAct turn skipped: {type(exc).__name__}: {exc}"[:300]

    # Alternating rounds (every arm once per round); a ratio is the median of its per-round ratios, a time the
    # median of the rounds' medians.
    rounds: dict[str, list[float]] = {name: [] for name in arms}
    for _ in range(TURN_ROUNDS):
        for name, fn in arms.items():
            rounds[name].append(await time_async(fn, repeat=11, warmup=2, clock=CPU) / BATCH)
    out: dict[str, Any] = {name: statistics.median(samples) for name, samples in rounds.items()}
    out["ratio_vs_pydantic_ai"] = _median_ratio(rounds["agentfootprint"], rounds["pydantic_ai"])
    if "langgraph" in rounds:
        out["ratio_vs_langgraph"] = _median_ratio(rounds["agentfootprint"], rounds["langgraph"])
    out["default_extensions_share"] = 1 - _median_ratio(
        rounds["agentfootprint_without_default_extensions"], rounds["agentfootprint"]
    )
    out["langgraph_note"] = lg_note
    return out


# ---------------------------------------------------------------- long run: N vs 4N iterations


async def _step(args: dict[str, Any], ctx: Any) -> str:
    return f"step {args['n']} done"


STEP = define_tool(
    name="step",
    description="Do one step of the job",
    input_schema={"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]},
    execute=_step,
)


def _model_move(request: LLMRequest, iterations: int) -> int:
    """This call's iteration number: the request holds the user turn plus an assistant+tool pair per iteration."""
    return (len(request.messages) + 1) // 2


def long_mock(iterations: int) -> Any:
    """The project's ``mock(respond=...)``: a tool call every iteration until the last, which answers."""

    async def respond(request: LLMRequest) -> Any:
        k = _model_move(request, iterations)
        if k >= iterations:
            return f"finished after {k} iterations"
        return {"tool_calls": [{"id": f"call_{k}", "name": "step", "args": {"n": k}}]}

    return mock(respond=respond, record_requests=False)  # the transcript is test instrumentation, O(history)


class ScriptProvider(BaseProvider):
    """Diagnostic only: the same script, but keeps no transcript of requests and estimates no usage."""

    name = "script"

    def __init__(self, iterations: int) -> None:
        self.iterations = iterations

    async def complete(self, request: LLMRequest) -> LLMResponse:
        k = _model_move(request, self.iterations)
        usage = Usage(input_tokens=1, output_tokens=1)
        if k >= self.iterations:
            return LLMResponse(content=f"finished after {k} iterations", usage=usage, finish_reason="stop", model="m")
        call = ToolCall(id=f"call_{k}", name="step", args={"n": k})
        return LLMResponse(content="", tool_calls=[call], usage=usage, finish_reason="tool_calls", model="m")


def long_agent(provider: Any, iterations: int) -> Any:
    return Agent.create(provider=provider, model="m", max_iterations=iterations).system(SYSTEM).tool(STEP).build()


async def long_run(provider_factory: Any, iterations: int) -> Any:
    agent = long_agent(provider_factory(iterations), iterations)
    result = await agent.run("Do the job, one step at a time.")
    assert result.iterations == iterations and agent.stopped_early() is None, (result, agent.stopped_early())
    return agent


async def retained_agent_bytes(provider_factory: Any, iterations: int) -> dict[str, int]:
    """Bytes still allocated after a run while the agent (and so its last snapshot and provider) stays alive;
    then again after ``provider.reset()`` (mock only) to split off the provider's own request transcript."""
    provider = provider_factory(iterations)
    gc.collect()
    tracemalloc.start()
    before = tracemalloc.get_traced_memory()[0]
    agent = long_agent(provider, iterations)
    await agent.run("Do the job, one step at a time.")
    gc.collect()
    total = tracemalloc.get_traced_memory()[0] - before
    without_transcript = total
    if hasattr(provider, "reset"):
        provider.reset()
        gc.collect()
        without_transcript = tracemalloc.get_traced_memory()[0] - before
    tracemalloc.stop()
    del agent, provider
    return {"total": total, "without_provider_transcript": without_transcript}


async def superlinear_functions(n: int, n4: int, top: int = 8) -> dict[str, list[dict[str, Any]]]:
    """cProfile one mock run at ``n`` and ``4n`` iterations; the functions whose time grows beyond 4x.

    ``project_chain``: agentfootprint functions by cumulative excess (outermost first, so the last rows are the
    deepest owner of the growth); ``self_time``: any function by own-time excess (where the time is spent)."""

    async def profile(iterations: int) -> dict[Any, Any]:
        prof = cProfile.Profile()
        gc.collect()
        prof.enable()
        await long_run(long_mock, iterations)
        prof.disable()
        return pstats.Stats(prof).stats  # type: ignore[attr-defined,no-any-return]

    small, big = await profile(n), await profile(n4)
    rows = []
    for key, (_cc, calls4, tt4, ct4, _callers) in big.items():
        _, calls1, tt1, ct1, _ = small.get(key, (0, 0, 0.0, 0.0, None))
        if not calls1:
            continue
        file, line, func = key
        rows.append(
            {
                "function": f"{Path(file).name}:{line}({func})" if line else func,
                "module": file.split("/agentfootprint/")[-1] if "/src/agentfootprint/" in file else Path(file).name,
                "calls": [calls1, calls4],
                "cumulative_seconds": [round(ct1, 4), round(ct4, 4)],
                "self_seconds": [round(tt1, 4), round(tt4, 4)],
                "cumulative_growth": round(ct4 / ct1, 2) if ct1 else None,
                "excess_cumulative_seconds": round(ct4 - 4 * ct1, 3),
                "excess_self_seconds": round(tt4 - 4 * tt1, 3),
            }
        )
    project = [
        r for r in rows if r["module"].endswith(".py") and "/" in r["module"] and r["excess_cumulative_seconds"] > 0.1
    ]
    project.sort(key=lambda r: -r["cumulative_seconds"][1])
    by_self = sorted(rows, key=lambda r: -r["excess_self_seconds"])[:top]
    return {"project_chain": project[: 2 * top], "self_time": by_self}


async def main() -> dict[str, Any]:
    turn = await turn_times()
    t_ours, t_pa, t_lg = turn["agentfootprint"], turn["pydantic_ai"], turn.get("langgraph")

    n, n4 = 200, 800
    t_n: list[float] = []
    t_4n: list[float] = []
    for _ in range(GROWTH_ROUNDS):  # alternating: a drift in the machine's speed moves both sides
        t_n.append(await time_async(lambda: long_run(long_mock, n), repeat=3, warmup=1, clock=CPU))
        t_4n.append(await time_async(lambda: long_run(long_mock, n4), repeat=3, warmup=0, clock=CPU))
    m_n = await retained_agent_bytes(long_mock, n)
    m_4n = await retained_agent_bytes(long_mock, n4)
    # Diagnostic: the same loop on a provider that keeps no transcript -> the agent's own record, isolated.
    d_n = await time_async(lambda: long_run(ScriptProvider, n), repeat=3, warmup=1, clock=CPU)
    d_4n = await time_async(lambda: long_run(ScriptProvider, n4), repeat=3, warmup=1, clock=CPU)
    dm_n = await retained_agent_bytes(ScriptProvider, n)
    dm_4n = await retained_agent_bytes(ScriptProvider, n4)

    ratios = {
        "agent.turn_vs_pydantic_ai": round(turn["ratio_vs_pydantic_ai"], 4),
        "agent.long_run_time_growth_4x": round(_median_ratio(t_4n, t_n), 3),
        "agent.long_run_memory_growth_4x": round(m_4n["total"] / m_n["total"], 3),
    }
    targets = {
        "agent.turn_vs_pydantic_ai": 0.25,
        "agent.long_run_time_growth_4x": 4.5,
        "agent.long_run_memory_growth_4x": 4.5,
    }
    if t_lg is not None:
        ratios["agent.turn_vs_langgraph"] = round(turn["ratio_vs_langgraph"], 4)
        targets["agent.turn_vs_langgraph"] = 0.5
    within = {k: ratios[k] <= targets[k] for k in ratios}

    hot: dict[str, list[dict[str, Any]]] = {}
    if not (within["agent.long_run_time_growth_4x"] and within["agent.long_run_memory_growth_4x"]):
        hot = await superlinear_functions(PROFILE_N, 4 * PROFILE_N)

    return {
        "ratios": ratios,
        "targets": targets,
        "within_target": within,
        "turn": {
            "model_calls": 2,
            "tool_calls": 1,
            "agentfootprint_ms": round(t_ours * 1e3, 3),
            "pydantic_ai_ms": round(t_pa * 1e3, 3),
            "langgraph_ms": round(t_lg * 1e3, 3) if t_lg is not None else None,
            "agentfootprint_without_default_extensions_ms": round(
                turn["agentfootprint_without_default_extensions"] * 1e3, 3
            ),
            "default_extensions_share": round(turn["default_extensions_share"], 3),
        },
        "long_run": {
            "iterations": [n, n4],
            "seconds": [round(statistics.median(t_n), 4), round(statistics.median(t_4n), 4)],
            "retained_bytes": [m_n["total"], m_4n["total"]],
            "retained_bytes_per_iteration": [round(m_n["total"] / n), round(m_4n["total"] / n4)],
            "retained_bytes_without_mock_transcript": [
                m_n["without_provider_transcript"],
                m_4n["without_provider_transcript"],
            ],
            "memory_growth_without_mock_transcript": round(
                m_4n["without_provider_transcript"] / m_n["without_provider_transcript"], 3
            ),
        },
        "diagnostic_no_transcript_provider": {
            "what": "same loop, provider = a BaseProvider that keeps no request transcript and estimates no usage",
            "seconds": [round(d_n, 4), round(d_4n, 4)],
            "time_growth_4x": round(d_4n / d_n, 3),
            "retained_bytes": [dm_n["total"], dm_4n["total"]],
            "memory_growth_4x": round(dm_4n["total"] / dm_n["total"], 3),
        },
        "superlinear_hot_spots": {"profiled_iterations": [PROFILE_N, 4 * PROFILE_N], **hot} if hot else {},
        "notes": f"Turn: agentfootprint (mock(respond=..., record_requests=False), full recording: commit log, "
        f"reads/writes, events) vs "
        f"pydantic-ai Agent + FunctionModel (no instrumentation) vs LangGraph create_react_agent (no "
        f"checkpointer) with a scripted BaseChatModel whose bind_tools returns itself; all model functions and"
        f" tools are async; per-turn time (this process's CPU time) = median of 11 batches of {BATCH} turns "
        f"after warm-up per round; {TURN_ROUNDS} alternating rounds, each ratio the median of its per-round "
        f"ratios. The arm without default extensions (honesty, tool sessions, receipts declined) is a "
        f"diagnostic: default_extensions_share is their part of our turn. Long run: the model calls a tool "
        f"every iteration until the last (max_iterations = N), then answers; memory = tracemalloc bytes "
        f"retained while the agent (last snapshot, conversation, provider) is alive. " + (turn["langgraph_note"] or ""),
    }


if __name__ == "__main__":
    result = asyncio.run(main())
    path = write_results("agent", result)
    print(f"agent: {result['ratios']} (targets {result['targets']}) -> {path}")
