"""Signing keys: every accepted form (raw, hex, PEM) and every refusal, with its code and message."""

from __future__ import annotations

from typing import Any

import pytest

from agentfootprint.audit import AuditSignatureError, crypto_available, export_audit, sign_audit, verify_audit
from agentfootprint.audit import sign as sign_module
from agentfootprint.audit.sign import load_private_key, load_public_key
from tests.audit._helpers import loan_chart

pytestmark = pytest.mark.skipif(not crypto_available(), reason="cryptography (the 'sign' extra) is not installed")


def refusal(fn: Any, *args: Any) -> tuple[str, str]:
    with pytest.raises(AuditSignatureError) as info:
        fn(*args)
    return info.value.code, str(info.value)


def test_key_forms() -> None:
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric.ec import SECP256R1, generate_private_key

    private, public = sign_module.generate_signing_key()
    assert len(private) == len(public) == 32
    for form in (private, bytearray(private), memoryview(private), private.hex(), f"  {private.hex().upper()}\n"):
        assert sign_module._raw_public(load_private_key(form).public_key()) == public
    for form in (public, public.hex()):
        assert sign_module._raw_public(load_public_key(form)) == public

    ec = generate_private_key(SECP256R1())
    ec_pem = ec.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    )
    ec_pub = ec.public_key().public_bytes(serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo)
    assert refusal(load_private_key, ec_pem) == ("ERR_AUDIT_KEY", "not an Ed25519 private key")
    assert refusal(load_public_key, ec_pub.decode()) == ("ERR_AUDIT_KEY", "not an Ed25519 public key")
    assert refusal(load_private_key, b"short") == ("ERR_AUDIT_KEY", "not a valid Ed25519 private key")
    assert refusal(load_public_key, "not hex and not pem") == ("ERR_AUDIT_KEY", "not a valid Ed25519 public key")
    assert refusal(load_private_key, 42) == ("ERR_AUDIT_KEY", "a key must be raw bytes, 64 hex characters or PEM")
    assert refusal(load_public_key, "g" * 64) == ("ERR_AUDIT_KEY", "not a valid Ed25519 public key")


def test_without_cryptography(monkeypatch: pytest.MonkeyPatch) -> None:
    records = export_audit(loan_chart().run_sync({}))
    private, public = sign_module.generate_signing_key()
    signature = sign_audit(records, private)
    monkeypatch.setattr(sign_module, "crypto_available", lambda: False)
    hint = "install the sign extra: pip install 'agentfootprint[sign]'"
    assert refusal(sign_audit, records, private) == (
        "ERR_AUDIT_NO_CRYPTO",
        f"Ed25519 signing needs cryptography: {hint}",
    )
    checked = verify_audit([*records, signature], public_key=public)
    assert (checked.valid, checked.reason) == (False, f"cannot check the signature: {hint}")
    unchecked = verify_audit([*records, signature])
    assert (unchecked.valid, unchecked.signed) == (True, False)
