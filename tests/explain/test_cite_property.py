"""Properties of citations: the splitter returns what was joined, the detector never sees a sentence change in an
answer that still says it, and ``cite`` names exactly the planted sources of generated multi-sentence answers."""

from __future__ import annotations

from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from agentfootprint import Agent, define_fact
from agentfootprint.explain import cite_sync
from agentfootprint.explain._cite import _spans, sentence_changed, split_sentences
from agentfootprint.providers import LLMRequest, mock

WORDS = st.sampled_from(["bridge", "opened", "Dr.", "Smith", "3.5", "e.g.", "tons", "harbor", "(approx.", "x)", "it's"])
LAST = st.sampled_from(["today", "there", "1901", "river", '"Anchor"'])
SENTENCE = st.builds(
    lambda head, middle, last, end: " ".join([head, *middle, last]) + end,
    st.sampled_from(["The", "It", "Mr. Ox", "Locals", "Did"]),
    st.lists(WORDS, max_size=6),
    LAST,
    st.sampled_from([".", "!", "?", "..."]),
)


@given(st.lists(SENTENCE, min_size=1, max_size=6), st.sampled_from([" ", "  ", "\n", "\n- ", "\n\n"]))
def test_split_returns_the_sentences_that_were_joined(sentences: list[str], glue: str) -> None:
    assert split_sentences(glue.join(sentences)) == sentences


@given(st.text(max_size=300))
def test_spans_are_ordered_disjoint_slices_with_a_word(text: str) -> None:
    last = 0
    for a, b in _spans(text):
        assert last <= a < b <= len(text)
        assert text[a:b] == text[a:b].strip() and any(ch.isalnum() or ch == "_" for ch in text[a:b])
        last = b


@given(st.text(max_size=120), st.text(max_size=60), st.text(max_size=60))
def test_an_answer_that_still_says_the_sentence_is_no_change(sentence: str, before: str, after: str) -> None:
    assert sentence_changed(sentence, sentence) is False
    assert sentence_changed(sentence, f"{before} {sentence} {after}") is False


PLAN = st.integers(3, 6).flatmap(
    lambda n: st.tuples(
        st.just(n),
        st.lists(
            st.tuples(st.sets(st.integers(0, n - 1), min_size=1, max_size=2), st.sampled_from(["all", "any"])),
            min_size=2,
            max_size=4,
        ),
        st.booleans(),
    )
)


def agent_for(n: int, plan: list[tuple[set[int], str]], own: bool) -> Agent:
    texts = {f"s{i}": f"Source {i} records code {i * 7 + 3}." for i in range(n)}

    def respond(req: LLMRequest) -> Any:
        present = {int(k[1:]) for k, v in texts.items() if v in req.system_prompt}
        parts = []
        for j, (needs, rule) in enumerate(plan):
            held = needs <= present if rule == "all" else bool(needs & present)
            parts.append(f"Item {j} has code {j * 11 + 5}." if held else f"Item {j} is unknown.")
        return " ".join(parts + (["Have a nice day!"] if own else []))

    builder = Agent.create(provider=mock(respond=respond), model="m", name="prop")
    for key, text in texts.items():
        builder = builder.fact(define_fact(id=key, data=text))
    return builder.build()


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(PLAN)
def test_cite_names_exactly_the_planted_sources(case: tuple[int, list[tuple[set[int], str]], bool]) -> None:
    import asyncio

    n, plan, own = case
    agent = agent_for(n, plan, own)
    asyncio.run(agent.run("q?", seed=1))
    c = cite_sync(agent, progress=False)
    expected = [sorted(f"s{i}" for i in needs) for needs, _ in plan] + ([[]] if own else [])
    assert [sorted(s.sources) for s in c.sentences] == expected
    assert c.sentences[-1].status == ("unsupported" if own else "supported")
