"""``verify_audit``: offline check of a hash-chained bundle; never raises and never quotes record values."""

from __future__ import annotations

import json
import os
import re
import sys
from collections.abc import Mapping, Sequence
from typing import Any, TextIO

from pydantic import BaseModel, ConfigDict
from rfc8785 import IntegerDomainError

from agentfootprint.audit._canonical import RECORD_FIELDS, ZERO_HASH, as_doubles, record_hash
from agentfootprint.audit.export import GENESIS_TYPE, SIGNATURE_TYPE, AuditHead
from agentfootprint.audit.sign import check_signature

__all__ = ["MAX_BUNDLE_CHARS", "MAX_RECORD_DEPTH", "AuditVerification", "verify_audit", "verify_file"]

MAX_BUNDLE_CHARS = 256 * 1024 * 1024
MAX_RECORD_DEPTH = 200
MAX_RECORD_NODES = 5_000_000
_HASH = re.compile(r"[0-9a-f]{64}")
_SAFE_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]{0,39}$")
_FIELD_ORDER = ("seq", "timestamp", "type", "payload", "meta", "prev_hash", "hash")


class AuditVerification(BaseModel):
    """Outcome: ``broken_at`` is the index of the first bad record (0 when unreadable), ``reason`` says why."""

    model_config = ConfigDict(frozen=True)

    valid: bool
    broken_at: int | None = None
    reason: str | None = None
    count: int = 0
    signed: bool = False


class _Bad:
    """A line that could not be read as a JSON object (kept in place so indices stay right)."""

    __slots__ = ("reason",)

    def __init__(self, reason: str) -> None:
        self.reason = reason


class _DuplicateKeyError(ValueError):
    pass


class _ConstantError(ValueError):
    pass


def _no_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in pairs:
        if key in out:
            raise _DuplicateKeyError
        out[key] = value
    return out


def _reject_constant(_name: str) -> Any:
    raise _ConstantError


def _parse(text: str) -> Any:
    return json.loads(text, parse_constant=_reject_constant, object_pairs_hook=_no_duplicates)


def _parse_line(line: str) -> Any:
    try:
        return _parse(line)
    except _DuplicateKeyError:
        return _Bad("a JSON object repeats a key")
    except _ConstantError:
        return _Bad("line holds NaN or Infinity, which are not JSON")
    except RecursionError:
        return _Bad("line is nested too deeply")
    except ValueError:
        return _Bad("line is not valid JSON")


def _load(bundle: Any) -> list[Any] | str:
    """The records as a list (bad lines as ``_Bad``), or the reason the whole bundle is unreadable."""
    if isinstance(bundle, bytes | bytearray):
        if len(bundle) > MAX_BUNDLE_CHARS:
            return "bundle is too large to verify"
        try:
            bundle = bytes(bundle).decode("utf-8")
        except UnicodeDecodeError:
            return "bundle is not UTF-8 text"
    if isinstance(bundle, str):
        if len(bundle) > MAX_BUNDLE_CHARS:
            return "bundle is too large to verify"
        stripped = bundle.strip()
        if stripped.startswith("["):
            try:
                whole = _parse(stripped)
            except (ValueError, RecursionError):
                whole = None
            if isinstance(whole, list):
                return whole
        return [_parse_line(line) for line in bundle.split("\n") if line.strip()]
    if isinstance(bundle, Sequence):
        return list(bundle)
    return "bundle must be a list of records or JSON-lines text"


def _depth_ok(value: Any) -> bool:
    stack: list[tuple[Any, int]] = [(value, 0)]
    budget = MAX_RECORD_NODES
    while stack:
        item, depth = stack.pop()
        budget -= 1
        if depth > MAX_RECORD_DEPTH or budget < 0:
            return False
        if isinstance(item, dict):
            stack.extend((v, depth + 1) for v in item.values())
        elif isinstance(item, list | tuple):
            stack.extend((v, depth + 1) for v in item)
    return True


def _shape_problem(record: Any) -> str | None:
    if isinstance(record, _Bad):
        return record.reason
    if not isinstance(record, dict):
        return "record is not a JSON object"
    keys = set(record)
    missing = [f for f in _FIELD_ORDER if f not in keys]
    if missing:
        return "record is missing fields: " + ", ".join(missing)
    extra = keys - RECORD_FIELDS
    if extra:
        names = sorted(k for k in extra if isinstance(k, str) and _SAFE_NAME.match(k))[:5]
        shown = f": {', '.join(names)}" if names and len(names) == len(extra) else f" ({len(extra)})"
        return "record has unexpected fields" + shown
    seq, ts = record["seq"], record["timestamp"]
    if not isinstance(seq, int) or isinstance(seq, bool):
        return "field 'seq' must be an integer"
    if ts is not None and not isinstance(ts, str):
        return "field 'timestamp' must be a string or null"
    if not isinstance(record["type"], str) or not record["type"]:
        return "field 'type' must be a non-empty string"
    if not isinstance(record["payload"], dict):
        return "field 'payload' must be an object"
    if not isinstance(record["meta"], dict):
        return "field 'meta' must be an object"
    for name in ("prev_hash", "hash"):
        value = record[name]
        if not isinstance(value, str) or _HASH.fullmatch(value) is None:
            return f"field '{name}' must be 64 lowercase hex characters"
    if not _depth_ok(record):
        return "record is nested too deeply or holds too many values"
    return None


def _previous_head(previous: Any) -> tuple[int, str] | None:
    seq: Any
    head: Any
    if isinstance(previous, AuditHead):
        seq, head = previous.seq, previous.hash
    elif isinstance(previous, Mapping):
        seq, head = previous.get("seq"), previous.get("hash")
    elif isinstance(previous, Sequence) and not isinstance(previous, str | bytes) and previous:
        chained = [r for r in previous if not (isinstance(r, Mapping) and r.get("type") == SIGNATURE_TYPE)]
        return _previous_head(chained[-1]) if chained else None
    else:
        return None
    if not isinstance(seq, int) or isinstance(seq, bool) or not isinstance(head, str) or _HASH.fullmatch(head) is None:
        return None
    return seq, head


def _bad(index: int, reason: str, count: int = 0) -> AuditVerification:
    return AuditVerification(valid=False, broken_at=index, reason=reason, count=count)


def _verify(bundle: Any, previous: Any, public_key: Any, signature: Any) -> AuditVerification:
    loaded = _load(bundle)
    if isinstance(loaded, str):
        return _bad(0, loaded)
    chain = loaded
    last = chain[-1] if chain else None
    if isinstance(last, dict) and last.get("type") == SIGNATURE_TYPE and "hash" not in last:
        chain = chain[:-1]
        signature = last if signature is None else signature
    if not chain:
        return _bad(0, "bundle has no records")
    start_seq, start_hash = 0, ZERO_HASH
    if previous is not None:
        head = _previous_head(previous)
        if head is None:
            return _bad(0, "previous head is malformed (needs an integer seq and a 64-hex hash)")
        start_seq, start_hash = head[0] + 1, head[1]

    for i, record in enumerate(chain):
        problem = _shape_problem(record)
        if problem is not None:
            return _bad(i, problem, i)
        try:
            try:
                computed = record_hash(record)
            except IntegerDomainError:
                computed = record_hash(as_doubles(record))
        except Exception:
            return _bad(i, "record is not representable as RFC 8785 canonical JSON", i)
        expected_seq = start_seq if i == 0 else chain[i - 1]["seq"] + 1
        if record["seq"] != expected_seq:
            if i == 0 and previous is None:
                return _bad(0, "genesis seq is not 0 (a continued segment is verified with previous=)", 0)
            return _bad(i, f"seq is not contiguous (expected {expected_seq})", i)
        if i == 0 and record["type"] != GENESIS_TYPE:
            return _bad(0, "first record is not a genesis record", 0)
        if computed != record["hash"]:
            return _bad(i, "hash does not match the record's content", i)
        expected_prev = start_hash if i == 0 else chain[i - 1]["hash"]
        if record["prev_hash"] != expected_prev:
            if i == 0:
                why = "does not match the previous segment's head" if previous is not None else "is not the zero hash"
                return _bad(0, f"genesis prev_hash {why} (a continued segment is verified with previous=)", 0)
            # Record i is self-consistent, so either record i-1 was re-hashed (i+1 still links to i) or record i
            # was (i+1 does not). With no i+1 the earliest candidate, i-1, is reported.
            nxt = chain[i + 1] if i + 1 < len(chain) else None
            if nxt is None:
                why = f"record was changed and re-hashed, or record {i} forged: the chain breaks between them"
                return _bad(i - 1, why, i - 1)
            if isinstance(nxt, dict) and nxt.get("prev_hash") == record["hash"]:
                return _bad(i - 1, f"record was changed and re-hashed: record {i} committed to a different hash", i - 1)
            return _bad(i, f"record was changed and re-hashed: prev_hash does not match record {i - 1}", i)

    count = len(chain)
    signed = False
    if signature is not None or public_key is not None:
        if signature is None:
            return _bad(count, "no signature record, but a public_key was given", count)
        reason, signed = check_signature(signature, chain[-1], public_key)
        if reason is not None:
            return _bad(count, reason, count)
    declared = _declared_counts(chain)
    if declared is not None:
        return _bad(declared[0], declared[1], declared[0])
    return AuditVerification(valid=True, count=count, signed=signed)


def _declared_counts(chain: list[Any]) -> tuple[int, str] | None:
    """Each genesis declares how many commit and event records follow it: fewer (a cut tail) or more is a break."""
    expected: int | None = None
    since = 0
    for i, record in enumerate(chain):
        if record["type"] == GENESIS_TYPE:
            if expected is not None and since != expected:
                return i, f"the segment before record {i} holds {since} of the {expected} records its genesis declares"
            payload = record["payload"]
            commits, events = payload.get("commit_count"), payload.get("event_count")
            ok = all(isinstance(n, int) and not isinstance(n, bool) and n >= 0 for n in (commits, events))
            expected, since = (commits + events if ok else None), 0
            continue
        since += 1
        if expected is not None and since > expected:
            return i, f"record {i} is beyond the {expected} records its genesis declares"
    if expected is not None and since != expected:
        return len(chain), f"bundle ends after {since} of the {expected} records its genesis declares (a cut tail)"
    return None


def verify_audit(
    records: Any, *, previous: Any = None, public_key: Any = None, signature: Any = None
) -> AuditVerification:
    """Check a bundle (records, or JSON-lines text): hashes, links, contiguous ``seq``, genesis, exact fields.

    ``previous`` (the prior segment's records, last record or ``AuditHead``) verifies a continued segment;
    ``public_key`` requires a valid Ed25519 signature record by that key (last line, or ``signature=``).
    """
    try:
        return _verify(records, previous, public_key, signature)
    except Exception:
        return _bad(0, "bundle could not be checked (unexpected structure)")


def verify_file(
    path: str | os.PathLike[str], *, public_key: Any = None, previous: Any = None, out: TextIO | None = None
) -> int:
    """CLI hook: 0 valid, 1 invalid (names the broken record and why), 2 unreadable file."""
    stream = out if out is not None else sys.stdout
    try:
        with open(path, "rb") as fh:
            data = fh.read(MAX_BUNDLE_CHARS + 1)
    except OSError as exc:
        print(f"cannot read {os.fspath(path)}: {exc.strerror or type(exc).__name__}", file=sys.stderr)
        return 2
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        print(f"cannot read {os.fspath(path)}: not UTF-8 text", file=sys.stderr)
        return 2
    result = verify_audit(text, previous=previous, public_key=public_key)
    if result.valid:
        print(f"valid: {result.count} records{', signature verified' if result.signed else ''}", file=stream)
        return 0
    print(f"invalid: record {result.broken_at}: {result.reason}", file=stream)
    hint = _not_a_bundle(text) if len(text) <= MAX_BUNDLE_CHARS else ""
    if hint:
        print(hint, file=stream)
    return 1


_HOW_TO_WRITE = (
    "an audit bundle is JSON lines of export_audit records; write one with: "
    "from agentfootprint.audit import export_audit, write_jsonl; write_jsonl(export_audit(result), 'audit.jsonl')"
)


def _not_a_bundle(text: str) -> str:
    """What the file is when it is not an audit bundle at all (a recording, another JSON document), and how to
    write one; empty when it looks like a bundle that is broken."""
    try:
        whole = json.loads(text)
    except ValueError:
        return "" if text.lstrip().startswith("{") else f"this file is not JSON lines; {_HOW_TO_WRITE}"
    if isinstance(whole, dict) and "snapshot" in whole and "sources" in whole:
        what = "a recording (agentfootprint demo --save, save_recording)"
        return f"this file is {what}, not an audit bundle; {_HOW_TO_WRITE}"
    if isinstance(whole, dict) and {"seq", "hash"} <= set(whole):
        return ""
    return f"this file is one JSON document, not an audit bundle; {_HOW_TO_WRITE}"
