"""``agentfootprint demo --real``: the flagship refunds agent on a small local model, explained, and judged honestly."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.text import Text

from agentfootprint.providers import BaseProvider, LLMRequest, LLMResponse, Provider

ANSWER_PATTERN = r"^(APPROVED|DECLINED): [^\n]{1,160}$"
TEMPERATURE = 0.0
SEED = 0


class CallTicker(BaseProvider):
    """Prints one line per model call (what the model did, how long it took), so a slow CPU shows progress."""

    def __init__(self, inner: Provider, console: Console) -> None:
        self.inner = inner
        self.name = inner.name
        self.console = console
        self.calls = 0

    async def complete(self, request: LLMRequest) -> LLMResponse:
        """Forward the call and print a one-line summary of the reply."""
        started = time.monotonic()
        response = await self.inner.complete(request)
        self.calls += 1
        did = ", ".join(f"{c.name}({c.args})" for c in response.tool_calls) or repr(response.content[:70])
        self.console.print(
            f"    model call {self.calls:>2}  {time.monotonic() - started:4.1f}s  → {did}",
            markup=False,
            highlight=False,
            soft_wrap=True,
        )
        return response


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
    model: str = "smollm2-135m",
    samples: int = 2,
    max_suspects: int = 3,
    max_tokens: int = 96,
    report_path: str = "report.html",
    save_path: Path | None = None,
) -> dict[str, Any]:
    """Run the refunds agent on a local model (temperature 0, seed 0), backtrack, localize, and say what it proved."""
    from agentfootprint._flagship import QUESTION, approved_flipped, refunds_agent
    from agentfootprint.explain import backtrack, localize_sync, report_html, save_recording
    from agentfootprint.providers.local import local_llm, lookup_model

    console = console or Console()
    entry = lookup_model(model)

    def say(text: str) -> None:
        console.print(text, markup=False, highlight=False, soft_wrap=True)

    console.rule(Text("agentfootprint demo --real: the refunds agent on a small local model"))
    say(
        f"Model: {entry.title} on llama.cpp (prebuilt xllamacpp wheel, this process, CPU), "
        f"temperature {TEMPERATURE:g}, seed {SEED}."
    )
    say(
        "Replies are constrained JSON: a tool call whose orderId must match ^[A-Z]-[0-9]{4}$, or an answer that "
        "starts with APPROVED: or DECLINED:. The outcome test: did APPROVED/DECLINED flip?"
    )
    started = time.monotonic()
    say("\n[1/4] loading the model")
    with local_llm(
        model=entry.key,
        mode="in-process",
        temperature=TEMPERATURE,
        seed=SEED,
        max_tokens=max_tokens,
        max_tool_rounds=1,
        answer_pattern=ANSWER_PATTERN,
    ) as provider:
        say(f"    ready in {time.monotonic() - started:.1f}s")
        ticker = CallTicker(provider, console)
        agent = refunds_agent(ticker)
        say("[2/4] running the agent")
        result = agent.run_sync(QUESTION, seed=SEED)
        answer = str(result.answer or "")
        say(f"\nUser:  {QUESTION}\nAgent: {answer}")
        say("(Policy says 30 days and the order is 47 days old: the right answer is DECLINED.)")
        console.rule(Text("[3/4] Backtrack: every piece of context that reached the final model call"))
        bt = backtrack(agent)
        say(str(bt))
        console.rule(Text(f"[4/4] Localize: rank suspects, rerun without each ({samples} seeded reruns)"))
        report = localize_sync(
            agent,
            samples=samples,
            max_suspects=max_suspects,
            concurrency=1,  # the CPU runs one model call at a time
            outcome_changed=approved_flipped,
            progress=False,
        )
        say(str(report))
    Path(report_path).write_text(report_html(bt, report, snapshot=agent.last_snapshot()))
    if save_path is not None:
        save_recording(agent, save_path)
    elapsed = time.monotonic() - started
    console.rule(Text("What this run proved"))
    closing = closing_line(answer, report)
    say(closing)
    saved = f"; recording saved to {save_path}" if save_path is not None else ""
    say(f"\n{ticker.calls} model calls in {elapsed:.0f}s (model loading included). Wrote {report_path}{saved}.")
    return {
        "answer": answer,
        "backtrack": str(bt),
        "localization": report,
        "confirmed": [s.id for s in report.confirmed],
        "closing": closing,
        "calls": ticker.calls,
        "seconds": elapsed,
    }
