"""``verify_file`` exactly: what it prints where, and that it never reads more than the bundle limit."""

from __future__ import annotations

import io
from pathlib import Path
from typing import Any

import pytest

from agentfootprint.audit import export_audit, to_jsonl
from agentfootprint.audit import verify as verify_module
from tests.audit._helpers import loan_chart


def test_a_file_that_is_not_utf8_is_named_on_stderr(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    binary = tmp_path / "binary.jsonl"
    binary.write_bytes(b"\xff\xfe\x00garbage")
    assert verify_module.verify_file(binary) == 2
    captured = capsys.readouterr()
    assert (captured.out, captured.err) == ("", f"cannot read {binary}: not UTF-8 text\n")


def test_a_missing_file_names_the_os_reason(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    missing = tmp_path / "missing.jsonl"
    out = io.StringIO()
    assert verify_module.verify_file(missing, out=out) == 2
    assert capsys.readouterr().err == f"cannot read {missing}: No such file or directory\n"
    assert out.getvalue() == ""


def test_an_os_error_without_a_reason_names_its_type(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    def failing_open(*args: Any, **kwargs: Any) -> Any:
        raise PermissionError()

    monkeypatch.setattr(verify_module, "open", failing_open, raising=False)
    assert verify_module.verify_file(tmp_path / "x.jsonl") == 2
    assert capsys.readouterr().err == f"cannot read {tmp_path / 'x.jsonl'}: PermissionError\n"


def test_at_most_one_byte_past_the_limit_is_read(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    asked: list[Any] = []
    real_open = open

    class Spy:
        def __init__(self, handle: Any) -> None:
            self.handle = handle

        def __enter__(self) -> Spy:
            return self

        def __exit__(self, *exc: object) -> None:
            self.handle.close()

        def read(self, size: Any = -1) -> bytes:
            asked.append(size)
            data: bytes = self.handle.read(size)
            return data

    monkeypatch.setattr(verify_module, "open", lambda p, mode: Spy(real_open(p, mode)), raising=False)
    path = tmp_path / "a.jsonl"
    path.write_text(to_jsonl(export_audit(loan_chart().run_sync({}))), encoding="utf-8")
    out = io.StringIO()
    assert verify_module.verify_file(path, out=out) == 0
    assert asked == [verify_module.MAX_BUNDLE_CHARS + 1]


def test_a_file_past_the_limit_is_too_large(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(verify_module, "MAX_BUNDLE_CHARS", 10)
    path = tmp_path / "big.jsonl"
    path.write_text("x" * 11, encoding="utf-8")
    assert verify_module.verify_file(path) == 1
    assert capsys.readouterr().out == "invalid: record 0: bundle is too large to verify\n"
