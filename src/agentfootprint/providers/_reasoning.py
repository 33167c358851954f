"""Reasoning content: ``<think>`` spans split from answer text, whole or streamed."""

from __future__ import annotations

from agentfootprint.providers._models import ReasoningBlock

OPEN_TAG = "<think>"
CLOSE_TAG = "</think>"


def split_think(text: str) -> tuple[str, list[ReasoningBlock]]:
    """``text`` without a leading ``<think>…</think>`` span, plus that span as reasoning.

    Only a span that opens the text (after whitespace) counts; an unclosed span is all reasoning.
    """
    splitter = ThinkSplitter()
    pieces = splitter.feed(text) + splitter.flush()
    answer = "".join(piece for kind, piece in pieces if kind == "text")
    return answer, splitter.blocks()


class ThinkSplitter:
    """Splits streamed text into reasoning and answer pieces, holding back only what could still be a tag."""

    def __init__(self) -> None:
        self._state = "start"  # start → think → lead (whitespace after the span) → answer
        self._pending = ""
        self._thought: list[str] = []

    def feed(self, text: str) -> list[tuple[str, str]]:
        """``("reasoning" | "text", piece)`` pairs for what ``text`` settles."""
        if self._state == "lead":
            text = text.lstrip()
            if text:
                self._state = "answer"
        if self._state == "answer":
            return [("text", text)] if text else []
        self._pending += text
        out: list[tuple[str, str]] = []
        if self._state == "start":
            stripped = self._pending.lstrip()
            if not stripped or (len(stripped) < len(OPEN_TAG) and OPEN_TAG.startswith(stripped)):
                return out
            if not stripped.startswith(OPEN_TAG):
                self._state = "answer"
                pending, self._pending = self._pending, ""
                return [("text", pending)]
            self._state = "think"
            self._pending = stripped[len(OPEN_TAG) :]
        end = self._pending.find(CLOSE_TAG)
        if end >= 0:
            thought, rest = self._pending[:end], self._pending[end + len(CLOSE_TAG) :]
            self._pending = ""
            self._state = "lead"
            if thought:
                self._thought.append(thought)
                out.append(("reasoning", thought))
            return out + self.feed(rest)
        keep = _tag_prefix_len(self._pending)
        settled = self._pending[: len(self._pending) - keep]
        self._pending = self._pending[len(settled) :]
        if settled:
            self._thought.append(settled)
            out.append(("reasoning", settled))
        return out

    def flush(self) -> list[tuple[str, str]]:
        """What is still held back when the text ends (an unclosed span stays reasoning)."""
        pending, self._pending = self._pending, ""
        if not pending:
            return []
        if self._state == "think":
            self._thought.append(pending)
            return [("reasoning", pending)]
        return [("text", pending)]

    def blocks(self) -> list[ReasoningBlock]:
        """The reasoning seen so far as one block (none when there was no span)."""
        text = "".join(self._thought).strip()
        return [ReasoningBlock(kind="thinking", text=text, source="think_tag")] if text else []


def _tag_prefix_len(text: str) -> int:
    """Length of the longest suffix of ``text`` that is a proper prefix of ``</think>``."""
    for size in range(min(len(CLOSE_TAG) - 1, len(text)), 0, -1):
        if CLOSE_TAG.startswith(text[-size:]):
            return size
    return 0
