"""Signature records exactly: the signed bytes, re-signing a signed bundle, and every refusal's reason."""

from __future__ import annotations

import sys
from typing import Any

import pytest

from agentfootprint.audit import SIGNATURE_TYPE, crypto_available, export_audit, generate_signing_key, sign_audit
from agentfootprint.audit._canonical import canonical_bytes
from agentfootprint.audit.sign import SIGNATURE_FIELDS, check_signature, signature_message
from tests.audit._helpers import loan_chart

pytestmark = pytest.mark.skipif(not crypto_available(), reason="cryptography (the 'sign' extra) is not installed")


@pytest.fixture
def records() -> list[dict[str, Any]]:
    return export_audit(loan_chart().run_sync({}))


@pytest.fixture
def keys() -> tuple[bytes, bytes]:
    return generate_signing_key()


def test_the_signed_bytes_are_the_canonical_record_without_its_signature(
    records: list[dict[str, Any]], keys: tuple[bytes, bytes]
) -> None:
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

    private, public = keys
    sig = sign_audit(records, private)
    assert set(sig) == SIGNATURE_FIELDS
    body = {k: v for k, v in sig.items() if k != "signature"}
    assert signature_message(sig) == canonical_bytes(body)
    assert signature_message(sig).startswith(b'{"alg":"Ed25519","head_hash":"')
    Ed25519PublicKey.from_public_bytes(public).verify(bytes.fromhex(sig["signature"]), canonical_bytes(body))


def test_signing_a_signed_bundle_signs_its_chain_head(records: list[dict[str, Any]], keys: tuple[bytes, bytes]) -> None:
    private, public = keys
    first = sign_audit(records, private)
    again = sign_audit([*records, first], private)
    assert (again["head_seq"], again["head_hash"]) == (records[-1]["seq"], records[-1]["hash"])
    assert check_signature(again, records[-1], public) == (None, True)


def _head(records: list[dict[str, Any]]) -> dict[str, Any]:
    return records[-1]


def test_every_refusal_names_its_reason(records: list[dict[str, Any]], keys: tuple[bytes, bytes]) -> None:
    private, public = keys
    sig = sign_audit(records, private)
    head = _head(records)
    assert check_signature(sig, head) == (None, False)
    assert check_signature(sig, head, public) == (None, True)
    assert check_signature("sig", head) == ("signature record is not a JSON object", False)
    assert check_signature({**sig, "x": 1}, head) == (
        "signature record does not have exactly the signature fields",
        False,
    )
    wrong = "signature record has a field of the wrong type or format"
    for field, value in [
        ("type", "other"),
        ("alg", "RS256"),
        ("head_seq", True),
        ("head_seq", "3"),
        ("head_hash", "A" * 64),
        ("public_key", sig["public_key"][:62]),
        ("signature", sig["signature"] + "00"),
    ]:
        assert check_signature({**sig, field: value}, head) == (wrong, False), field
    moved = "signature covers a different chain head (records truncated, appended or re-hashed)"
    assert check_signature({**sig, "head_seq": head["seq"] + 1}, head) == (moved, False)
    assert check_signature({**sig, "head_hash": "0" * 64}, head) == (moved, False)
    assert check_signature(sig, head, "not a key") == ("public key is not a valid Ed25519 key", False)
    assert check_signature(sig, head, generate_signing_key()[1]) == ("bundle was signed by a different key", False)
    assert check_signature({**sig, "signature": "0" * 128}, head) == ("signature does not verify", False)
    assert check_signature({**sig, "public_key": "0" * 64}, head) in {
        ("signature does not verify", False),
        ("public key is not a valid Ed25519 key", False),
    }


def test_crypto_available_says_false_when_cryptography_cannot_be_imported(monkeypatch: pytest.MonkeyPatch) -> None:
    assert crypto_available() is True
    monkeypatch.setitem(sys.modules, "cryptography.hazmat.primitives.asymmetric.ed25519", None)
    assert crypto_available() is False


def test_the_signature_type_is_the_audit_signature() -> None:
    assert SIGNATURE_TYPE == "agentfootprint.audit.signature"
