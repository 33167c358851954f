"""Tamper-evident audit bundles (RFC 8785 + SHA-256 hash chain), offline verification, signing, OTel spans."""

from agentfootprint.audit._canonical import ZERO_HASH, canonical_bytes, record_hash
from agentfootprint.audit._payload import PayloadMode
from agentfootprint.audit.errors import AuditError, AuditExportError, AuditSignatureError
from agentfootprint.audit.export import (
    AUDIT_FORMAT,
    COMMIT_TYPE,
    GENESIS_TYPE,
    SIGNATURE_TYPE,
    AuditHead,
    audit_head,
    export_audit,
    to_jsonl,
    write_jsonl,
)
from agentfootprint.audit.otel import OtelUnavailableError, instrument, otel_available
from agentfootprint.audit.sign import crypto_available, generate_signing_key, sign_audit
from agentfootprint.audit.verify import AuditVerification, verify_audit, verify_file

__all__ = [
    "AUDIT_FORMAT",
    "COMMIT_TYPE",
    "GENESIS_TYPE",
    "SIGNATURE_TYPE",
    "ZERO_HASH",
    "AuditError",
    "AuditExportError",
    "AuditHead",
    "AuditSignatureError",
    "AuditVerification",
    "OtelUnavailableError",
    "PayloadMode",
    "audit_head",
    "canonical_bytes",
    "crypto_available",
    "export_audit",
    "generate_signing_key",
    "instrument",
    "otel_available",
    "record_hash",
    "sign_audit",
    "to_jsonl",
    "verify_audit",
    "verify_file",
    "write_jsonl",
]
