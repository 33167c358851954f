"""Optional Ed25519 signature over the chain head (``sign`` extra: ``cryptography``)."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from agentfootprint.audit._canonical import canonical_bytes
from agentfootprint.audit.errors import AuditSignatureError
from agentfootprint.audit.export import SIGNATURE_TYPE

if TYPE_CHECKING:
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey

__all__ = ["SIGNATURE_FIELDS", "crypto_available", "generate_signing_key", "sign_audit"]

SIGNATURE_FIELDS = frozenset({"type", "alg", "head_seq", "head_hash", "public_key", "signature"})
_HEX = re.compile(r"[0-9a-f]+")
_INSTALL_HINT = "install the sign extra: pip install 'agentfootprint[sign]'"


def crypto_available() -> bool:
    """Whether ``cryptography`` (the ``sign`` extra) is importable."""
    try:
        import cryptography.hazmat.primitives.asymmetric.ed25519  # noqa: F401
    except ImportError:
        return False
    return True


def _require_crypto() -> None:
    if not crypto_available():
        raise AuditSignatureError(f"Ed25519 signing needs cryptography: {_INSTALL_HINT}", code="ERR_AUDIT_NO_CRYPTO")


def generate_signing_key() -> tuple[bytes, bytes]:
    """A fresh Ed25519 key pair as raw bytes: ``(private_key, public_key)``, 32 bytes each."""
    _require_crypto()
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

    key = Ed25519PrivateKey.generate()
    private = key.private_bytes(
        serialization.Encoding.Raw, serialization.PrivateFormat.Raw, serialization.NoEncryption()
    )
    public = key.public_key().public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)
    return private, public


def _key_bytes(key: Any) -> bytes:
    if isinstance(key, str):
        text = key.strip()
        if len(text) == 64 and _HEX.fullmatch(text.lower()):
            return bytes.fromhex(text)
        return text.encode("utf-8")
    if isinstance(key, bytes | bytearray | memoryview):
        return bytes(key)
    raise AuditSignatureError("a key must be raw bytes, 64 hex characters or PEM", code="ERR_AUDIT_KEY")


def load_private_key(key: Any) -> Ed25519PrivateKey:
    """An Ed25519 private key from raw 32 bytes, hex, or unencrypted PEM."""
    _require_crypto()
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

    data = _key_bytes(key)
    try:
        if len(data) == 32:
            return Ed25519PrivateKey.from_private_bytes(data)
        loaded = serialization.load_pem_private_key(data, password=None)
    except (ValueError, TypeError) as exc:
        raise AuditSignatureError("not a valid Ed25519 private key", code="ERR_AUDIT_KEY") from exc
    if not isinstance(loaded, Ed25519PrivateKey):
        raise AuditSignatureError("not an Ed25519 private key", code="ERR_AUDIT_KEY")
    return loaded


def load_public_key(key: Any) -> Ed25519PublicKey:
    """An Ed25519 public key from raw 32 bytes, hex, or PEM."""
    _require_crypto()
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

    data = _key_bytes(key)
    try:
        if len(data) == 32:
            return Ed25519PublicKey.from_public_bytes(data)
        loaded = serialization.load_pem_public_key(data)
    except (ValueError, TypeError) as exc:
        raise AuditSignatureError("not a valid Ed25519 public key", code="ERR_AUDIT_KEY") from exc
    if not isinstance(loaded, Ed25519PublicKey):
        raise AuditSignatureError("not an Ed25519 public key", code="ERR_AUDIT_KEY")
    return loaded


def _raw_public(key: Ed25519PublicKey) -> bytes:
    from cryptography.hazmat.primitives import serialization

    return key.public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)


def signature_message(signature_record: Mapping[str, Any]) -> bytes:
    """The signed bytes: the RFC 8785 form of the signature record without its ``signature`` field."""
    return canonical_bytes({k: v for k, v in signature_record.items() if k != "signature"})


def sign_audit(records: Sequence[Mapping[str, Any]], private_key_bytes: Any, *, previous: Any = None) -> dict[str, Any]:
    """A signature record over the chain head; append it as the bundle's last line. Refuses an invalid chain."""
    from agentfootprint.audit.verify import verify_audit

    _require_crypto()
    chain = [r for r in records if not (isinstance(r, Mapping) and r.get("type") == SIGNATURE_TYPE)]
    result = verify_audit(chain, previous=previous)
    if not result.valid:
        raise AuditSignatureError(
            f"refusing to sign an invalid chain: record {result.broken_at}: {result.reason}", code="ERR_AUDIT_INVALID"
        )
    key = load_private_key(private_key_bytes)
    head = chain[-1]
    record: dict[str, Any] = {
        "type": SIGNATURE_TYPE,
        "alg": "Ed25519",
        "head_seq": head["seq"],
        "head_hash": head["hash"],
        "public_key": _raw_public(key.public_key()).hex(),
    }
    record["signature"] = key.sign(signature_message(record)).hex()
    return record


def _hex_of_len(value: Any, length: int) -> bool:
    return isinstance(value, str) and len(value) == length and _HEX.fullmatch(value) is not None


def check_signature(signature: Any, head: Mapping[str, Any], public_key: Any = None) -> tuple[str | None, bool]:
    """``(reason or None, verified_against_public_key)`` for a signature record and the chain's last record."""
    if not isinstance(signature, Mapping):
        return "signature record is not a JSON object", False
    if set(signature) != SIGNATURE_FIELDS:
        return "signature record does not have exactly the signature fields", False
    seq = signature.get("head_seq")
    if (
        signature.get("type") != SIGNATURE_TYPE
        or signature.get("alg") != "Ed25519"
        or not isinstance(seq, int)
        or isinstance(seq, bool)
        or not _hex_of_len(signature.get("head_hash"), 64)
        or not _hex_of_len(signature.get("public_key"), 64)
        or not _hex_of_len(signature.get("signature"), 128)
    ):
        return "signature record has a field of the wrong type or format", False
    if seq != head.get("seq") or signature["head_hash"] != head.get("hash"):
        return "signature covers a different chain head (records truncated, appended or re-hashed)", False
    if not crypto_available():
        if public_key is not None:
            return f"cannot check the signature: {_INSTALL_HINT}", False
        return None, False
    from cryptography.exceptions import InvalidSignature

    embedded = bytes.fromhex(signature["public_key"])
    try:
        key = load_public_key(embedded if public_key is None else public_key)
    except AuditSignatureError:
        return "public key is not a valid Ed25519 key", False
    if public_key is not None and _raw_public(key) != embedded:
        return "bundle was signed by a different key", False
    try:
        key.verify(bytes.fromhex(signature["signature"]), signature_message(signature))
    except InvalidSignature:
        return "signature does not verify", False
    return None, public_key is not None
