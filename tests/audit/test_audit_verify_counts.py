"""Each genesis declares how many records follow it: a cut tail, an extra record or a short segment is a break."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from agentfootprint.audit import ZERO_HASH, export_audit, record_hash, verify_audit
from tests.audit._helpers import FakeAgent, loan_chart, make_events

Records = list[dict[str, Any]]


def rechain(records: Records) -> Records:
    """Renumber and relink the records as a valid hash chain (so only the declared counts can be wrong)."""
    out = copy.deepcopy(records)
    prev = ZERO_HASH
    for seq, record in enumerate(out):
        record["seq"], record["prev_hash"] = seq, prev
        record["hash"] = record_hash(record)
        prev = record["hash"]
    return out


def outcome(bundle: Any) -> tuple[bool, int | None, str | None, int]:
    v = verify_audit(bundle)
    return v.valid, v.broken_at, v.reason, v.count


@pytest.fixture
def records() -> Records:
    result = loan_chart().run_sync({})
    return export_audit(FakeAgent(result.snapshot, make_events(result.run_id, 2)))


def test_the_genesis_counts_commits_and_events(records: Records) -> None:
    payload = records[0]["payload"]
    assert payload["commit_count"] + payload["event_count"] == len(records) - 1
    assert payload["event_count"] == 2
    assert outcome(rechain(records)) == (True, None, None, len(records))


def test_a_cut_tail_is_named(records: Records) -> None:
    cut = rechain(records[:-1])
    n = len(records) - 1
    assert outcome(cut) == (
        False,
        n,
        f"bundle ends after {n - 1} of the {n} records its genesis declares (a cut tail)",
        n,
    )


def test_a_record_beyond_the_declared_count_is_named(records: Records) -> None:
    fewer = copy.deepcopy(records)
    fewer[0]["payload"]["event_count"] -= 1
    n = len(records) - 2  # records the genesis now declares
    assert outcome(rechain(fewer)) == (
        False,
        n + 1,
        f"record {n + 1} is beyond the {n} records its genesis declares",
        n + 1,
    )
    commits = copy.deepcopy(records)
    commits[0]["payload"]["commit_count"] -= 1
    assert outcome(rechain(commits))[:2] == (False, n + 1)


def test_a_short_segment_before_the_next_genesis_is_named(records: Records) -> None:
    first = copy.deepcopy(records)
    first[0]["payload"]["commit_count"] += 1
    second = export_audit(loan_chart().run_sync({}))
    whole = rechain(first + second)
    at = len(first)
    expected = len(first)  # one more than it holds
    assert outcome(whole) == (
        False,
        at,
        f"the segment before record {at} holds {expected - 1} of the {expected} records its genesis declares",
        at,
    )
    assert outcome(rechain(records + second)) == (True, None, None, len(records) + len(second))


@pytest.mark.parametrize("bad", [None, True, -1, "3", 2.0])
def test_a_genesis_without_usable_counts_is_not_count_checked(records: Records, bad: Any) -> None:
    for field in ("commit_count", "event_count"):
        odd = copy.deepcopy(records)
        if bad is None:
            del odd[0]["payload"][field]
        else:
            odd[0]["payload"][field] = bad
        assert outcome(rechain(odd[:-1])) == (True, None, None, len(records) - 1), field


def test_zero_declared_records(records: Records) -> None:
    genesis = copy.deepcopy(records[:1])
    genesis[0]["payload"]["commit_count"] = 0
    genesis[0]["payload"]["event_count"] = 0
    assert outcome(rechain(genesis)) == (True, None, None, 1)
    extra = rechain([*genesis, records[1]])
    assert outcome(extra) == (False, 1, "record 1 is beyond the 0 records its genesis declares", 1)
