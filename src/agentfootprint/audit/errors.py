"""Typed refusals of the audit exporter and signer; messages never quote record values."""

from __future__ import annotations

from agentfootprint.errors import AgentFootprintError

__all__ = ["AuditError", "AuditExportError", "AuditSignatureError"]


class AuditError(AgentFootprintError):
    """Root of audit errors."""

    code = "ERR_AUDIT"


class AuditExportError(AuditError, ValueError):
    """``export_audit`` was given something it cannot export (wrong object, mode or segment head)."""

    code = "ERR_AUDIT_EXPORT"


class AuditSignatureError(AuditError, ValueError):
    """Signing refused: invalid chain, bad key, or the ``sign`` extra (``cryptography``) is not installed."""

    code = "ERR_AUDIT_SIGNATURE"
