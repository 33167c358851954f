"""Proven citations per sentence: the splitter, the change detector, and ``cite`` on scripted multi-sentence agents."""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from typing import Any

import pytest

from agentfootprint import Agent, define_fact
from agentfootprint._sync import SyncInRunningLoopError
from agentfootprint.explain import Citations, CiteError, cite, cite_sync, save_recording
from agentfootprint.explain._cite import sentence_changed, split_sentences
from agentfootprint.providers import LLMRequest, mock

FACTS = {
    "capital": "The capital of Freedonia is Fredville.",
    "people": "Freedonia has 3.5 million people.",
    "river": "The longest river of Freedonia is the Oxo.",
    "decoy": "Sylvania exports cheese and Fredville hosts a fair.",
    "decoy2": "The Oxo is muddy in spring.",
}
Rule = Callable[[set[str]], str]


def _noisy(seed: int | None, text: str, rate: float) -> bool:
    return int.from_bytes(hashlib.sha256(f"{seed}|{text}".encode()).digest()[:8], "big") / 2**64 < rate


def four_sentences(present: set[str]) -> str:
    """Sentence 1 from 'capital', 2 from 'people', 3 from 'people' and 'river' together, 4 from nothing."""
    return " ".join(
        [
            "Its capital is Fredville." if "capital" in present else "Its capital is unknown to me.",
            "About 3.5 million people live there." if "people" in present else "Nobody counted the people.",
            "Dr. Smith says the Oxo is the longest river." if {"people", "river"} <= present else "No river is known.",
            "It is a lovely place!",
        ]
    )


def build(rule: Rule = four_sentences, noise: float = 0.0, facts: dict[str, str] = FACTS) -> Agent:
    def respond(req: LLMRequest) -> Any:
        present = {k for k, v in facts.items() if v in req.system_prompt}
        answer = rule(present)
        if _noisy(req.seed, req.system_prompt, noise):
            return answer.replace(" is ", " might be ", 1)
        return answer

    builder = Agent.create(provider=mock(respond=respond), model="m", name="cite")
    for key, text in facts.items():
        builder = builder.fact(define_fact(id=key, data=text))
    return builder.build()


async def ran(agent: Agent) -> Agent:
    for seed in range(500, 700):  # the run the user saw: a clean one
        if " might be " not in str((await agent.run("Tell me.", seed=seed)).answer):
            return agent
    raise AssertionError("no clean run")


# -- the splitter and the change detector ----------------------------------------------------------------------


def test_split_keeps_abbreviations_initials_and_decimals_whole() -> None:
    text = 'Dr. Smith paid 3.50 dollars, e.g. for J. R. Tolkien\'s book. Was it "worth it?" Yes! Mr. Ox agreed.'
    assert split_sentences(text) == [
        "Dr. Smith paid 3.50 dollars, e.g. for J. R. Tolkien's book.",
        'Was it "worth it?"',
        "Yes!",
        "Mr. Ox agreed.",
    ]


def test_split_reads_bullets_numbered_items_and_lines() -> None:
    text = "Here is what I found:\n- The bridge opened in 1901.\n- It is long. Very long.\n\n2) Last item\nDone"
    assert split_sentences(text) == [
        "Here is what I found:",
        "The bridge opened in 1901.",
        "It is long.",
        "Very long.",
        "Last item",
        "Done",
    ]


def test_split_drops_pieces_without_words() -> None:
    assert split_sentences("... !!! \n - \n Ok.") == ["Ok."]
    assert split_sentences("") == []


def test_detector_looks_for_the_sentence_words_in_order() -> None:
    assert sentence_changed("Its capital is Fredville.", "Well. its CAPITAL is fredville!") is False
    assert sentence_changed("Its capital is Fredville.", "Its capital is Lyon.") is True
    assert sentence_changed("Its capital is Fredville.", "Fredville is its capital.") is True
    assert sentence_changed("...", "anything") is False


# -- cite on a scripted agent ----------------------------------------------------------------------------------


async def test_each_sentence_gets_its_proven_sources_and_the_unsupported_one_none() -> None:
    agent = await ran(build())
    c = await cite(agent, progress=False)
    assert [s.text for s in c.sentences] == [
        "Its capital is Fredville.",
        "About 3.5 million people live there.",
        "Dr. Smith says the Oxo is the longest river.",
        "It is a lovely place!",
    ]
    assert [s.sources for s in c.sentences] == [["capital"], ["people"], ["people", "river"], []]
    assert [s.status for s in c.sentences] == ["supported", "supported", "supported", "unsupported"]
    assert [s.index for s in c.unsupported] == [3]
    assert c.sources_of(2) == ["people", "river"]
    assert c.sources_considered == 5 and c.arms_compared == 20 and c.honesty_flags == []
    assert c.test == "fisher-exact-one-sided" and c.multiplicity == "holm"
    for s in c.sentences:
        assert c.answer[s.start : s.end] == s.text  # type: ignore[misc]
        assert all(a.verdict == "not-confirmed" for a in s.support if not set(a.ids) <= set(s.sources))
    capital = c.sentences[0].support[0]
    assert capital.ids == ("capital",) and capital.kinds == ("fact",) and capital.verdict == "confirmed"
    assert capital.flips == capital.samples and capital.baseline_flips == 0 and capital.p_value <= 0.05 / 20
    assert c.reruns == c.model_calls + c.model_calls_saved


async def test_str_reads_as_a_citation_list() -> None:
    c = await cite(await ran(build()), progress=False)
    text = str(c)
    lines = text.splitlines()
    assert lines[0] == "Citations (CAUSAL) at call-llm#5: 4 sentence(s), 3 supported, 1 without a proven source"
    assert lines[1].startswith("rule: fisher-exact-one-sided with holm over 20 sentence x source arm(s) at confidence")
    assert lines[3] == "[1] 'Its capital is Fredville.'"
    assert lines[4].startswith("    <- CONFIRMED: removing fact 'capital' changed it in ")
    assert "[4] 'It is a lovely place!'\n    UNSUPPORTED: removing no source changed it" in text
    assert lines[-1] == "honesty flags: none"


async def test_json_round_trip() -> None:
    c = await cite(await ran(build()), progress=False)
    again = Citations.model_validate_json(c.model_dump_json())
    assert again == c and str(again) == str(c)


async def test_claims_cite_only_what_the_user_names() -> None:
    agent = await ran(build())
    c = await cite(agent, claims=["the Oxo is the longest river", "3.5 million people"], progress=False)
    assert [(s.text, s.sources) for s in c.sentences] == [
        ("the Oxo is the longest river", ["people", "river"]),
        ("3.5 million people", ["people"]),
    ]
    assert c.arms_compared == 10
    with pytest.raises(CiteError) as err:
        await cite(agent, claims=["Its capital is Paris"], progress=False)
    assert err.value.code == "ERR_CITE" and "Paris" not in str(err.value)


async def test_a_custom_splitter_and_detector_are_used() -> None:
    agent = await ran(build())

    def halves(answer: str) -> list[str]:
        cut = answer.index(" About")
        return [answer[:cut], answer[cut + 1 :]]

    def number_gone(sentence: str, rerun: str) -> bool:  # only the figures matter
        figures = [w for w in sentence.split() if any(ch.isdigit() for ch in w)]
        return any(f not in rerun for f in figures) if figures else sentence not in rerun

    c = await cite(agent, splitter=halves, sentence_changed=number_gone, progress=False)
    assert [s.sources for s in c.sentences] == [["capital"], ["people"]]


async def test_noisy_model_still_exact_and_never_wrong() -> None:
    agent = await ran(build(noise=0.1))
    c = await cite(agent, progress=False)
    assert [s.sources for s in c.sentences] == [["capital"], ["people"], ["people", "river"], []]
    assert c.noise > 0


async def test_a_redundant_pair_is_cited_as_the_set() -> None:
    def either(present: set[str]) -> str:
        first = "Its capital is Fredville." if "capital" in present else "Unknown capital."
        second = "The Oxo flows there." if {"river", "decoy2"} & present else "No river."
        return f"{first} {second}"

    c = await cite(await ran(build(either)), progress=False)
    assert [s.sources for s in c.sentences] == [["capital"], ["river", "decoy2"]]
    pair = c.sentences[1].support[0]
    assert pair.ids == ("river", "decoy2") and pair.minimal and pair.verdict == "confirmed"


async def test_a_redundant_pair_hidden_behind_another_sentences_source_is_found_by_its_own_search() -> None:
    def hidden(present: set[str]) -> str:
        first = "Its capital is Fredville." if "capital" in present else "Unknown capital."
        second = "Fredville lies on the Oxo." if {"capital", "river"} & present else "No town on a river."
        return f"{first} {second}"

    c = await cite(await ran(build(hidden)), progress=False)
    assert [s.sources for s in c.sentences] == [["capital"], ["capital", "river"]]
    (pair,) = [a for a in c.sentences[1].support if a.verdict == "confirmed"]
    assert pair.ids == ("capital", "river") and pair.minimal
    assert [a.verdict for a in c.sentences[1].support if a.ids == ("capital",)] == ["not-confirmed"]


async def test_sentences_reworded_on_their_own_are_cited_even_when_the_whole_answer_is_not_reproducible() -> None:
    def each(present: set[str], seed: int | None) -> str:
        parts = [
            f"Item {k} has code {k * 11 + 5}." if f"s{k}" in present else f"Item {k} is unknown." for k in range(4)
        ]
        return " ".join(
            p.replace(" has ", " maybe has ", 1) if _noisy(seed, f"{k}", 0.2) else p for k, p in enumerate(parts)
        )

    facts = {f"s{k}": f"Source {k} records code {k * 7 + 3}." for k in range(5)}

    def respond(req: LLMRequest) -> Any:
        return each({k for k, v in facts.items() if v in req.system_prompt}, req.seed)

    builder = Agent.create(provider=mock(respond=respond), model="m", name="each")
    for key, text in facts.items():
        builder = builder.fact(define_fact(id=key, data=text))
    agent = builder.build()
    for seed in range(500, 700):
        if " maybe " not in str((await agent.run("q?", seed=seed)).answer):
            break
    c = await cite(agent, progress=False)
    assert [s.sources for s in c.sentences] == [["s0"], ["s1"], ["s2"], ["s3"]]
    assert "answer-not-reproducible" in c.honesty_flags


async def test_an_unreproducible_answer_supports_nothing() -> None:
    def coin(_present: set[str]) -> str:
        return "It is heads today."

    c = await cite(await ran(build(coin, noise=0.9)), progress=False)  # the user saw the model's rare answer
    assert c.supported == [] and "answer-not-reproducible" in c.honesty_flags
    assert {s.status for s in c.sentences} == {"inconclusive"}


async def test_a_rerun_budget_is_honoured_and_flagged() -> None:
    c = await cite(await ran(build()), max_reruns=5, progress=False)
    assert c.reruns == 5 and c.budget_exhausted and "rerun-budget-exhausted" in c.honesty_flags
    assert c.supported == []


async def test_a_run_result_with_its_agent() -> None:
    agent = build()
    result = await agent.run("Tell me.", seed=3)
    c = await cite(agent, run=result, progress=False)
    assert [s.sources for s in c.sentences] == [["capital"], ["people"], ["people", "river"], []]


def test_sync_twin_runs_outside_a_loop() -> None:
    agent = build()
    import asyncio

    asyncio.run(agent.run("Tell me.", seed=3))
    c = cite_sync(agent, progress=False)
    assert c.sources_of(0) == ["capital"]


async def test_sync_twin_refuses_inside_a_loop() -> None:
    with pytest.raises(SyncInRunningLoopError):
        cite_sync(await ran(build()), progress=False)


# -- hostile input ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("kwargs", "names"),
    [
        ({"claims": "Its capital is Fredville."}, "claims"),
        ({"claims": ["Its capital is Fredville."], "splitter": split_sentences}, "claims or a splitter"),
        ({"splitter": "not callable"}, "splitter"),
        ({"sentence_changed": 3}, "sentence_changed"),
        ({"samples": 0}, "samples"),
        ({"samples": True}, "samples"),
        ({"confidence": 1.0}, "confidence"),
        ({"confidence": True}, "confidence"),
        ({"max_reruns": 0}, "max_reruns"),
        ({"concurrency": 0}, "concurrency"),
        ({"claims": [42]}, "claim #1"),
        ({"claims": ["Its capital is Fredville.", "   ?!"]}, "claim #2"),
        ({"claims": ["x"] * 201}, "at most 200"),
        ({"splitter": lambda a: a}, "sequence of strings"),
        ({"splitter": lambda a: 1 / 0}, "ZeroDivisionError"),
        ({"splitter": lambda a: []}, "no sentence"),
        ({"sentence_changed": lambda s, a: 1 / 0}, "sentence_changed failed"),
    ],
)
async def test_bad_arguments_are_refused_before_any_rerun(kwargs: dict[str, Any], names: str) -> None:
    calls: list[int] = []
    agent = build(lambda p: calls.append(1) or four_sentences(p))
    await agent.run("Tell me.", seed=3)
    before = len(calls)
    with pytest.raises(CiteError) as err:
        await cite(agent, progress=False, **kwargs)
    assert names in str(err.value) and err.value.code == "ERR_CITE"
    assert len(calls) == before


async def test_a_recording_cannot_be_rerun(tmp_path: Any) -> None:
    agent = await ran(build())
    path = tmp_path / "run.json"
    save_recording(agent, path)
    with pytest.raises(CiteError) as err:
        await cite(str(path), progress=False)
    assert "rerun" in str(err.value)


async def test_an_agent_never_run_is_refused() -> None:
    with pytest.raises(CiteError):
        await cite(build(), progress=False)


async def test_an_empty_answer_is_refused() -> None:
    agent = build(lambda p: "   ")
    await agent.run("Tell me.", seed=3)
    with pytest.raises(CiteError) as err:
        await cite(agent, progress=False)
    assert "no answer" in str(err.value)
