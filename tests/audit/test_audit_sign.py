"""Ed25519 signature of the chain head (``sign`` extra)."""

from __future__ import annotations

from typing import Any

import pytest

from agentfootprint.audit import (
    SIGNATURE_TYPE,
    AuditSignatureError,
    crypto_available,
    export_audit,
    generate_signing_key,
    record_hash,
    sign_audit,
    to_jsonl,
    verify_audit,
    verify_file,
)
from tests.audit._helpers import loan_chart

pytestmark = pytest.mark.skipif(not crypto_available(), reason="cryptography (the 'sign' extra) is not installed")


@pytest.fixture
def records() -> list[dict[str, Any]]:
    return export_audit(loan_chart().run_sync({}))


@pytest.fixture
def keys() -> tuple[bytes, bytes]:
    return generate_signing_key()


def test_sign_and_verify(records: list[dict[str, Any]], keys: tuple[bytes, bytes]) -> None:
    private, public = keys
    sig = sign_audit(records, private)
    assert sig["type"] == SIGNATURE_TYPE and sig["alg"] == "Ed25519"
    assert (sig["head_seq"], sig["head_hash"]) == (records[-1]["seq"], records[-1]["hash"])
    assert sig["public_key"] == public.hex()
    bundle = [*records, sig]
    v = verify_audit(bundle, public_key=public)
    assert (v.valid, v.signed, v.count) == (True, True, len(records))
    assert verify_audit(to_jsonl(bundle), public_key=public.hex()).valid
    assert verify_audit(records, public_key=public, signature=sig).valid
    unsigned_check = verify_audit(bundle)
    assert unsigned_check.valid and not unsigned_check.signed


def test_truncation_at_the_end_is_caught_by_the_signature(
    records: list[dict[str, Any]], keys: tuple[bytes, bytes]
) -> None:
    private, public = keys
    sig = sign_audit(records, private)
    v = verify_audit([*records[:-1], sig], public_key=public)
    assert (v.valid, v.broken_at) == (False, len(records) - 1)
    assert "head" in (v.reason or "")


def test_rehashed_last_record_is_caught_by_the_signature(
    records: list[dict[str, Any]], keys: tuple[bytes, bytes]
) -> None:
    private, public = keys
    sig = sign_audit(records, private)
    records[-1]["payload"]["stage_id"] = "forged"
    records[-1]["hash"] = record_hash(records[-1])
    v = verify_audit([*records, sig], public_key=public)
    assert (v.valid, v.broken_at) == (False, len(records))


def test_wrong_key_missing_signature_and_forged_signature(
    records: list[dict[str, Any]], keys: tuple[bytes, bytes]
) -> None:
    private, _ = keys
    _, other_public = generate_signing_key()
    sig = sign_audit(records, private)
    wrong = verify_audit([*records, sig], public_key=other_public)
    assert not wrong.valid and "different key" in (wrong.reason or "")
    missing = verify_audit(records, public_key=other_public)
    assert (missing.valid, missing.broken_at) == (False, len(records))
    forged = dict(sig, signature="0" * 128)
    assert not verify_audit([*records, forged]).valid
    extra = dict(sig, note="x")
    assert not verify_audit([*records, extra]).valid
    assert not verify_audit([*records, sig], public_key="not a key").valid


def test_pem_keys_work(records: list[dict[str, Any]]) -> None:
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

    key = Ed25519PrivateKey.generate()
    pem = key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption())
    pub_pem = key.public_key().public_bytes(serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo)
    sig = sign_audit(records, pem)
    assert verify_audit([*records, sig], public_key=pub_pem).signed


def test_refuses_to_sign_an_invalid_chain_or_a_bad_key(
    records: list[dict[str, Any]], keys: tuple[bytes, bytes]
) -> None:
    records[1]["payload"]["idx"] = 9
    with pytest.raises(AuditSignatureError) as info:
        sign_audit(records, keys[0])
    assert info.value.code == "ERR_AUDIT_INVALID"
    with pytest.raises(AuditSignatureError):
        sign_audit(export_audit(loan_chart().run_sync({})), b"short")


def test_signed_file_through_the_cli_hook(
    records: list[dict[str, Any]], keys: tuple[bytes, bytes], tmp_path: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    private, public = keys
    path = tmp_path / "signed.jsonl"
    path.write_text(to_jsonl([*records, sign_audit(records, private)]), encoding="utf-8")
    assert verify_file(path, public_key=public) == 0
    assert "signature verified" in capsys.readouterr().out
