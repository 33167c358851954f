"""Result declarations exactly: ``coverage``, ``absent``, ``period``, ``semantic``, ``script`` and their refusals."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from agentfootprint.tools import CoverageDeclarationError, absent, coverage, period, script, semantic


def _refusal(fn: Any, *args: Any, **kwargs: Any) -> tuple[str, str]:
    with pytest.raises(CoverageDeclarationError) as info:
        fn(*args, **kwargs)
    assert info.value.code == "ERR_COVERAGE_DECLARATION"
    return str(info.value), info.value.field


def test_coverage_lists_each_ledger_exactly() -> None:
    out = coverage(
        {"ok": True},
        checked=["  prices  ", {"what": "stock"}],
        not_checked=[{"what": "tax", "why": "no rates"}],
        cannot_cover=({"what": "future", "why": " unknowable "},),
    )
    assert out == {
        "af_coverage": {
            "checked": [{"what": "prices"}, {"what": "stock"}],
            "not_checked": [{"what": "tax", "why": "no rates"}],
            "cannot_cover": [{"what": "future", "why": "unknowable"}],
        },
        "value": {"ok": True},
    }
    assert coverage(1, checked=[{"what": "a", "why": "b"}])["af_coverage"]["checked"] == [{"what": "a", "why": "b"}]
    assert coverage(None, not_checked=[{"what": "x", "why": "y"}]) == {
        "af_coverage": {"checked": [], "not_checked": [{"what": "x", "why": "y"}], "cannot_cover": []},
        "value": None,
    }


def test_coverage_that_says_nothing_is_refused() -> None:
    assert _refusal(coverage, 1) == ("coverage() needs checked, not_checked or cannot_cover", "coverage")
    assert _refusal(coverage, 1, checked=[]) == ("coverage() needs checked, not_checked or cannot_cover", "coverage")


@pytest.mark.parametrize(
    "kwargs, message, field",
    [
        ({"checked": "prices"}, "checked must be a list", "checked"),
        ({"checked": b"prices"}, "checked must be a list", "checked"),
        ({"not_checked": {"what": "x", "why": "y"}}, "not_checked must be a list", "not_checked"),
        ({"checked": ["ok", 5]}, "checked[1] must be a str or {what, why}", "checked"),
        ({"checked": ["ok", "  "]}, "checked[1] must be a non-empty str", "checked[1]"),
        ({"checked": [{"what": ""}]}, "checked[0].what must be a non-empty str", "checked[0].what"),
        ({"checked": [{"what": "a", "why": 3}]}, "checked[0].why must be a non-empty str", "checked[0].why"),
        ({"not_checked": [{"what": "tax"}]}, "not_checked[0].why is required: say why it is a limit", "not_checked"),
        ({"cannot_cover": [{"what": "x"}]}, "cannot_cover[0].why is required: say why it is a limit", "cannot_cover"),
        ({"checked": ["x"] * 51}, "checked holds more than 50 entries", "checked"),
    ],
)
def test_malformed_ledgers_are_refused_by_field(kwargs: dict[str, Any], message: str, field: str) -> None:
    assert _refusal(coverage, 1, **kwargs) == (message, field)


def test_ledgers_hold_up_to_50_entries_of_up_to_500_chars() -> None:
    out = coverage(1, checked=["x" * 600] * 50)
    assert out["af_coverage"]["checked"] == [{"what": "x" * 500}] * 50


def test_absent_is_an_absence_with_its_coverage() -> None:
    assert absent(" invoice 12 ", checked=["ledger"], try_instead=" the archive ") == {
        "af_absent": {
            "what": "invoice 12",
            "checked": [{"what": "ledger"}],
            "not_checked": [],
            "cannot_cover": [],
            "try_instead": "the archive",
        }
    }
    assert absent("x") == {"af_absent": {"what": "x", "checked": [], "not_checked": [], "cannot_cover": []}}
    assert _refusal(absent, "") == ("what must be a non-empty str", "what")
    assert _refusal(absent, "x", try_instead=" ") == ("try_instead must be a non-empty str", "try_instead")


def test_period_names_what_was_asked_and_held() -> None:
    assert period(5, queried=("2026-01-01", "2026-03-31"), held=["2026-01-01", "2026-02-28"], read_at="2026-04-01") == {
        "af_period": {
            "queried": ["2026-01-01", "2026-03-31"],
            "held": ["2026-01-01", "2026-02-28"],
            "read_at": "2026-04-01",
        },
        "value": 5,
    }
    assert period(None, queried=["a", "a"], held=None) == {
        "af_period": {"queried": ["a", "a"], "held": None},
        "value": None,
    }
    long = "2" * 70
    assert period(1, queried=[long, long], held=None, read_at="t" * 70)["af_period"] == {
        "queried": ["2" * 64, "2" * 64],
        "held": None,
        "read_at": "t" * 64,
    }


@pytest.mark.parametrize(
    "queried, held, field",
    [
        ("2026-01-01", None, "queried"),
        ("ab", None, "queried"),
        (["2026-01-01"], None, "queried"),
        (["a", "b", "c"], None, "queried"),
        (["b", "a"], None, "queried"),
        (["a", " "], None, "queried"),
        (["a", 3], None, "queried"),
        (["a", "b"], ["b", "a"], "held"),
        (["a", "b"], b"ab", "held"),
    ],
)
def test_malformed_periods_are_refused(queried: Any, held: Any, field: str) -> None:
    message = f"{field} must be (start, end) ISO strings with start <= end"
    assert _refusal(period, 1, queried=queried, held=held) == (message, field)


def test_period_read_at_must_be_text() -> None:
    assert _refusal(period, 1, queried=["a", "b"], held=None, read_at="") == (
        "read_at must be a non-empty str",
        "read_at",
    )


def test_semantic_lists_each_fact_and_its_fields() -> None:
    out = semantic("v", facts=[{"entity": " screen2 ", "nav": 2, "k" * 70: True}, {"nav": 1, "entity": "s3"}])
    assert out == {
        "af_facts": [
            {"entity": "screen2", "fields": {"nav": 2, "k" * 64: True}},
            {"entity": "s3", "fields": {"nav": 1}},
        ],
        "value": "v",
    }
    many = semantic(0, facts=[{"entity": f"e{i}", "n": i} for i in range(60)])
    assert [row["entity"] for row in many["af_facts"]] == [f"e{i}" for i in range(50)]


def test_malformed_facts_are_refused_by_index() -> None:
    assert _refusal(semantic, 1, facts=[]) == ("semantic() needs at least one fact", "facts")
    assert _refusal(semantic, 1, facts=[{"entity": "a", "n": 1}, "b"]) == (
        "facts[1] must be a mapping with an entity",
        "facts[1]",
    )
    assert _refusal(semantic, 1, facts=[{"n": 1}]) == ("facts[0].entity must be a non-empty str", "facts[0].entity")
    assert _refusal(semantic, 1, facts=[{"entity": "a"}]) == ("facts[0] settles no field", "facts[0]")


def test_script_travels_with_its_value() -> None:
    assert script(42, code="print(6 * 7)") == {"af_script": {"code": "print(6 * 7)", "language": "python"}, "value": 42}
    out = script(1, code="x" * 20_001, language=" " + "l" * 40)
    assert out["af_script"] == {"code": "x" * 20_000, "language": "l" * 32}
    assert _refusal(script, 1, code="  ") == ("script code must be a non-empty str", "code")
    assert _refusal(script, 1, code=7) == ("script code must be a non-empty str", "code")
    assert _refusal(script, 1, code="x", language="") == ("language must be a non-empty str", "language")


@given(st.lists(st.text(min_size=1).filter(str.strip), min_size=1, max_size=50))
def test_any_checked_list_is_kept_stripped_and_capped(items: list[str]) -> None:
    out = coverage(None, checked=items)["af_coverage"]["checked"]
    assert out == [{"what": item.strip()[:500]} for item in items]
