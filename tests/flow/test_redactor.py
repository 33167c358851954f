"""The redactor itself: which secrets it learns (from keys, fields at any depth, JSON text), and what it scrubs."""

from __future__ import annotations

import pytest
from pydantic import BaseModel

from agentfootprint.flow.redaction import REDACTED, RedactionPolicy, Redactor


def test_policy_union_adds_names_and_refuses_a_bad_pattern() -> None:
    a = RedactionPolicy.of(keys=["k"], patterns=["x+"])
    b = RedactionPolicy.of(keys=["j"], patterns=["x+", "y"])
    assert a.union(None) is a
    merged = a.union(b)
    assert (merged.keys, merged.patterns) == (frozenset({"k", "j"}), ("x+", "y"))
    assert RedactionPolicy().empty and not a.empty and not RedactionPolicy.of(patterns=["z"]).empty
    import re

    with pytest.raises(re.error):
        RedactionPolicy.of(patterns=["(unclosed"])


def test_observe_learns_values_under_redacted_keys_and_fields() -> None:
    red = Redactor(RedactionPolicy.of(keys=["token", "pin"]))
    assert red.active and red.key_redacted("token") and not red.key_redacted("other")
    red.observe("token", {"a": "abcd", "b": ["wxyz", 123456, True, None, 1.5, "no"]})
    red.observe("other", {"nested": [{"pin": 98765}], "plain": "text"})
    red.observe("other", '{"pin": "4321"}')
    red.observe("other", "[not json but mentions pin")
    red.observe("other", "no keys mentioned {")
    assert red._secrets == {"abcd", "wxyz", "123456", "98765", "4321"}
    assert red.scrub_text("x abcd y wxyzwxyz 4321") == f"x {REDACTED} y {REDACTED}{REDACTED} {REDACTED}"


def test_observe_without_keys_learns_nothing() -> None:
    red = Redactor(RedactionPolicy.of(patterns=["sk-[a-z]+"]))
    red.observe("token", "abcdef")
    assert red._secrets == set()
    assert red.redact("key sk-abc and sk-def") == f"key {REDACTED} and {REDACTED}"
    assert red.counts == {"pattern:sk-[a-z]+": 1}


def test_redact_walks_values_and_counts() -> None:
    class Card(BaseModel):
        pin: str
        note: str

    red = Redactor(RedactionPolicy.of(keys=["pin"]))
    red.observe("pin", 424242)
    value = {"pin": "1", "items": ("a", 424242, 424242.0, True), "card": Card(pin="9", note="x 424242")}
    assert red.redact(value) == {
        "pin": REDACTED,
        "items": ["a", REDACTED, 424242.0, True],
        "card": {"pin": REDACTED, "note": f"x {REDACTED}"},
    }
    assert red.redact("anything", key="pin") == REDACTED
    assert red.counts == {"key:pin": 3, "value": 2}
    assert red.report() == {"keys": ["pin"], "patterns": [], "counts": {"key:pin": 3, "value": 2}}


def test_depth_limits() -> None:
    red = Redactor(RedactionPolicy.of(keys=["s"]))
    deep: object = "leaf"
    for _ in range(70):
        deep = [deep]
    assert "[TOO DEEP]" in repr(red.redact(deep))
    red.observe("s", deep)  # learning stops at the limit instead of recursing further
    assert red._secrets == set()
    shallow: object = "seen"
    for _ in range(60):
        shallow = [shallow]
    red.observe("s", shallow)
    assert red._secrets == {"seen"}


def test_short_values_are_not_learned_and_long_text_is_cut() -> None:
    red = Redactor(RedactionPolicy.of(keys=["s"], patterns=["q"]))
    red.observe("s", ["abc", 12, "abcd"])
    assert red._secrets == {"abcd"}
    text = "q" * 1_000_005
    assert red.scrub_text(text) == REDACTED * 1_000_000


def _nest(value: object, depth: int, as_dict: bool = False) -> object:
    for _ in range(depth):
        value = {"k": value} if as_dict else [value]
    return value


@pytest.mark.parametrize("as_dict", [False, True])
def test_redact_walks_64_levels_and_marks_what_lies_deeper(as_dict: bool) -> None:
    red = Redactor(RedactionPolicy.of(keys=["ssn"]))
    assert red.redact(_nest("v", 64, as_dict)) == _nest("v", 64, as_dict)
    assert red.redact(_nest("v", 65, as_dict)) == _nest("[TOO DEEP]", 65, as_dict)


def test_a_model_is_redacted_as_its_json_dump_counting_its_depth() -> None:
    class Card(BaseModel):
        ssn: str
        digits: tuple[int, int]

    red = Redactor(RedactionPolicy.of(keys=["ssn"]))
    out = red.redact(Card(ssn="123-45", digits=(1, 2)))
    assert out == {"ssn": REDACTED, "digits": [1, 2]} and type(out["digits"]) is list
    card = Card(ssn="x", digits=(3, 4))
    assert red.redact(_nest(card, 61)) == _nest({"ssn": REDACTED, "digits": [3, 4]}, 61)
    assert red.redact(_nest(card, 62)) == _nest({"ssn": REDACTED, "digits": ["[TOO DEEP]", "[TOO DEEP]"]}, 62)


@pytest.mark.parametrize(("depth", "learnt"), [(64, True), (65, False)])
def test_secrets_under_a_redacted_key_are_learnt_64_levels_deep(depth: int, learnt: bool) -> None:
    red = Redactor(RedactionPolicy.of(keys=["ssn"]))
    red.observe("ssn", _nest("secret-1", depth))
    assert red.redact("it is secret-1") == ("it is [REDACTED]" if learnt else "it is secret-1")


@pytest.mark.parametrize("as_dict", [False, True])
@pytest.mark.parametrize(("depth", "learnt"), [(64, True), (65, False)])
def test_redacted_fields_inside_other_values_are_found_64_levels_deep(depth: int, learnt: bool, as_dict: bool) -> None:
    red = Redactor(RedactionPolicy.of(keys=["ssn"]))
    red.observe("note", _nest({"ssn": "secret-2"}, depth, as_dict))
    assert red.redact("secret-2!") == ("[REDACTED]!" if learnt else "secret-2!")


@pytest.mark.parametrize(("depth", "learnt"), [(63, True), (64, False)])
def test_json_text_counts_as_one_level(depth: int, learnt: bool) -> None:
    import json

    red = Redactor(RedactionPolicy.of(keys=["ssn"]))
    red.observe("note", _nest(json.dumps({"ssn": "secret-3"}), depth))
    assert red.redact("secret-3") == (REDACTED if learnt else "secret-3")


def test_json_text_up_to_the_pattern_limit_is_read_for_fields() -> None:
    head = '{"ssn": "secret-4", "pad": "'
    text = head + "x" * (1_000_000 - len(head) - 2) + '"}'
    assert len(text) == 1_000_000
    red = Redactor(RedactionPolicy.of(keys=["ssn"]))
    red.observe("note", text)
    assert red.redact("secret-4") == REDACTED
    longer = Redactor(RedactionPolicy.of(keys=["ssn"]))
    longer.observe("note", text[:-2] + 'x"}')
    assert longer.redact("secret-4") == "secret-4"
