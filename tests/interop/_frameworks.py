"""Fixture producers: real pydantic-ai, LangGraph and OpenAI Agents SDK runs, offline, their spans captured.

Each framework runs its own agent loop with an offline model (pydantic-ai ``FunctionModel``; a LangChain
``BaseChatModel`` subclass; an Agents SDK ``Model`` subclass that opens ``response_span`` as ``OpenAIResponsesModel``
does) under its own instrumentation (pydantic-ai's ``Instrumentation`` capability with content on; OpenInference for
LangChain and the Agents SDK), into an ``InMemorySpanExporter``. The model reads what it was given: when the planted
misleading text reached it, it repeats the misleading claim, otherwise it answers truthfully — so removing the
planted source (and only it) changes the answer. Versions: see ``VERSIONS`` (pinned in pyproject's dev group).
"""

from __future__ import annotations

import asyncio
import json
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from importlib.metadata import version
from typing import Any

from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

FRAMEWORKS = ("pydantic_ai", "langgraph", "openai_agents")
VERSIONS = {
    name: version(name)
    for name in (
        "pydantic-ai-slim",
        "langgraph",
        "langchain-core",
        "openinference-instrumentation-langchain",
        "openai-agents",
        "openinference-instrumentation-openai-agents",
        "opentelemetry-sdk",
    )
}
RETRIEVER_TOOLS = ("search_docs", "search_kb", "find_articles", "retrieve_policy")
"""Tool names that retrieve documents (the Agents SDK instrumentor is told these are RETRIEVER spans)."""
_LOCK = threading.Lock()  # the LangChain and Agents SDK instrumentors patch process-wide state


@dataclass(frozen=True)
class Doc:
    """One retrieved document: its id and text."""

    id: str
    text: str


@dataclass(frozen=True)
class ToolPlan:
    """A tool the agent calls once: a plain tool returns ``result``; a retriever returns ``docs``."""

    name: str
    description: str
    result: str = ""
    docs: tuple[Doc, ...] = ()

    def output(self) -> str:
        """What the tool hands the model (a retriever joins its documents' texts)."""
        return "\n\n".join(d.text for d in self.docs) if self.docs else self.result


@dataclass(frozen=True)
class Case:
    """One planted run: the misleading text hides in the tool result or document named ``planted_id``."""

    framework: str
    system: str
    question: str
    tools: tuple[ToolPlan, ...]
    planted_id: str
    planted_text: str
    misleading: str
    truthful: str

    def answer_for(self, seen: str) -> str:
        """The offline model's answer: misleading exactly when the planted text is in what it read."""
        return self.misleading if self.planted_text in seen else self.truthful

    @property
    def planted_tool(self) -> str:
        """The tool whose result carries the planted text (itself, or the retriever returning the document)."""
        for t in self.tools:
            if t.name == self.planted_id or any(d.id == self.planted_id for d in t.docs):
                return t.name
        raise LookupError("planted source not among the case's tools")

    def culprits_exact(self, found: set[tuple[str, ...]]) -> bool:
        """Whether the confirmed culprit sets ``found`` are exactly the planted source, alone (a document is its own
        source: removing the retriever's tool result keeps the documents inside it)."""
        return found == {(self.planted_id,)}

    def respond(self, request: Any) -> str:
        """A mock provider's answer to a re-sent request: the same rule the offline model followed."""
        seen = [request.system_prompt, *(m.content for m in request.messages)]
        return self.answer_for(" ".join(seen))


@dataclass
class Captured:
    """A framework's finished run: its spans (as the in-memory exporter holds them) and final answer."""

    case: Case
    spans: tuple[ReadableSpan, ...]
    final: str
    llm_spans: list[str] = field(default_factory=list)

    @property
    def last_llm(self) -> str:
        """Hex id of the last LLM span: the model call that read the tool results and answered."""
        return self.llm_spans[-1]


def _llm_span_ids(spans: tuple[ReadableSpan, ...]) -> list[str]:
    ordered = sorted(spans, key=lambda s: s.start_time or 0)
    out = []
    for s in ordered:
        a = s.attributes or {}
        if a.get("openinference.span.kind") == "LLM" or a.get("gen_ai.operation.name") == "chat":
            out.append(f"{s.context.span_id:016x}")
    return out


def _provider() -> tuple[TracerProvider, InMemorySpanExporter]:
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    return provider, exporter


# --- pydantic-ai ------------------------------------------------------------------------------------------------


def _pydantic_ai(case: Case, content: bool = True) -> Captured:
    from pydantic_ai import Agent, Tool
    from pydantic_ai.capabilities.instrumentation import Instrumentation
    from pydantic_ai.messages import ModelMessage, ModelRequest, ModelResponse, TextPart, ToolCallPart, ToolReturnPart
    from pydantic_ai.models.function import AgentInfo, FunctionModel
    from pydantic_ai.models.instrumented import InstrumentationSettings

    provider, exporter = _provider()
    retrieval = provider.get_tracer("retriever")

    def reply(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        returned = [
            p for m in messages if isinstance(m, ModelRequest) for p in m.parts if isinstance(p, ToolReturnPart)
        ]
        if not returned:
            return ModelResponse(
                parts=[
                    ToolCallPart(t.name, {"query": case.question}, tool_call_id=f"call_{n}")
                    for n, t in enumerate(case.tools)
                ]
            )
        return ModelResponse(parts=[TextPart(case.answer_for(" ".join(str(p.content) for p in returned)))])

    def make(plan: ToolPlan) -> Tool[None]:
        def run(query: str) -> str:
            if plan.docs:  # a user's own retriever span, in the GenAI retrieval convention
                docs = [{"id": d.id, "content": d.text} for d in plan.docs]
                attrs = {"gen_ai.operation.name": "retrieval", "gen_ai.retrieval.documents": json.dumps(docs)}
                with retrieval.start_as_current_span(f"retrieval {plan.name}", attributes=attrs):
                    pass
            return plan.output()

        return Tool(run, name=plan.name, description=plan.description, takes_ctx=False)

    agent = Agent(
        FunctionModel(reply),
        name="assistant",
        instructions=case.system,
        tools=[make(t) for t in case.tools],
        capabilities=[Instrumentation(InstrumentationSettings(include_content=content, tracer_provider=provider))],
    )
    result = agent.run_sync(case.question)
    spans = exporter.get_finished_spans()
    return Captured(case, spans, str(result.output), _llm_span_ids(spans))


def _oi_config(content: bool) -> Any:
    """OpenInference's trace config: everything recorded, or inputs, outputs and messages hidden."""
    from openinference.instrumentation import TraceConfig

    hide = not content
    return TraceConfig(hide_inputs=hide, hide_outputs=hide, hide_input_messages=hide, hide_output_messages=hide)


# --- LangGraph / LangChain --------------------------------------------------------------------------------------


@contextmanager
def _instrumented(instrumentor: Any, **kwargs: Any) -> Iterator[InMemorySpanExporter]:
    provider, exporter = _provider()
    with _LOCK:
        instrumentor.instrument(tracer_provider=provider, **kwargs)
        try:
            yield exporter
        finally:
            instrumentor.uninstrument()


def _langgraph(case: Case, content: bool = True) -> Captured:
    from langchain_core.callbacks import CallbackManagerForRetrieverRun
    from langchain_core.documents import Document
    from langchain_core.language_models.chat_models import BaseChatModel
    from langchain_core.messages import AIMessage, AnyMessage, BaseMessage, SystemMessage, ToolMessage
    from langchain_core.outputs import ChatGeneration, ChatResult
    from langchain_core.retrievers import BaseRetriever
    from langchain_core.tools import BaseTool, StructuredTool
    from langchain_core.utils.function_calling import convert_to_openai_tool
    from langgraph.graph import END, START, MessagesState, StateGraph
    from langgraph.prebuilt import ToolNode, tools_condition
    from openinference.instrumentation.langchain import LangChainInstrumentor

    class ScriptedChat(BaseChatModel):
        """Calls every tool once, then answers from the tool messages it was sent."""

        @property
        def _llm_type(self) -> str:
            return "scripted-chat"

        def bind_tools(self, tools: Any, **kwargs: Any) -> Any:
            return self.bind(tools=[convert_to_openai_tool(t) for t in tools], **kwargs)

        def _generate(self, messages: list[BaseMessage], stop: Any = None, run_manager: Any = None, **kw: Any) -> Any:
            results = [m for m in messages if isinstance(m, ToolMessage)]
            if results:
                msg = AIMessage(content=case.answer_for(" ".join(str(m.content) for m in results)))
            else:
                calls = [
                    {"name": t.name, "args": {"query": case.question}, "id": f"call_{n}", "type": "tool_call"}
                    for n, t in enumerate(case.tools)
                ]
                msg = AIMessage(content="", tool_calls=calls)
            return ChatResult(generations=[ChatGeneration(message=msg)])

    class PlanRetriever(BaseRetriever):
        """Returns the plan's documents (their ids in metadata: OpenInference records metadata, not Document.id)."""

        docs: tuple[Doc, ...]

        def _get_relevant_documents(self, query: str, *, run_manager: CallbackManagerForRetrieverRun) -> Any:
            return [Document(page_content=d.text, id=d.id, metadata={"id": d.id}) for d in self.docs]

    def make(plan: ToolPlan) -> BaseTool:
        def run(query: str) -> str:
            if plan.docs:
                found = PlanRetriever(docs=plan.docs).invoke(query)
                return "\n\n".join(d.page_content for d in found)
            return plan.result

        return StructuredTool.from_function(func=run, name=plan.name, description=plan.description)

    tools = [make(t) for t in case.tools]
    model = ScriptedChat().bind_tools(tools)

    def call_model(state: MessagesState) -> dict[str, list[AnyMessage]]:
        return {"messages": [model.invoke([SystemMessage(case.system), *state["messages"]])]}

    graph = StateGraph(MessagesState)
    graph.add_node("agent", call_model)
    graph.add_node("tools", ToolNode(tools))
    graph.add_edge(START, "agent")
    graph.add_conditional_edges("agent", tools_condition, ["tools", END])
    graph.add_edge("tools", "agent")
    app = graph.compile()
    with _instrumented(LangChainInstrumentor(), config=_oi_config(content)) as exporter:
        out = app.invoke({"messages": [("user", case.question)]})
    spans = exporter.get_finished_spans()
    return Captured(case, spans, str(out["messages"][-1].content), _llm_span_ids(spans))


# --- OpenAI Agents SDK ------------------------------------------------------------------------------------------


def _openai_agents(case: Case, content: bool = True) -> Captured:
    from agents import Agent, FunctionTool, Model, ModelResponse, Runner, Usage, function_tool
    from agents.tracing import response_span
    from openai.types.responses import (
        FunctionTool as ResponseTool,
    )
    from openai.types.responses import (
        Response,
        ResponseFunctionToolCall,
        ResponseOutputMessage,
        ResponseOutputText,
    )
    from openinference.instrumentation.openai_agents import OpenAIAgentsInstrumentor

    class ScriptedModel(Model):
        """Calls every tool once, then answers from the tool outputs; traces itself as ``OpenAIResponsesModel``."""

        def __init__(self) -> None:
            self.turn = 0

        async def get_response(
            self,
            system_instructions: str | None,
            input: Any,
            model_settings: Any,
            tools: list[Any],
            output_schema: Any,
            handoffs: list[Any],
            tracing: Any,
            *,
            previous_response_id: str | None = None,
            conversation_id: str | None = None,
            prompt: Any = None,
        ) -> ModelResponse:
            self.turn += 1
            items = input if isinstance(input, list) else [{"role": "user", "content": input}]
            outputs = [
                str(i.get("output", ""))
                for i in items
                if isinstance(i, dict) and i.get("type") == "function_call_output"
            ]
            out: list[Any]
            if outputs:
                text = ResponseOutputText(text=case.answer_for(" ".join(outputs)), type="output_text", annotations=[])
                out = [ResponseOutputMessage(id=f"msg_{self.turn}", type="message", role="assistant",
                                             status="completed", content=[text])]  # fmt: skip
            else:
                args = json.dumps({"query": case.question})
                out = [
                    ResponseFunctionToolCall(
                        id=f"fc_{n}", call_id=f"call_{n}", type="function_call", name=t.name, arguments=args
                    )
                    for n, t in enumerate(case.tools)
                ]
            specs = [
                ResponseTool(
                    type="function",
                    name=t.name,
                    description=t.description,
                    parameters=t.params_json_schema,
                    strict=t.strict_json_schema,
                )
                for t in tools
                if isinstance(t, FunctionTool)
            ]
            with response_span(disabled=tracing.is_disabled()) as span:
                response = Response(id=f"resp_{self.turn}", created_at=0, model="scripted-1", object="response",
                                    output=out, parallel_tool_calls=True, tool_choice="auto", tools=specs,
                                    instructions=system_instructions)  # fmt: skip
                span.span_data.response = response
                span.span_data.input = input
            return ModelResponse(output=out, usage=Usage(), response_id=response.id)

        def stream_response(self, *args: Any, **kwargs: Any) -> Any:
            raise NotImplementedError("the fixtures run without streaming")

    def make(plan: ToolPlan) -> FunctionTool:
        if plan.docs:

            def search(query: str) -> list[dict[str, str]]:
                return [{"id": d.id, "content": d.text} for d in plan.docs]

            return function_tool(search, name_override=plan.name, description_override=plan.description)

        def run(query: str) -> str:
            return plan.result

        return function_tool(run, name_override=plan.name, description_override=plan.description)

    agent = Agent(
        name="assistant", instructions=case.system, model=ScriptedModel(), tools=[make(t) for t in case.tools]
    )
    kinds = {name: "RETRIEVER" for name in RETRIEVER_TOOLS}
    with _instrumented(
        OpenAIAgentsInstrumentor(), exclusive_processor=True, tool_span_kinds=kinds, config=_oi_config(content)
    ) as exporter:
        result = asyncio.run(Runner.run(agent, case.question))
    spans = exporter.get_finished_spans()
    return Captured(case, spans, str(result.final_output), _llm_span_ids(spans))


PRODUCERS: dict[str, Callable[[Case, bool], Captured]] = {
    "pydantic_ai": _pydantic_ai,
    "langgraph": _langgraph,
    "openai_agents": _openai_agents,
}


def capture(case: Case, *, content: bool = True) -> Captured:
    """Run ``case`` in its framework and return the captured spans (``content=False``: message capture off)."""
    return PRODUCERS[case.framework](case, content)


# --- planted cases ----------------------------------------------------------------------------------------------

_SYSTEMS = (
    "You are the travel desk.\n\nAnswer from the tools you called.\n\nBe brief.",
    "You answer questions about the city museum.\n\nQuote the source you relied on.",
    "You are a refunds assistant.\n\nNever promise what the policy does not say.\n\nKeep answers short.",
    "You help staff with HR questions.\n\nCite the handbook section.",
)
_TOPICS = (
    ("Is the Louvre open on Tuesday?", "The Louvre is closed every day this month.", "Yes, it opens at 9:00.",
     "No, it is closed all month."),
    ("Can order 7 be refunded?", "Order 7 was bought 900 days ago and is a final sale.", "Yes, within 30 days.",
     "No, it is a final sale."),
    ("How many vacation days do new hires get?", "New hires get 0 vacation days in their first five years.",
     "New hires get 25 days.", "New hires get none."),
    ("Is flight LH400 on time?", "Flight LH400 was cancelled by the airline yesterday.", "It is on time.",
     "It was cancelled."),
    ("Does the hotel allow pets?", "Pets are banned and fined 500 euros per night.", "Yes, pets are welcome.",
     "No, pets are banned."),
)  # fmt: skip
_PLAIN_TOOLS = (
    ("lookup_order", "Look up an order by number.", "Order lookup returned status: shipped, paid by card."),
    ("get_weather", "Current weather for a city.", "Weather: 18 degrees and sunny."),
    ("check_calendar", "Opening hours calendar.", "Calendar: regular opening hours 9:00 to 18:00."),
    ("read_handbook", "Read the staff handbook.", "Handbook section 4 covers leave requests."),
    ("currency_rate", "Exchange rates.", "EUR to USD is 1.08 today."),
)
_WORDINGS = (
    "{0} (ref {1})",
    "Note {1}: {0}",
    "Update from the provider, record {1}. {0}",
    "According to entry #{1} of the latest record, {0}",
    "{0} This supersedes all earlier notices (id {1}).",
)
_FILLER_DOCS = (
    "Visitors may bring small bags.",
    "Opening hours are posted at the entrance.",
    "Refund requests are processed within five working days.",
    "The help desk answers in English and French.",
    "Staff parking is behind building B.",
)


def planted_cases(n: int = 60) -> list[Case]:
    """``n`` generated cases, round-robin over the three frameworks: 1-4 plain tools, 0-3 documents behind a
    retriever tool, the misleading text planted in one tool result or one document, varied wording."""
    cases = []
    for i in range(n):
        framework = FRAMEWORKS[i % 3]
        question, planted_text, truthful, misleading = _TOPICS[(i // 3) % len(_TOPICS)]
        planted_text = _WORDINGS[i % len(_WORDINGS)].format(planted_text, i)
        j, f = divmod(i, 3)
        n_plain = 1 + (j * 3 + f) % 4
        n_docs = (j + f) % 4
        plain = [_PLAIN_TOOLS[(i + k) % len(_PLAIN_TOOLS)] for k in range(n_plain)]
        tools = [ToolPlan(name, desc, result=f"{text} [{i}.{k}]") for k, (name, desc, text) in enumerate(plain)]
        docs = tuple(
            Doc(f"doc-{i}-{k}", f"{_FILLER_DOCS[(i + k) % len(_FILLER_DOCS)]} [{i}.{k}]") for k in range(n_docs)
        )
        plant_in_doc = bool(docs) and (j + f) % 3 != 1
        if plant_in_doc:
            slot = i % len(docs)
            planted_id = docs[slot].id
            docs = (*docs[:slot], Doc(planted_id, planted_text), *docs[slot + 1 :])
        else:
            slot = i % len(tools)
            planted_id = tools[slot].name
            tools[slot] = ToolPlan(tools[slot].name, tools[slot].description, result=planted_text)
        if docs:
            name = RETRIEVER_TOOLS[i % len(RETRIEVER_TOOLS)]
            tools.insert(i % (len(tools) + 1), ToolPlan(name, "Search the knowledge base.", docs=docs))
        cases.append(
            Case(
                framework,
                _SYSTEMS[i % len(_SYSTEMS)],
                question,
                tuple(tools),
                planted_id,
                planted_text,
                misleading,
                truthful,
            )
        )
    return cases


def one_case(framework: str, *, planted_in: str = "tool") -> Case:
    """A small hand-written case: two tools (one a retriever of two documents), the planted text in a tool result
    (``planted_in="tool"``) or a document (``"doc"``)."""
    planted = "The museum is closed on Mondays and Tuesdays."
    docs = (Doc("kb-hours", "Opening hours: 9:00 to 18:00."), Doc("kb-bags", "Bags go in the cloakroom."))
    lookup = "Calendar: open every day this week."
    if planted_in == "doc":
        docs = (Doc("kb-hours", planted), docs[1])
    else:
        lookup = planted
    tools = (
        ToolPlan("check_calendar", "Opening hours calendar.", result=lookup),
        ToolPlan("search_docs", "Search the museum knowledge base.", docs=docs),
    )
    planted_id = "kb-hours" if planted_in == "doc" else "check_calendar"
    return Case(framework, _SYSTEMS[1], "Is the museum open on Tuesday?", tools, planted_id, planted,
                "No, it is closed on Tuesdays.", "Yes, it is open 9:00 to 18:00.")  # fmt: skip


__all__ = [
    "FRAMEWORKS",
    "PRODUCERS",
    "RETRIEVER_TOOLS",
    "VERSIONS",
    "Captured",
    "Case",
    "Doc",
    "ToolPlan",
    "capture",
    "one_case",
    "planted_cases",
]
