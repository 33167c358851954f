"""Seeded mutation of pause and conversation checkpoints: every edit is refused by a typed error naming the field
(never quoting a value) before any model call or tool, or the run completes; none crashes mid-run. Edits of what a
checkpoint must be consistent about are all refused; with a key, every edit is.

``AF_MUTATIONS`` / ``AF_MUTATION_SEED`` set each campaign's size and seed (defaults: 1,000 and 15). The figures:
``pytest tests/agent/test_checkpoint_mutations.py -s`` prints one line per campaign."""

from __future__ import annotations

import os

from ._mutations import campaign

COUNT = int(os.environ.get("AF_MUTATIONS", "1000"))
SEED = int(os.environ.get("AF_MUTATION_SEED", "15"))
KEY = "mutation-test-key"


async def test_mutated_checkpoints_are_refused_or_run_never_crash_and_never_quote() -> None:
    tally = await campaign(COUNT, SEED)
    print("\nwithout a key:", tally.line(), dict(tally.fields.most_common(8)))
    assert tally.trials >= COUNT >= 1000 or "AF_MUTATIONS" in os.environ
    assert tally.crashed == [], tally.crashed[:10]
    assert tally.quoted == [], tally.quoted[:10]
    assert tally.accepted_named == [], tally.accepted_named[:10]
    assert tally.refused > tally.trials // 2  # most random edits break some consistency


async def test_with_a_key_no_mutation_is_accepted() -> None:
    tally = await campaign(COUNT, SEED + 1, key=KEY)
    print("\nwith a key:", tally.line(), dict(tally.fields))
    assert tally.trials >= COUNT >= 1000 or "AF_MUTATIONS" in os.environ
    assert tally.crashed == [] and tally.quoted == []
    assert tally.accepted == 0 and tally.fields["seal"] == tally.refused
