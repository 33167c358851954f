"""Vendor response bodies validated by the vendors' own SDK types (anthropic, openai; botocore's Converse model)."""

from __future__ import annotations

from typing import Any


def anthropic_message(message_id: str, model: str, usage: dict[str, Any]) -> bytes:
    """A Messages API reply with the text ``ok``, as the anthropic SDK's ``Message`` writes it."""
    from anthropic.types import Message

    body = {
        "id": message_id,
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": [{"type": "text", "text": "ok"}],
        "stop_reason": "end_turn",
        "stop_sequence": None,
        "usage": usage,
    }
    return Message.model_validate(body).model_dump_json().encode()


def openai_completion(completion_id: str, model: str, usage: dict[str, Any] | None = None) -> bytes:
    """A Chat Completions reply with the text ``ok``, as the openai SDK's ``ChatCompletion`` writes it."""
    from openai.types.chat import ChatCompletion

    body: dict[str, Any] = {
        "id": completion_id,
        "object": "chat.completion",
        "created": 1,
        "model": model,
        "choices": [{"index": 0, "message": {"role": "assistant", "content": "ok"}, "finish_reason": "stop"}],
    }
    if usage is not None:
        body["usage"] = usage
    return ChatCompletion.model_validate(body).model_dump_json().encode()


def converse_output(usage: dict[str, int]) -> dict[str, object]:
    """A Bedrock Converse reply with the text ``ok``, checked against botocore's Converse output shape."""
    from botocore.session import get_session
    from botocore.validate import ParamValidator

    output = {
        "output": {"message": {"role": "assistant", "content": [{"text": "ok"}]}},
        "stopReason": "end_turn",
        "usage": usage,
        "metrics": {"latencyMs": 5},
    }
    shape = get_session().get_service_model("bedrock-runtime").operation_model("Converse").output_shape
    report = ParamValidator().validate(output, shape)
    assert not report.has_errors(), report.generate_report()
    return output
