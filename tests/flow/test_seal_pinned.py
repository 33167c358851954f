"""The checkpoint seal, pinned: what it covers (NaN vs ±inf, integers past 2^53, lone surrogates), what it refuses
(not plain JSON, a missing, malformed or wrong seal; each with its exact text and code), and a key never shown."""

from __future__ import annotations

import hashlib
import hmac
import math
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from types import MappingProxyType
from typing import Any

import pytest
import rfc8785
from hypothesis import given, settings
from hypothesis import strategies as st

from agentfootprint.flow import InvalidCheckpointError
from agentfootprint.flow.seal import SEAL, CheckpointSealError, SealKey, check_seal, seal, seal_key

RAW = b"correct horse battery staple"
KEY = SealKey(RAW)
TAG = "\u0000agentfootprint"


def hmac_of(body: Any, raw: bytes = RAW) -> str:
    """The seal computed here, independently: HMAC-SHA256 over the RFC 8785 form."""
    return hmac.new(raw, rfc8785.dumps(body), hashlib.sha256).hexdigest()


def refusal(value: Any, door: str = "resume") -> CheckpointSealError:
    with pytest.raises(CheckpointSealError) as info:
        check_seal(value, KEY, door)
    return info.value


@contextmanager
def recursion_limit(limit: int) -> Iterator[None]:
    old = sys.getrecursionlimit()
    sys.setrecursionlimit(max(old, limit))
    try:
        yield
    finally:
        sys.setrecursionlimit(old)


def nested(levels: int) -> Any:
    value: Any = 0
    for _ in range(levels):
        value = [value]
    return value


# -- what a seal is --------------------------------------------------------------------------------------------------


def test_a_seal_is_the_hmac_of_the_rfc8785_form_without_the_top_level_seal() -> None:
    checkpoint = {"run_id": "r1", "flow": {"seal": "nested stays covered", "n": [1, 2.5, None, True]}}
    sealed = seal(checkpoint, KEY)
    assert sealed == {**checkpoint, SEAL: hmac_of(checkpoint)}
    assert SEAL not in checkpoint, "the caller's checkpoint is not changed"
    assert seal(sealed, KEY) == sealed, "sealing again replaces the old seal with the same one"
    assert seal({**checkpoint, SEAL: "f" * 64}, KEY) == sealed
    assert check_seal(sealed, KEY, "resume") is None
    edited = {**sealed, "flow": {**sealed["flow"], "seal": "changed"}}
    assert refusal(edited).field == SEAL, "a nested 'seal' key is part of the body"


def test_without_a_key_nothing_is_sealed_or_checked() -> None:
    checkpoint = {"run_id": "r1"}
    assert seal(checkpoint, None) is checkpoint
    for anything in (None, [], "x", {"seal": "not hex"}, {1: object()}):
        assert check_seal(anything, None, "resume") is None


def test_plain_json_values_are_sealed_as_themselves() -> None:
    body = {"s": "é ✓ \u0000", "i": 2**53 - 1, "j": -(2**53 - 1), "f": 0.1, "t": True, "n": None, "l": [1, "a"]}
    assert KEY.digest(body) == hmac_of(body)
    assert KEY.digest({"l": (1, "a")}) == KEY.digest({"l": [1, "a"]}), "a tuple is a JSON array"
    assert KEY.digest({"m": MappingProxyType({"a": 1})}) == KEY.digest({"m": {"a": 1}}), "any mapping is an object"
    assert KEY.digest({"b": True}) != KEY.digest({"b": 1}) and KEY.digest({"b": False}) != KEY.digest({"b": 0})


# -- what JSON can carry and JCS cannot: tagged, never rounded or dropped -----------------------------------------


def test_nan_and_the_infinities_are_tagged_and_each_has_its_own_seal() -> None:
    for value, text in ((math.nan, "nan"), (math.inf, "inf"), (-math.inf, "-inf")):
        assert KEY.digest({"x": value}) == hmac_of({"x": {TAG: "float", "v": text}})
    seals = {KEY.digest({"x": v}) for v in (math.nan, math.inf, -math.inf, 1e308, -1e308, 0.0)}
    assert len(seals) == 6
    sealed = seal({"x": math.nan}, KEY)
    check_seal(sealed, KEY, "resume")  # NaN != NaN, yet the checkpoint still verifies
    assert refusal({**sealed, "x": math.inf}).field == SEAL
    assert refusal({**seal({"x": math.inf}, KEY), "x": -math.inf}).field == SEAL


def test_integers_past_2_53_are_tagged_exactly_and_never_rounded() -> None:
    for value in (2**53, -(2**53), 2**64 + 1, -(10**40)):
        assert KEY.digest({"x": value}) == hmac_of({"x": {TAG: "int", "v": str(value)}})
    for value in (2**53 - 1, -(2**53 - 1), 0):
        assert KEY.digest({"x": value}) == hmac_of({"x": value}), "inside the safe range an integer is itself"
    big = seal({"x": 2**53 + 1}, KEY)
    check_seal(big, KEY, "resume")
    for near in (2**53, 2**53 + 2, float(2**53 + 1), str(2**53 + 1)):
        assert refusal({**big, "x": near}).field == SEAL


def test_lone_surrogates_are_tagged_by_their_bytes() -> None:
    assert KEY.digest({"x": "a\ud800"}) == hmac_of({"x": {TAG: "str", "v": "61eda080"}})
    assert KEY.digest({"x": "\udfff"}) == hmac_of({"x": {TAG: "str", "v": "edbfbf"}})
    sealed = seal({"x": "\ud800"}, KEY)
    check_seal(sealed, KEY, "resume")
    for other in ("\ud801", "\ufffd", "", "eda080"):
        assert refusal({**sealed, "x": other}).field == SEAL


LEAF = (
    st.none()
    | st.booleans()
    | st.integers()
    | st.sampled_from([2**53 - 1, 2**53, 2**53 + 1, -(2**53), -(2**53) - 1, math.nan, math.inf, -math.inf])
    | st.text(alphabet=st.characters(codec=None), max_size=4)
    | st.sampled_from(["\ud800", "\udbff\udc00", "\ud800\udc00", "\U00010000"])
)


def _same_json(a: Any, b: Any) -> bool:
    """Equal as the JSON values they would be written as (NaN is NaN; True is not 1)."""
    return (type(a), repr(a)) == (type(b), repr(b))


@settings(max_examples=300, deadline=None)
@given(a=LEAF, b=LEAF)
def test_two_leaves_share_a_seal_exactly_when_they_are_the_same_json_value(a: Any, b: Any) -> None:
    assert (KEY.digest({"x": a}) == KEY.digest({"x": b})) is _same_json(a, b)
    check_seal(seal({"x": [a, {"y": b}]}, KEY), KEY, "resume")


# -- refusals: exact texts and codes, nothing run, no value quoted ----------------------------------------------


def test_each_refusal_names_its_door_the_seal_field_and_what_was_wrong() -> None:
    good = seal({"run_id": "SENTINEL-VALUE", "n": 1}, KEY)
    cases = [
        (["not", "a", "dict"], "missing (the checkpoint is not a dict)"),
        ("SENTINEL-VALUE", "missing (the checkpoint is not a dict)"),
        ({"run_id": "r1"}, "missing or malformed"),
        ({**good, SEAL: None}, "missing or malformed"),
        ({**good, SEAL: 7}, "missing or malformed"),
        ({**good, SEAL: good[SEAL].upper()}, "missing or malformed"),
        ({**good, SEAL: good[SEAL][:63]}, "missing or malformed"),
        ({**good, SEAL: good[SEAL] + "0"}, "missing or malformed"),
        ({**good, SEAL: "g" + good[SEAL][1:]}, "missing or malformed"),
        ({**good, SEAL: "0" * 64}, "wrong: the checkpoint was changed, or sealed with another key"),
        ({**good, "n": 2}, "wrong: the checkpoint was changed, or sealed with another key"),
        (seal(good, SealKey(b"another key")), "wrong: the checkpoint was changed, or sealed with another key"),
    ]
    for value, problem in cases:
        for door in ("resume", "continue_from"):
            err = refusal(value, door)
            assert str(err) == f"{door}: the checkpoint's seal is {problem}; nothing ran"
            assert (err.code, err.field, err.door) == ("ERR_CHECKPOINT_SEAL", "seal", door)
            assert isinstance(err, InvalidCheckpointError) and "SENTINEL" not in str(err)


NOT_PLAIN_JSON = [
    ({"x": {1, 2}}, "not JSON"),
    ({"x": b"bytes"}, "not JSON"),
    ({"x": object()}, "not JSON"),
    ({"x": {1: "integer key"}}, "non-string key"),
    ({"x": {("a",): "tuple key"}}, "non-string key"),
    ({"x": 1 + 2j}, "not JSON"),
    ({"x": nested(5000)}, None),
]


@pytest.mark.parametrize(
    ("body", "why"), NOT_PLAIN_JSON, ids=["set", "bytes", "object", "int key", "tuple key", "complex", "deep"]
)
def test_a_checkpoint_that_is_not_plain_json_is_refused_as_not_verifiable(
    body: dict[str, Any], why: str | None
) -> None:
    err = refusal({**body, SEAL: "0" * 64})
    assert str(err) == "resume: the checkpoint's seal is not verifiable (the checkpoint is not plain JSON); nothing ran"
    assert (err.code, err.field) == ("ERR_CHECKPOINT_SEAL", "seal")
    if why is None:  # the recursion limit or the 1000-level cut, whichever the interpreter reaches first
        with pytest.raises((RecursionError, ValueError)):
            seal(body, KEY)
        return
    with pytest.raises(ValueError) as raised:  # the sealing side says which rule, never the value
        seal(body, KEY)
    assert str(raised.value) == why


def test_nesting_is_cut_at_1000_levels_even_where_recursion_would_allow_more() -> None:
    with recursion_limit(20_000):
        sealed = seal({"x": nested(999)}, KEY)  # "x" is level 1: its innermost value is level 1000
        check_seal(sealed, KEY, "resume")
        with pytest.raises(ValueError, match=r"^too deep$"):
            KEY.digest({"x": nested(1000)})
        assert "not plain JSON" in str(refusal({"x": nested(1000), SEAL: "0" * 64}))


# -- the key ------------------------------------------------------------------------------------------------------


def test_a_key_is_never_shown() -> None:
    key = seal_key("SENTINEL-KEY-9c1e")
    assert key is not None
    for shown in (repr(key), str(key), f"{key}", f"{key!r}", repr([key]), repr({"k": key})):
        assert "SENTINEL" not in shown and "9c1e" not in shown
    assert repr(key) == str(key) == "SealKey(<hidden>)"
    assert not hasattr(key, "__dict__"), "no attribute dict for a debugger or vars() to print"
    err = refusal({"x": 1, SEAL: "0" * 64})
    assert "SENTINEL" not in repr(err)


def test_seal_key_takes_a_str_as_utf8_or_bytes_and_refuses_anything_else() -> None:
    assert seal_key(None) is None
    for given_key, raw in (("ключ", "ключ".encode()), (b"\xff\x00", b"\xff\x00"), (bytearray(b"k"), b"k")):
        key = seal_key(given_key)
        assert isinstance(key, SealKey) and key.digest({"a": 1}) == hmac_of({"a": 1}, raw)
    for bad in ("", b"", bytearray(), 7, ["k"]):
        with pytest.raises(TypeError, match=r"^checkpoint_key must be a non-empty str or bytes$"):
            seal_key(bad)  # type: ignore[arg-type]
