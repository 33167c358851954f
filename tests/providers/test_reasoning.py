"""Reasoning content: ``<think>`` spans split whole or streamed, the recorded form, and secret fragments scrubbed."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from agentfootprint.providers import LLMResponse, ReasoningBlock, Usage
from agentfootprint.providers._reasoning import ThinkSplitter, split_think
from agentfootprint.providers._wire import MIN_FRAGMENT, clean_text, scrub_secrets


@pytest.mark.parametrize(
    ("text", "answer", "thought"),
    [
        ("<think>check the date</think>\n\nNo refund.", "No refund.", "check the date"),
        ("  \n<think>a\nb</think>No.", "No.", "a\nb"),
        ("<think>cut off mid-thought", "", "cut off mid-thought"),
        ("<think></think>Yes.", "Yes.", None),
        ("No refund. <think>late</think>", "No refund. <think>late</think>", None),
        ("Plain answer.", "Plain answer.", None),
        ("<thin", "<thin", None),
        ("", "", None),
    ],
)
def test_split_think(text: str, answer: str, thought: str | None) -> None:
    content, blocks = split_think(text)
    assert content == answer
    assert blocks == ([ReasoningBlock(text=thought, source="think_tag")] if thought else [])


texts = st.text(alphabet=st.sampled_from(list("ab <>/thinkT\n")), max_size=40)


@given(
    thought=texts.filter(lambda t: "</think>" not in t),
    answer=texts,
    lead=st.sampled_from(["", " ", "\n\n"]),
    cuts=st.lists(st.integers(1, 9), max_size=20),
)
def test_streaming_split_equals_whole_split_whatever_the_chunking(
    thought: str, answer: str, lead: str, cuts: list[int]
) -> None:
    text = f"{lead}<think>{thought}</think>{answer}"
    splitter = ThinkSplitter()
    pieces: list[tuple[str, str]] = []
    position = 0
    for cut in cuts:
        pieces += splitter.feed(text[position : position + cut])
        position += cut
    pieces += splitter.feed(text[position:]) + splitter.flush()
    whole_answer, whole_blocks = split_think(text)
    assert "".join(p for k, p in pieces if k == "text") == whole_answer
    assert splitter.blocks() == whole_blocks
    assert "".join(p for k, p in pieces if k == "reasoning").strip() == thought.strip()


@given(text=st.text(max_size=60))
def test_text_without_a_leading_span_is_untouched(text: str) -> None:
    if text.lstrip().startswith("<think>"):
        return
    assert split_think(text) == (text, [])


def test_the_recorded_form() -> None:
    response = LLMResponse(
        content="No.",
        reasoning=[
            ReasoningBlock(text="step one", source="openai.reasoning"),
            ReasoningBlock(kind="redacted", signature="b3BhcXVl", source="anthropic.redacted_thinking"),
            ReasoningBlock(kind="summary", text="step two", source="gemini.thought"),
        ],
        usage=Usage(input_tokens=3, output_tokens=9, reasoning_tokens=6),
    )
    assert response.reasoning_text == "step one\n\nstep two"
    assert LLMResponse.model_validate_json(response.model_dump_json()) == response
    assert (response.usage + response.usage).reasoning_tokens == 12
    with pytest.raises(ValueError):
        ReasoningBlock(kind="thinking", source="made-up")  # type: ignore[arg-type]


KEY = "sk-SENTINEL-9f8e7d6c5b4a"


@pytest.mark.parametrize(
    "echo",
    [
        "sk-SENT****4a",
        "key ...6c5b4a was rejected",
        f"you sent {KEY}",
        "Incorrect API key provided: sk-SENTI*************5b4a",
        f"{KEY[:6]} {KEY[6:12]} {KEY[12:]}",
    ],
)
def test_fragments_of_a_key_are_scrubbed(echo: str) -> None:
    cleaned = clean_text(echo, (KEY,))
    assert [KEY[i : i + MIN_FRAGMENT] for i in range(len(KEY) - 5) if KEY[i : i + MIN_FRAGMENT] in cleaned] == []
    assert "[redacted]" in cleaned


@given(
    key=st.text(alphabet="abcdefghijklmnopqrstuvwxyz0123456789-_", min_size=6, max_size=40), text=st.text(max_size=80)
)
def test_no_six_character_fragment_of_a_key_survives(key: str, text: str) -> None:
    hostile = text + key[: len(key) // 2] + "****" + key[len(key) // 2 :] + text
    cleaned = scrub_secrets(hostile, (key,))
    for i in range(len(key) - MIN_FRAGMENT + 1):
        piece = key[i : i + MIN_FRAGMENT]
        if piece not in "[redacted]":
            assert piece not in cleaned


@given(text=st.text(alphabet="XYZ ", max_size=80))
def test_text_sharing_nothing_with_the_key_is_unchanged(text: str) -> None:
    assert scrub_secrets(text, (KEY,)) == text


def test_short_secrets_match_only_whole() -> None:
    assert scrub_secrets("pin 1234 and 123", ("1234",)) == "pin [redacted] and 123"
