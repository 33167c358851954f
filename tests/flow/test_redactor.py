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
