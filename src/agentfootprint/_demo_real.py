"""``agentfootprint demo --real``: a culprit proved on a small local model (Gemma-3-270M by default), honestly."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.text import Text

from agentfootprint.agent import Agent
from agentfootprint.context import define_fact
from agentfootprint.providers import BaseProvider, LLMRequest, LLMResponse, Provider

ANSWER_PATTERN = r"^(APPROVED|DECLINED): [^\n]{1,160}$"
DOOR_PATTERN = r"^DOOR CODE: [0-9]{4}$"
DOOR_QUESTION = "What is the door code for the office?"
CURRENT_CODE, OLD_CODE = "5802", "4417"
OLD_MEMO = f"Archived memo from 2019: the door code for the office was {OLD_CODE}."
TEMPERATURE = 0.0
SEED = 0
STORY_BY_MODEL = {"gemma3-270m": "door-code"}
"""The story each model is shown with (the refunds story otherwise): Gemma-3-270M approves the refund whatever its
context says, but it does repeat a code from an archived memo, so that is where it shows a culprit proved."""


class CallTicker(BaseProvider):
    """Prints one line per model call (what the model did, how long it took), so a slow CPU shows progress; at
    temperature 0 a request already answered (seed aside: greedy decoding ignores it) is answered from memory."""

    def __init__(self, inner: Provider, console: Console, *, greedy: bool = False) -> None:
        self.inner = inner
        self.name = inner.name
        self.console = console
        self.greedy = greedy
        self.calls = 0
        self.reused = 0
        self._memo: dict[str, LLMResponse] = {}

    async def complete(self, request: LLMRequest) -> LLMResponse:
        """Forward the call (or reuse the same request's reply at temperature 0) and print a one-line summary."""
        key = request.model_dump_json(exclude={"seed"})
        if self.greedy and key in self._memo:
            self.reused += 1
            return self._memo[key]
        started = time.monotonic()
        response = await self.inner.complete(request)
        self.calls += 1
        if self.greedy:
            self._memo[key] = response
        did = ", ".join(f"{c.name}({c.args})" for c in response.tool_calls) or repr(response.content[:70])
        self.console.print(
            f"    model call {self.calls:>2}  {time.monotonic() - started:4.1f}s  → {did}",
            markup=False,
            highlight=False,
            soft_wrap=True,
        )
        return response


def door_agent(provider: Provider) -> Agent:
    """An office assistant whose notes hold the current door code and, last, an archived memo with the old one."""
    builder = Agent.create(provider=provider, model="", max_iterations=2, name="office")
    builder = builder.system("You are an office assistant. Answer visitors' questions from the notes.")
    builder = builder.fact(define_fact(id="wifi", data="The office wifi password is tulip-garden."))
    builder = builder.fact(define_fact(id="door-code", data=f"The door code for the office is {CURRENT_CODE}."))
    builder = builder.fact(define_fact(id="parking", data="Visitors park on level 2."))
    return builder.fact(define_fact(id="old-memo", data=OLD_MEMO, description="Planted archived memo")).build()


def old_code_flipped(a: str, b: str) -> bool:
    return (OLD_CODE in a) != (OLD_CODE in b)


def door_closing_line(answer: str, report: Any, memo: str = "old-memo") -> str:
    """What the door-code run proved and what it did not, in plain words."""
    suspect = report.suspect(memo)
    tried = f"{suspect.flips}/{suspect.samples}" if suspect is not None else "0/0"
    if OLD_CODE not in answer:
        return (
            f"Proved: the model gave a code other than the archived {OLD_CODE}; the memo '{memo}' reached it (see the "
            "chain) and did not mislead it. Not proved: anything about the memo's effect on other models or settings."
        )
    others = [s for s in report.confirmed if s.id != memo]
    if suspect is not None and suspect.verdict == "confirmed" and not others:
        return (
            f"Proved: removing '{memo}' turned the archived code {OLD_CODE} into another in {tried} seeded reruns, "
            "and no other source was confirmed, so the archived memo caused the wrong answer on this model. Not "
            "proved: that it would at another temperature; at temperature 0 the reruns of one request are one model "
            "call."
        )
    names = ", ".join(f"{s.kind} '{s.id}' ({s.flips}/{s.samples})" for s in others)
    return (
        f"Not proved: that the memo '{memo}' alone caused the wrong answer ({tried} reruns without it flipped)."
        + (f" Removing {names} flipped it too: the answer depends on that context." if others else "")
        + " Proved: exactly what reached the model (the chain above) and which removals change its answer."
    )


@dataclass(frozen=True)
class Story:
    """One demo story: its agent, question, answer format, outcome test and closing line."""

    key: str
    title: str
    question: str
    pattern: str
    outcome: str
    right: str
    build: Callable[[Provider], Agent]
    changed: Callable[[str, str], bool]
    closing: Callable[[str, Any], str]
    tool_rounds: int | None


def story_for(model: str) -> Story:
    """The story ``demo --real`` runs on ``model``."""
    from agentfootprint._flagship import QUESTION, approved_flipped, refunds_agent

    if STORY_BY_MODEL.get(model) == "door-code":
        return Story(
            "door-code",
            "the office assistant and an archived memo",
            DOOR_QUESTION,
            DOOR_PATTERN,
            f"did the archived code {OLD_CODE} come or go?",
            f"(The current code is {CURRENT_CODE}; {OLD_CODE} is from an archived 2019 memo.)",
            door_agent,
            old_code_flipped,
            door_closing_line,
            None,
        )
    return Story(
        "refunds",
        "the refunds agent",
        QUESTION,
        ANSWER_PATTERN,
        "did APPROVED/DECLINED flip?",
        "(Policy says 30 days and the order is 47 days old: the right answer is DECLINED.)",
        refunds_agent,
        approved_flipped,
        closing_line,
        1,
    )


def closing_line(answer: str, report: Any, fact: str = "vip-override-fact") -> str:
    """What the run proved and what it did not, in plain words."""
    suspect = report.suspect(fact)
    tried = f"{suspect.flips}/{suspect.samples}" if suspect is not None else "0/0"
    approved = answer.startswith("APPROVED")
    if not approved:
        return (
            f"Proved: the model answered DECLINED, as the 30-day policy says; the planted fact '{fact}' reached it "
            "(see the chain) and did not mislead it. Not proved: anything about the planted fact's effect on other "
            "models, seeds or temperatures."
        )
    if suspect is not None and suspect.verdict == "confirmed":
        return (
            f"Proved: removing '{fact}' turned APPROVED into DECLINED in {tried} seeded reruns, so the planted fact "
            "caused the wrong answer on this model. Not proved: that it would at another temperature or seed."
        )
    others = [s for s in report.confirmed if s.id != fact]
    also = ""
    if others:
        names = ", ".join(f"{s.kind} '{s.id}' ({s.flips}/{s.samples})" for s in others)
        also = f" Removing {names} did flip it: the answer depends on that context, which does not make it the culprit."
    return (
        f"Not proved: that the planted fact '{fact}' caused the wrong answer. Removing it changed nothing ({tried} "
        "reruns flipped): this model approves the 47-day-old order by itself, against the 30-day policy." + also + " "
        "Proved: exactly what reached the model (the chain above) and which removals change its answer. The offline "
        "demo (agentfootprint demo) shows the case where the context is the culprit."
    )


def run_real_demo(
    console: Console | None = None,
    *,
    model: str = "gemma3-270m",
    samples: int = 2,
    max_suspects: int = 3,
    max_tokens: int = 96,
    report_path: str = "report.html",
    save_path: Path | None = None,
) -> dict[str, Any]:
    """Run the model's story on a local model (temperature 0, seed 0), backtrack, localize, and say what it proved."""
    from agentfootprint.explain import backtrack, localize_sync, report_html, save_recording
    from agentfootprint.providers.local import local_llm, lookup_model

    console = console or Console()
    entry = lookup_model(model)
    story = story_for(entry.key)

    def say(text: str) -> None:
        console.print(text, markup=False, highlight=False, soft_wrap=True)

    console.rule(Text(f"agentfootprint demo --real: {story.title} on a small local model"))
    say(
        f"Model: {entry.title} on llama.cpp (prebuilt xllamacpp wheel, this process, CPU), "
        f"temperature {TEMPERATURE:g}, seed {SEED}."
    )
    if story.key == "refunds":
        say(
            "Replies are constrained JSON: a tool call whose orderId must match ^[A-Z]-[0-9]{4}$, or an answer that "
            "starts with APPROVED: or DECLINED:. The outcome test: did APPROVED/DECLINED flip?"
        )
    else:
        say(
            f"Replies are constrained JSON whose answer must match {story.pattern}. The outcome test: "
            f"{story.outcome} At temperature 0 a request already answered is answered from memory."
        )
    started = time.monotonic()
    say("\n[1/4] loading the model")
    with local_llm(
        model=entry.key,
        mode="in-process",
        temperature=TEMPERATURE,
        seed=SEED,
        max_tokens=max_tokens,
        max_tool_rounds=story.tool_rounds,
        answer_pattern=story.pattern,
    ) as provider:
        say(f"    ready in {time.monotonic() - started:.1f}s")
        ticker = CallTicker(provider, console, greedy=story.key != "refunds")
        agent = story.build(ticker)
        say("[2/4] running the agent")
        result = agent.run_sync(story.question, seed=SEED)
        answer = str(result.answer or "")
        say(f"\nUser:  {story.question}\nAgent: {answer}")
        say(story.right)
        console.rule(Text("[3/4] Backtrack: every piece of context that reached the final model call"))
        bt = backtrack(agent)
        say(str(bt))
        console.rule(Text("[4/4] Localize: rank suspects, rerun without them on seeded reruns"))
        report = localize_sync(
            agent,
            samples=samples,
            max_suspects=max_suspects,
            concurrency=1,  # the CPU runs one model call at a time
            outcome_changed=story.changed,
            progress=False,
        )
        say(str(report))
    Path(report_path).write_text(report_html(bt, report, snapshot=agent.last_snapshot()))
    if save_path is not None:
        save_recording(agent, save_path)
    elapsed = time.monotonic() - started
    console.rule(Text("What this run proved"))
    closing = story.closing(answer, report)
    say(closing)
    saved = f"; recording saved to {save_path}" if save_path is not None else ""
    reused = f" ({ticker.reused} repeated requests answered from memory)" if ticker.reused else ""
    say(f"\n{ticker.calls} model calls{reused} in {elapsed:.0f}s (model loading included). Wrote {report_path}{saved}.")
    return {
        "story": story.key,
        "answer": answer,
        "backtrack": str(bt),
        "localization": report,
        "confirmed": [s.id for s in report.confirmed],
        "closing": closing,
        "calls": ticker.calls,
        "reused": ticker.reused,
        "seconds": elapsed,
    }
