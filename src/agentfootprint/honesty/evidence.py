"""Names and numbers from evidence: every value an answer states is looked for in what the run actually read."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from difflib import SequenceMatcher
from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel, Field

from agentfootprint.errors import AgentFootprintError
from agentfootprint.flow import thaw
from agentfootprint.flow.redaction import REDACTED, Redactor

if TYPE_CHECKING:
    from agentfootprint.agent import RunContext
    from agentfootprint.flow import FlowSnapshot

Posture = Literal["assist", "guard", "rails"]
ValueKind = Literal["number", "amount", "date", "id", "name"]
POSTURES: tuple[Posture, ...] = ("assist", "guard", "rails")
STATE_KEY = "unsupported_values"
REVISION_KEY = "evidence_revision"
_MAX_VALUES = 200
_MAX_VALUE_CHARS = 200
_MAX_ANSWER_CHARS = 200_000
_MAX_DIFF_CHARS = 20_000

_MONTHS = (
    "jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?|sep(?:t(?:ember)?)?|"
    "oct(?:ober)?|nov(?:ember)?|dec(?:ember)?"
)
_MONTH_INDEX = {m: i for i, m in enumerate(("jan feb mar apr may jun jul aug sep oct nov dec").split(), start=1)}
_DATE_RES = (
    re.compile(r"\b(\d{4})-(\d{1,2})-(\d{1,2})\b"),
    re.compile(r"\b(\d{1,2})/(\d{1,2})/(\d{2,4})\b"),
    re.compile(rf"\b({_MONTHS})\.?\s+(\d{{1,2}})(?:st|nd|rd|th)?(?:,?\s+(\d{{4}}))?\b", re.IGNORECASE),
    re.compile(rf"\b(\d{{1,2}})(?:st|nd|rd|th)?\s+({_MONTHS})\.?(?:,?\s+(\d{{4}}))?\b", re.IGNORECASE),
)
_DIGITS = r"(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?"
_AMOUNT_RE = re.compile(
    rf"[$€£¥]\s?{_DIGITS}(?:\s?(?:k|m|bn|million|billion)\b)?"
    rf"|\b{_DIGITS}\s?(?:USD|EUR|GBP|JPY|dollars|euros|pounds)\b",
    re.IGNORECASE,
)
_ID_RE = re.compile(
    r"#\d[\w-]*"
    r"|\b\d+(?:-\d+){2,}\b|\b\d{3,}(?: \d{3,}){2,}\b"
    r"|\b[A-Z][A-Z0-9]*[-_#]\d[A-Za-z0-9_-]*"
    r"|\b[A-Za-z]+\d+[A-Za-z0-9]*(?:[-_][A-Za-z0-9]+)*\b"
    r"|\b\d+[A-Za-z]+\d[A-Za-z0-9]*\b"
)
_NUMBER_RE = re.compile(r"(?<![\w.])[-+]?\d+(?:,\d{3})*(?:\.\d+)?%?")
_LIST_MARKER_RE = re.compile(r"(?m)^\s*\d{1,3}[.)]\s")
_NAME_RE = re.compile(r"\b[A-Z][a-z][A-Za-z'’]*(?:[ \t]+[A-Z][a-z][A-Za-z'’]*)*")
_ORDINAL_RE = re.compile(r"^\d+(?:st|nd|rd|th|s)$", re.IGNORECASE)
_UNIT_RE = re.compile(r"^\d+(?:\.\d+)?(?:[a-z]{1,3})$", re.IGNORECASE)
_SENTENCE_START = re.compile(r"(?:^|[.!?:;]\s*|\n\s*(?:[-*•]\s*)?|[\"'(\[]\s*)$")
_COMMON_CAPS = frozenset(
    "the a an this that these those it its i we you he she they our your my his her their there here yes no "
    "please thanks thank hi hello dear if when based according unfortunately however also and but or so note "
    "sure okay ok sorry great certainly because since after before while as for in on at to of with from by "
    "monday tuesday wednesday thursday friday saturday sunday january february march april may june july "
    "august september october november december today tomorrow yesterday".split()
)
_NUMBER_IN_TEXT = re.compile(r"\d+(?:,\d{3})*(?:\.\d+)?")


class UnsupportedValuesError(AgentFootprintError, ValueError):
    """The answer stated names or numbers found in no tool result or context (posture ``rails``); it was refused."""

    code = "ERR_UNSUPPORTED_VALUES"

    def __init__(self, message: str, *, values: Sequence[str], verdict: UnsupportedValues | None = None) -> None:
        super().__init__(message)
        self.values = list(values)
        self.verdict = verdict


class UnsupportedValue(BaseModel):
    """One value the answer stated that the run's evidence does not contain."""

    value: str
    kind: ValueKind
    start: int = 0


class UnsupportedValues(BaseModel):
    """The evidence gate's verdict on one answer: what was checked, what was found nowhere, what happened next."""

    posture: Posture
    checked: int = 0
    values: list[UnsupportedValue] = Field(default_factory=list)
    initial: list[UnsupportedValue] = Field(default_factory=list)
    asked_to_correct: bool = False
    revised: bool = False
    refused: bool = False

    @property
    def ok(self) -> bool:
        return not self.values


@dataclass(frozen=True)
class StatedValue:
    """A value found in an answer: its text, kind and offset."""

    value: str
    kind: ValueKind
    start: int


def _overlaps(spans: list[tuple[int, int]], start: int, end: int) -> bool:
    return any(start < e and s < end for s, e in spans)


def _sentence_start(text: str, start: int) -> bool:
    return bool(_SENTENCE_START.search(text[max(0, start - 8) : start]))


def _names(text: str, taken: list[tuple[int, int]]) -> list[StatedValue]:
    out: list[StatedValue] = []
    for m in _NAME_RE.finditer(text):
        parts = [(m.start() + w.start(), w.group(0)) for w in re.finditer(r"\S+", m.group(0))]
        at_start = _sentence_start(text, m.start())
        while parts and parts[0][1].lower() in _COMMON_CAPS:
            parts, at_start = parts[1:], False
        while parts and parts[-1][1].lower() in _COMMON_CAPS:
            parts = parts[:-1]
        if not parts or (len(parts) == 1 and at_start):
            continue
        start, value = parts[0][0], " ".join(p for _, p in parts)
        if not _overlaps(taken, start, start + len(value)):
            out.append(StatedValue(value, "name", start))
    return out


def extract_values(text: str) -> list[StatedValue]:
    """Every date, amount, id, number and proper name an answer states, in text order (heuristic, deterministic)."""
    text = text[:_MAX_ANSWER_CHARS]
    found: list[StatedValue] = []
    taken: list[tuple[int, int]] = []
    markers = {m.end() - 2 - (len(m.group(0)) - len(m.group(0).lstrip())) for m in _LIST_MARKER_RE.finditer(text)}

    def take(kind: ValueKind, regex: re.Pattern[str]) -> None:
        for m in regex.finditer(text):
            start, end = m.start(), m.end()
            if _overlaps(taken, start, end):
                continue
            value = m.group(0).strip()
            if kind == "id" and (_ORDINAL_RE.match(value) or _UNIT_RE.match(value)):
                continue
            if kind == "number" and any(start <= k < end for k in markers):
                continue
            taken.append((start, end))
            found.append(StatedValue(value, kind, start))

    for date_re in _DATE_RES:
        take("date", date_re)
    take("amount", _AMOUNT_RE)
    take("id", _ID_RE)
    take("number", _NUMBER_RE)
    found.extend(_names(text, taken))
    found.sort(key=lambda v: v.start)
    return found[:_MAX_VALUES]


def _decimal(text: str) -> Decimal | None:
    cleaned = text.replace(",", "").rstrip("%").lstrip("+")
    try:
        return Decimal(cleaned).normalize()
    except (InvalidOperation, ValueError):
        return None


def _amount_number(value: str) -> Decimal | None:
    m = _NUMBER_IN_TEXT.search(value)
    if m is None:
        return None
    number = _decimal(m.group(0))
    tail = value[m.end() :].strip().lower()
    if number is not None and tail in ("k", "m", "bn", "million", "billion"):
        scale = {"k": 1_000, "m": 1_000_000, "million": 1_000_000, "bn": 10**9, "billion": 10**9}[tail]
        return (number * scale).normalize()
    return number


def _date_key(groups: Sequence[str | None], pattern: int) -> tuple[int | None, int, int] | None:
    try:
        if pattern == 0:
            return int(groups[0] or 0), int(groups[1] or 0), int(groups[2] or 0)
        if pattern == 1:
            year = int(groups[2] or 0)
            return (year + 2000 if year < 100 else year), int(groups[0] or 0), int(groups[1] or 0)
        month_text, day_text = (groups[0], groups[1]) if pattern == 2 else (groups[1], groups[0])
        month = _MONTH_INDEX[(month_text or "")[:3].lower()]
        return (int(groups[2]) if groups[2] else None), month, int(day_text or 0)
    except (KeyError, ValueError):
        return None


def _dates_in(text: str) -> set[tuple[int | None, int, int]]:
    keys: set[tuple[int | None, int, int]] = set()
    for i, date_re in enumerate(_DATE_RES):
        for m in date_re.finditer(text):
            key = _date_key(m.groups(), i)
            if key is not None:
                keys.add(key)
    return keys


class Evidence:
    """The texts a run read (tool results, injected context, the user's words), indexed for value look-ups."""

    def __init__(self, texts: Iterable[str], allow: Iterable[str] = ()) -> None:
        self.texts = [t[:_MAX_ANSWER_CHARS] for t in texts if isinstance(t, str) and t]
        self.folded = [" ".join(t.casefold().split()) for t in self.texts]
        self.numbers = {d for t in self.texts for m in _NUMBER_IN_TEXT.finditer(t) if (d := _decimal(m.group(0)))}
        self.dates = {k for t in self.texts for k in _dates_in(t)}
        self.allow = {" ".join(a.casefold().split()) for a in allow}

    def _phrase(self, value: str) -> bool:
        needle = " ".join(value.casefold().split())
        pattern = re.compile(rf"(?<![\w]){re.escape(needle)}(?![\w])")
        return any(pattern.search(t) for t in self.folded)

    def supports(self, v: StatedValue) -> bool:
        """Whether ``v`` appears in the evidence (numbers by value, dates by day, ids and names by text)."""
        if " ".join(v.value.casefold().split()) in self.allow:
            return True
        if v.kind in ("number", "amount"):
            number = _amount_number(v.value) if v.kind == "amount" else _decimal(v.value)
            return (number is not None and (number in self.numbers or abs(number) in self.numbers)) or self._phrase(
                v.value
            )
        if v.kind == "date":
            keys = _dates_in(v.value)
            for year, month, day in keys:
                if (year, month, day) in self.dates or any(
                    (y is None or year is None or y == year) and m == month and d == day for y, m, d in self.dates
                ):
                    return True
            return self._phrase(v.value)
        if v.kind == "name":
            if self._phrase(v.value):
                return True
            words = [w.casefold() for w in v.value.split()]
            return len(words) > 1 and any(
                all(re.search(rf"(?<![\w]){re.escape(w)}(?![\w])", t) for w in words) for t in self.folded
            )
        return self._phrase(v.value)


def check_answer(answer: str, evidence: Evidence) -> tuple[int, list[UnsupportedValue]]:
    """``(values checked, values found nowhere)`` for one answer; each distinct value reported once."""
    stated = extract_values(answer)
    seen: set[tuple[str, str]] = set()
    missing: list[UnsupportedValue] = []
    for v in stated:
        key = (v.kind, v.value.casefold())
        if key in seen:
            continue
        seen.add(key)
        if not evidence.supports(v):
            missing.append(UnsupportedValue(value=v.value[:_MAX_VALUE_CHARS], kind=v.kind, start=v.start))
    return len(seen), missing


def _secret_spans(text: str, scrub: Callable[[str], str]) -> list[tuple[int, int]] | None:
    scrubbed = scrub(text)
    if scrubbed == text:
        return []
    if len(text) > _MAX_DIFF_CHARS:
        return None
    ops = SequenceMatcher(None, text, scrubbed, autojunk=False).get_opcodes()
    return [(i1, i2) for tag, i1, i2, _, _ in ops if tag in ("replace", "delete")]


def mask_secrets(answer: str, values: list[UnsupportedValue], redactor: Redactor | None) -> list[UnsupportedValue]:
    """Values that touch a redacted span of the answer become the placeholder: a verdict never carries a secret."""
    if redactor is None or not redactor.active or not values:
        return values
    spans = _secret_spans(answer, redactor.scrub_text)
    out: list[UnsupportedValue] = []
    for v in values:
        end = v.start + len(v.value)
        if spans is None:
            window = answer[max(0, v.start - 64) : end + 64]
            touched = redactor.scrub_text(window) != window
        else:
            touched = any(v.start < e and s < end for s, e in spans)
        touched = touched or redactor.scrub_text(v.value) != v.value
        out.append(v.model_copy(update={"value": REDACTED}) if touched else v)
    return out


def _texts(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value]
    return []


def evidence_from_state(state: Mapping[str, Any], allow: Iterable[str] = ()) -> Evidence:
    """The run's evidence as committed: tool results, system prompt and injections, user and tool messages."""
    texts: list[str] = [str(state.get("system_prompt") or ""), str(state.get("user_message") or "")]
    for record in state.get("tool_results") or ():
        if isinstance(record, Mapping):
            texts += _texts(record.get("content"))
    for key in ("system_prompt_injections", "message_injections"):
        for record in state.get(key) or ():
            if isinstance(record, Mapping):
                texts += _texts(record.get("text"))
    for message in state.get("message_slot") or ():
        if isinstance(message, Mapping):
            texts += _texts(message.get("content"))
    for message in state.get("history") or ():
        if isinstance(message, Mapping) and message.get("role") in ("user", "tool", "system"):
            texts += _texts(message.get("content"))
    return Evidence(texts, allow)


def correction_prompt(values: Sequence[UnsupportedValue]) -> str:
    """The one message ``guard`` sends: names the values found nowhere and asks for an answer from evidence."""
    listed = ", ".join(repr(v.value) for v in values[:50])
    return (
        f"Your answer states values that appear in no tool result or provided context: {listed}. "
        "Rewrite the answer using only names and numbers that appear in the evidence; if a value is not known, "
        "say so plainly instead of stating one."
    )


_READ_KEYS = (
    "system_prompt",
    "user_message",
    "tool_results",
    "system_prompt_injections",
    "message_injections",
    "message_slot",
    "history",
)


async def evidence_gate(ctx: RunContext, posture: Posture, allow: Sequence[str], answer: str) -> str:
    """The final answer checked against the run's evidence: record the verdict, re-ask once (guard) or refuse
    (rails: the answer becomes empty and ``after_run`` raises)."""
    turn = ctx.turn
    assert turn is not None, "the evidence gate runs in the final stage"
    state = {key: thaw(turn.scope.get(key)) for key in _READ_KEYS}
    evidence = evidence_from_state(state, allow)
    checked, missing = check_answer(answer or "", evidence)
    missing = mask_secrets(answer or "", missing, ctx.redactor)
    verdict = UnsupportedValues(posture=posture, checked=checked, values=missing, initial=missing)
    if missing and posture == "guard":
        answer, verdict = await _ask_to_correct(ctx, answer, evidence, verdict)
    if missing and posture == "rails":
        verdict = verdict.model_copy(update={"refused": True})
        answer = ""
    ctx.record(STATE_KEY, verdict.model_dump(mode="json"))
    return answer


async def _ask_to_correct(
    ctx: RunContext, answer: str, evidence: Evidence, verdict: UnsupportedValues
) -> tuple[str, UnsupportedValues]:
    from agentfootprint.providers import LLMRequest, Message

    turn = ctx.turn
    assert turn is not None
    prompt = correction_prompt(verdict.values)
    injected = [Message(role=m["role"], content=m["content"]) for m in thaw(turn.message_slot)]
    conversation = [Message.model_validate(thaw(m)) for m in turn.history]
    config = ctx.config
    request = LLMRequest(
        system_prompt=turn.system_prompt,
        messages=[
            *injected,
            *conversation,
            Message(role="assistant", content=answer),
            Message(role="user", content=prompt),
        ],
        tools=[],
        model=config.model,
        seed=ctx.seed,
        temperature=config.temperature,
        max_tokens=config.max_tokens,
    )
    response = await ctx.call_model(request)
    revised_answer = response.content or answer
    checked, still = check_answer(revised_answer, evidence)
    still = mask_secrets(revised_answer, still, ctx.redactor)
    ctx.record(
        REVISION_KEY,
        {
            "asked": prompt,
            "original": answer,
            "content": response.content,
            "model": response.model,
            "usage": response.usage.model_dump(),
            "unsupported_after": [v.model_dump(mode="json") for v in still],
        },
    )
    update = {"checked": max(verdict.checked, checked), "values": still, "asked_to_correct": True}
    return revised_answer, verdict.model_copy(update={**update, "revised": bool(still)})


def verdict_of(state: Mapping[str, Any] | None) -> UnsupportedValues | None:
    """The committed verdict in a run's state (or None when the gate did not run)."""
    raw = (state or {}).get(STATE_KEY)
    return UnsupportedValues.model_validate(raw) if isinstance(raw, Mapping) else None


def verdict_of_snapshot(snapshot: FlowSnapshot | None) -> UnsupportedValues | None:
    return verdict_of(snapshot.state) if snapshot is not None else None


def refusal_of(state: Mapping[str, Any], scrub: Any = None) -> UnsupportedValuesError | None:
    """The typed refusal for a ``rails`` verdict (values scrubbed by ``scrub(text)`` when given), else None."""
    verdict = verdict_of(state)
    if verdict is None or not verdict.refused:
        return None
    if scrub is not None:
        verdict = verdict.model_copy(
            update={
                "values": [v.model_copy(update={"value": scrub(v.value)}) for v in verdict.values],
                "initial": [v.model_copy(update={"value": scrub(v.value)}) for v in verdict.initial],
            }
        )
    values = [v.value for v in verdict.values]
    shown = ", ".join(repr(v) for v in values[:10])
    more = f" and {len(values) - 10} more" if len(values) > 10 else ""
    return UnsupportedValuesError(
        f"answer refused: it states values found in no tool result or context: {shown}{more}",
        values=values,
        verdict=verdict,
    )


__all__ = [
    "POSTURES",
    "Evidence",
    "Posture",
    "StatedValue",
    "UnsupportedValue",
    "UnsupportedValues",
    "UnsupportedValuesError",
    "ValueKind",
    "check_answer",
    "correction_prompt",
    "evidence_from_state",
    "evidence_gate",
    "extract_values",
    "refusal_of",
    "verdict_of",
    "verdict_of_snapshot",
]
