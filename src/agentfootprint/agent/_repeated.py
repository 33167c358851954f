"""The repeated-call nudge: the second time one tool returns the same result for the same arguments in a run, the
model is told so in one sentence appended to that result. The call still ran; a later one is not blocked. Only
fingerprints are kept (beside the run, never in its state), never the arguments or the result."""

from __future__ import annotations

import hashlib
import json
from typing import Any

REPEATED_CALL_THRESHOLD = 2


def fingerprint(text: str) -> str:
    """A short digest of ``text`` (compares a value with itself later in one run; nothing else)."""
    return hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=8).hexdigest()


def args_fingerprint(args: Any) -> str:
    """Order-insensitive over object keys, order-sensitive over lists."""
    return fingerprint(json.dumps(args, sort_keys=True, default=str, ensure_ascii=False))


def repeated_note(name: str, occurrences: int, by_args: bool = False) -> str:
    """The sentence appended to the repeated result (``by_args``: the tool judges repeats by arguments alone)."""
    if by_args:
        return (
            f"\n\n[repeated call: '{name}' has now been called {occurrences} times this turn with exactly these "
            "arguments. Its results may vary, but calling it again with the same arguments is a repeat: act on what "
            "you have, or change the arguments.]"
        )
    return (
        f"\n\n[identical call: '{name}' has now returned exactly this result {occurrences} times this turn for "
        "exactly these arguments. Calling it again will not change it: act on what you have, or change the "
        "arguments (a different filter, a wider range, another tool). If you are waiting for something to change, "
        "say so in your answer rather than calling again.]"
    )


class RepeatedCalls:
    """One run's tally of (tool, arguments, result) fingerprints."""

    __slots__ = ("_seen",)

    def __init__(self) -> None:
        self._seen: dict[tuple[str, str, str], int] = {}

    def land(self, name: str, args: Any, content: str) -> tuple[int, str, str]:
        """Count one landing; returns how many times it has now landed and the two fingerprints."""
        key = (name, args_fingerprint(args), fingerprint(content))
        count = self._seen.get(key, 0) + 1
        self._seen[key] = count
        return count, key[1], key[2]


__all__ = ["REPEATED_CALL_THRESHOLD", "RepeatedCalls", "args_fingerprint", "fingerprint", "repeated_note"]
