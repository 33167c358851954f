"""``open_store(url)``: a URL picks the family; a bad URL is refused with a code naming the problem, never the URL."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from agentfootprint.stores import StoreURLError, open_store
from agentfootprint.stores.family import parse_store_url

SECRET = "hunter2-s3cret"


def test_each_scheme_names_its_backend(tmp_path: Path) -> None:
    assert open_store("memory://").kind == "memory"
    sqlite = open_store(f"sqlite:///{tmp_path / 'a.db'}")
    assert sqlite.kind == "sqlite" and parse_store_url("sqlite:///rel/a.db") == ("sqlite", "rel/a.db")
    assert parse_store_url("sqlite:////abs/a.db") == ("sqlite", "/abs/a.db")
    for url in (f"postgresql://u:{SECRET}@db/x", f"postgres://u:{SECRET}@db/x"):
        family = open_store(url)
        assert family.kind == "postgresql" and SECRET not in repr(family)
    sqlite.ledger.spend("r1")
    assert open_store(f"sqlite:///{tmp_path / 'a.db'}").ledger.is_spent("r1")


@pytest.mark.parametrize(
    ("url", "problem"),
    [
        (None, "not_a_string"),
        (b"memory://", "not_a_string"),
        ("", "no_scheme"),
        (f"/tmp/{SECRET}.db", "no_scheme"),
        (f"mysql://root:{SECRET}@db/x", "unknown_scheme"),
        (f"memory://{SECRET}", "unexpected_path"),
        ("sqlite://", "missing_path"),
        ("sqlite:///", "missing_path"),
        (f"sqlite://{SECRET}@host/x.db", "missing_path"),
    ],
)
def test_a_bad_url_is_refused_by_problem_never_quoted(url: object, problem: str) -> None:
    with pytest.raises(StoreURLError) as refused:
        open_store(url)  # type: ignore[arg-type]
    assert refused.value.problem == problem and refused.value.code == f"ERR_STORE_URL_{problem.upper()}"
    assert SECRET not in str(refused.value)


@given(st.text(max_size=60))
def test_any_text_is_a_family_or_a_typed_refusal_that_never_echoes_it(url: str) -> None:
    try:
        kind, _ = parse_store_url(url)
    except StoreURLError as err:
        assert len(url) < 4 or url not in str(err)
    else:
        assert kind in ("memory", "sqlite", "postgresql")
