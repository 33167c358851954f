"""Answer honesty, as extensions of the Agent: the evidence gate, assessment, check-in receipts, "why did you say
that?" from the record, recorded chats and self-explain trace tools.

Names load on first use, so ``import agentfootprint.honesty`` stays cheap."""

from __future__ import annotations

from typing import TYPE_CHECKING

from agentfootprint._lazy import lazy_exports as _lazy_exports

if TYPE_CHECKING:
    from agentfootprint.honesty.assessment import Assessment, AssessmentReason, assess
    from agentfootprint.honesty.chat import (
        ChatTurn,
        ExplainedSource,
        Explanation,
        RecordedChat,
        TurnRerun,
        explain_answer,
        explanation_json,
        recorded_chat,
    )
    from agentfootprint.honesty.checkin import (
        CheckInPack,
        Driver,
        ReadItem,
        TrailStep,
        check_in_approved,
        check_in_declined,
        check_in_pack_of,
    )
    from agentfootprint.honesty.evidence import (
        Evidence,
        UnsupportedValue,
        UnsupportedValues,
        UnsupportedValuesError,
        check_answer,
        extract_values,
    )
    from agentfootprint.honesty.extension import EvidenceGate, Honesty, SelfExplain
    from agentfootprint.honesty.self_explain import NO_RUN, self_explain_tools

_EXPORTS = {
    "Assessment": ".assessment",
    "AssessmentReason": ".assessment",
    "assess": ".assessment",
    "ChatTurn": ".chat",
    "ExplainedSource": ".chat",
    "Explanation": ".chat",
    "RecordedChat": ".chat",
    "TurnRerun": ".chat",
    "explain_answer": ".chat",
    "explanation_json": ".chat",
    "recorded_chat": ".chat",
    "CheckInPack": ".checkin",
    "Driver": ".checkin",
    "ReadItem": ".checkin",
    "TrailStep": ".checkin",
    "check_in_approved": ".checkin",
    "check_in_declined": ".checkin",
    "check_in_pack_of": ".checkin",
    "Evidence": ".evidence",
    "UnsupportedValue": ".evidence",
    "UnsupportedValues": ".evidence",
    "UnsupportedValuesError": ".evidence",
    "check_answer": ".evidence",
    "extract_values": ".evidence",
    "EvidenceGate": ".extension",
    "Honesty": ".extension",
    "SelfExplain": ".extension",
    "NO_RUN": ".self_explain",
    "self_explain_tools": ".self_explain",
}
__all__ = [
    "NO_RUN",
    "Assessment",
    "AssessmentReason",
    "ChatTurn",
    "CheckInPack",
    "Driver",
    "Evidence",
    "EvidenceGate",
    "ExplainedSource",
    "Explanation",
    "Honesty",
    "ReadItem",
    "RecordedChat",
    "SelfExplain",
    "TrailStep",
    "TurnRerun",
    "UnsupportedValue",
    "UnsupportedValues",
    "UnsupportedValuesError",
    "assess",
    "check_answer",
    "check_in_approved",
    "check_in_declined",
    "check_in_pack_of",
    "explain_answer",
    "explanation_json",
    "extract_values",
    "recorded_chat",
    "self_explain_tools",
]
__getattr__, __dir__ = _lazy_exports(__name__, globals(), _EXPORTS)
