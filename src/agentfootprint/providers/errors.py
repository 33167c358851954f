"""Typed provider errors: each says what happened and what to do, and never quotes a credential."""

from __future__ import annotations

from typing import ClassVar

from agentfootprint.errors import AgentFootprintError
from agentfootprint.providers._models import ProviderAttempt


class ProviderConfigError(AgentFootprintError, ValueError):
    """A provider was configured or called wrongly: a programming error, never retried or fallen back from."""

    code: str = "ERR_PROVIDER_CONFIG"


class MockReplyError(ProviderConfigError):
    """A scripted mock reply (or a ``respond`` result) has the wrong shape; the message names the field."""

    code: str = "ERR_MOCK_REPLY_INVALID"


class ProviderError(AgentFootprintError):
    """A model call failed; ``retryable`` says whether trying again may help."""

    code: str = "ERR_PROVIDER"
    default_retryable: ClassVar[bool] = False

    def __init__(
        self,
        message: str,
        *,
        provider: str = "",
        status: int | None = None,
        retryable: bool | None = None,
        code: str | None = None,
    ) -> None:
        super().__init__(message, code=code)
        self.provider = provider
        self.status = status
        self.retryable = self.default_retryable if retryable is None else retryable
        self.attempts: list[ProviderAttempt] = []


class MockExhaustedError(ProviderError):
    """A mock provider was called more times than it had scripted replies."""

    code: str = "ERR_MOCK_EXHAUSTED"


class ProviderConnectionError(ProviderError):
    """The server could not be reached (refused, reset, DNS)."""

    code: str = "ERR_PROVIDER_CONNECTION"
    default_retryable: ClassVar[bool] = True


class ProviderTimeoutError(ProviderError):
    """The server did not answer in time."""

    code: str = "ERR_PROVIDER_TIMEOUT"
    default_retryable: ClassVar[bool] = True


class ProviderAuthError(ProviderError):
    """The server refused the credentials (401/403), or no key was configured."""

    code: str = "ERR_PROVIDER_AUTH"


class ModelNotFoundError(ProviderError):
    """The server does not know the requested model (404)."""

    code: str = "ERR_MODEL_NOT_FOUND"

    def __init__(
        self,
        message: str,
        *,
        model: str = "",
        provider: str = "",
        status: int | None = 404,
        retryable: bool | None = None,
        code: str | None = None,
    ) -> None:
        super().__init__(message, provider=provider, status=status, retryable=retryable, code=code)
        self.model = model


class RateLimitError(ProviderError):
    """The server is rate limiting (429); ``retry_after`` is the server's hint in seconds, if any."""

    code: str = "ERR_PROVIDER_RATE_LIMIT"
    default_retryable: ClassVar[bool] = True

    def __init__(
        self,
        message: str,
        *,
        retry_after: float | None = None,
        provider: str = "",
        status: int | None = 429,
        retryable: bool | None = None,
        code: str | None = None,
    ) -> None:
        super().__init__(message, provider=provider, status=status, retryable=retryable, code=code)
        self.retry_after = retry_after


class ProviderServerError(ProviderError):
    """The server failed (5xx, or an error event inside a stream)."""

    code: str = "ERR_PROVIDER_SERVER"
    default_retryable: ClassVar[bool] = True


class ProviderRequestError(ProviderError):
    """The server rejected the request (4xx other than 401/403/404-model/429); retrying will not help."""

    code: str = "ERR_PROVIDER_REQUEST"


class ProviderResponseError(ProviderError):
    """The server answered with a body this client cannot read (not JSON, missing fields, cut-off stream)."""

    code: str = "ERR_PROVIDER_BAD_RESPONSE"


class ModelRequiredError(ProviderConfigError):
    """Neither the request nor the provider names a model."""

    code: str = "ERR_MODEL_REQUIRED"
