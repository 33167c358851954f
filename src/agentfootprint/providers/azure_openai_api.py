"""Azure OpenAI: Chat Completions on a deployment, with an API key or a Microsoft Entra ID token."""

from __future__ import annotations

import importlib
import inspect
import os
from collections.abc import Awaitable, Callable, Mapping
from typing import TYPE_CHECKING, Any
from urllib.parse import quote

from agentfootprint.providers._models import LLMRequest
from agentfootprint.providers.errors import (
    ModelNotFoundError,
    ModelRequiredError,
    ProviderAuthError,
    ProviderConfigError,
    ProviderError,
)
from agentfootprint.providers.openai_compat import OpenAICompatibleProvider, TokenLimitKey

if TYPE_CHECKING:
    import httpx2

DEFAULT_API_VERSION = "2024-10-21"
ENTRA_SCOPE = "https://cognitiveservices.azure.com/.default"
TokenProvider = Callable[[], str | Awaitable[str]]


class AzureOpenAIProvider(OpenAICompatibleProvider):
    """A deployment on Azure OpenAI (``{endpoint}/openai/deployments/{deployment}/chat/completions``)."""

    factory = "azure_openai"
    carries_forced_tool_choice = True
    key_hint = (
        "api_key= (or AZURE_OPENAI_API_KEY), or the Entra ID identity given by token_provider= / credential= "
        "(it needs the 'Cognitive Services OpenAI User' role on the resource)"
    )

    def __init__(
        self,
        endpoint: str | None = None,
        deployment: str | None = None,
        *,
        api_key: str | None = None,
        api_version: str | None = None,
        token_provider: TokenProvider | None = None,
        credential: Any = None,
        timeout: float = 60.0,
        transport: httpx2.AsyncBaseTransport | None = None,
        headers: Mapping[str, str] | None = None,
        name: str = "azure_openai",
    ) -> None:
        endpoint = endpoint or os.environ.get("AZURE_OPENAI_ENDPOINT")
        if not endpoint:
            raise ProviderConfigError(
                "azure_openai(): no endpoint; pass endpoint= or set AZURE_OPENAI_ENDPOINT "
                "(https://<resource>.openai.azure.com)"
            )
        if token_provider is not None and not callable(token_provider):
            raise ProviderConfigError("azure_openai(): token_provider must be a callable returning a token")
        if credential is not None and not callable(getattr(credential, "get_token", None)):
            raise ProviderConfigError("azure_openai(): credential must be an Azure credential with get_token()")
        key = api_key if api_key is not None else os.environ.get("AZURE_OPENAI_API_KEY")
        if key and (token_provider is not None or credential is not None):
            raise ProviderConfigError("azure_openai(): give either an API key or an Entra ID identity, not both")
        self.api_version = (
            api_version
            or os.environ.get("AZURE_OPENAI_API_VERSION")
            or os.environ.get("OPENAI_API_VERSION")  # what the openai SDK's AzureOpenAI reads
            or DEFAULT_API_VERSION
        )
        self._token_provider = token_provider
        self._credential = credential
        super().__init__(
            endpoint.rstrip("/") + "/openai",
            key or "",
            deployment,
            timeout=timeout,
            transport=transport,
            headers=headers,
            name=name,
        )
        self._api_key = key or None
        self.add_secret(key)

    def resolve_model(self, request: LLMRequest) -> str:
        """The configured deployment, else ``request.model`` taken as a deployment name."""
        deployment = self.model or request.model
        if not deployment:
            raise ModelRequiredError(
                f"{self.name}: no deployment given; pass deployment= to azure_openai() or set the agent's model"
            )
        return deployment

    def chat_path(self, model: str) -> str:
        """The deployment's endpoint, or the version-less ``/openai/v1`` one when ``api_version="v1"``."""
        if self.api_version == "v1":
            return "/v1/chat/completions"
        return f"/deployments/{quote(model, safe='')}/chat/completions?api-version={quote(self.api_version)}"

    def token_limit_key(self, model: str) -> TokenLimitKey:
        """Always ``max_completion_tokens``: a deployment name hides the model, and Azure takes it for every model."""
        return "max_completion_tokens"

    def status_error(self, status: int, raw: bytes, headers: Mapping[str, str], model: str) -> ProviderError:
        """Azure's ``DeploymentNotFound`` 404 names no model: it is a missing deployment all the same."""
        if status == 404 and b"DeploymentNotFound" in raw:
            return ModelNotFoundError(
                f"{self.name} at {self.base_url} has no deployment {self.safe(model, 120)!r} (404 DeploymentNotFound)."
                f" {self.model_hint(model)}.",
                model=model,
                provider=self.name,
                status=status,
            )
        return super().status_error(status, raw, headers, model)

    def model_hint(self, model: str) -> str:
        """Azure-specific advice."""
        return "The model name here is your deployment's name: check it in the Azure AI Foundry portal"

    def request_headers(self) -> dict[str, str]:
        """JSON headers plus ``api-key`` when a key is configured."""
        headers = {"content-type": "application/json", "accept": "application/json", **self._headers}
        if self._api_key:
            headers["api-key"] = self._api_key
        return headers

    async def prepare_headers(self, url: str, content: bytes) -> dict[str, str]:
        """The key header, or ``Authorization: Bearer`` with a fresh Entra ID token."""
        headers = self.request_headers()
        if self._api_key:
            return headers
        token = await self._token()
        self.add_secret(token)
        headers["authorization"] = f"Bearer {token}"
        return headers

    async def _token(self) -> str:
        if self._token_provider is None and self._credential is None:
            self._credential = _default_credential(self.name)
        try:
            if self._token_provider is not None:
                token: Any = self._token_provider()
            else:
                token = self._credential.get_token(ENTRA_SCOPE)
            if inspect.isawaitable(token):
                token = await token
        except ProviderAuthError:
            raise
        except Exception as exc:  # azure-identity raises its own and azure-core's error types
            raise ProviderAuthError(
                f"{self.name}: getting an Entra ID token failed ({type(exc).__name__}); "
                "sign in (az login) or check the managed identity, or use api_key=",
                provider=self.name,
            ) from None
        value = getattr(token, "token", token)
        if not isinstance(value, str) or not value:
            raise ProviderAuthError(f"{self.name}: the Entra ID token provider returned no token", provider=self.name)
        return value


def _default_credential(name: str) -> Any:
    """``DefaultAzureCredential`` from azure-identity (the ``azure`` extra)."""
    try:
        identity: Any = importlib.import_module("azure.identity")
    except ImportError:
        raise ProviderAuthError(
            f"{name}: no API key; set AZURE_OPENAI_API_KEY, or install 'agentfootprint[azure]' to sign in with "
            "Microsoft Entra ID",
            provider=name,
        ) from None
    return identity.DefaultAzureCredential()


def azure_openai(
    endpoint: str | None = None,
    deployment: str | None = None,
    *,
    api_key: str | None = None,
    api_version: str | None = None,
    token_provider: TokenProvider | None = None,
    credential: Any = None,
    timeout: float = 60.0,
    transport: httpx2.AsyncBaseTransport | None = None,
    headers: Mapping[str, str] | None = None,
    name: str = "azure_openai",
) -> AzureOpenAIProvider:
    """A provider for an Azure OpenAI deployment; ``deployment`` plays the model (or set the agent's ``model``).

    Auth: ``api_key`` (or ``AZURE_OPENAI_API_KEY``); else an Entra ID token from ``token_provider`` (a callable,
    such as azure-identity's ``get_bearer_token_provider``), ``credential`` (an Azure credential), or
    ``DefaultAzureCredential`` when the ``azure`` extra is installed.
    """
    return AzureOpenAIProvider(
        endpoint,
        deployment,
        api_key=api_key,
        api_version=api_version,
        token_provider=token_provider,
        credential=credential,
        timeout=timeout,
        transport=transport,
        headers=headers,
        name=name,
    )
