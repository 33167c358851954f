"""``provider_from_env``: the provider the usual environment variables configure, and why (never their values)."""

from __future__ import annotations

import importlib.util
import logging
import os
from collections.abc import Mapping
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from agentfootprint.providers.base import Provider
from agentfootprint.providers.errors import ProviderConfigError

ProviderKind = Literal["anthropic", "openai", "openai_compatible", "azure_openai", "gemini", "bedrock", "ollama"]
CHOOSE_VAR = "AGENTFOOTPRINT_PROVIDER"
MODEL_VAR = "AGENTFOOTPRINT_MODEL"
_ALIASES: dict[str, ProviderKind] = {"azure": "azure_openai", "google": "gemini", "vertex": "gemini", "aws": "bedrock"}
_MODEL_VARS: dict[ProviderKind, tuple[str, ...]] = {
    "anthropic": ("ANTHROPIC_MODEL",),
    "openai": ("OPENAI_MODEL",),
    "openai_compatible": ("OPENAI_MODEL",),
    "azure_openai": ("AZURE_OPENAI_DEPLOYMENT", "AZURE_OPENAI_DEPLOYMENT_NAME"),
    "gemini": ("GEMINI_MODEL",),
    "bedrock": ("BEDROCK_MODEL_ID",),
    "ollama": ("OLLAMA_MODEL",),
}
_NEEDS: dict[ProviderKind, str] = {
    "anthropic": "ANTHROPIC_API_KEY",
    "openai": "OPENAI_API_KEY",
    "openai_compatible": "OPENAI_BASE_URL (and OPENAI_API_KEY if the server wants one)",
    "azure_openai": "AZURE_OPENAI_ENDPOINT plus AZURE_OPENAI_API_KEY (or the 'azure' extra for Entra ID sign-in)",
    "gemini": "GEMINI_API_KEY (or GOOGLE_API_KEY; for Vertex AI: GOOGLE_GENAI_USE_VERTEXAI=true and "
    "GOOGLE_CLOUD_PROJECT)",
    "bedrock": "AWS_REGION plus AWS credentials (AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, or AWS_PROFILE, "
    "or AWS_BEARER_TOKEN_BEDROCK)",
    "ollama": "OLLAMA_HOST",
}
ORDER: tuple[ProviderKind, ...] = (
    "anthropic",
    "openai_compatible",
    "openai",
    "azure_openai",
    "gemini",
    "bedrock",
    "ollama",
)
"""Precedence when several providers are configured (set ``AGENTFOOTPRINT_PROVIDER`` to choose)."""

logger = logging.getLogger("agentfootprint.providers")


class ProviderNotConfiguredError(ProviderConfigError):
    """No provider (or not the chosen one) is configured by the environment; the message says what to set."""

    code: str = "ERR_PROVIDER_NOT_CONFIGURED"


class ProviderPick(BaseModel):
    """Which provider the environment configures, the variables that decided it (names only) and the model."""

    model_config = ConfigDict(extra="forbid")

    kind: ProviderKind
    variables: list[str] = Field(default_factory=list)
    model: str | None = None
    also_configured: list[ProviderKind] = Field(default_factory=list)
    reason: str = ""


def _set(env: Mapping[str, str], name: str) -> bool:
    return bool(env.get(name, "").strip())


def _truthy(env: Mapping[str, str], name: str) -> bool:
    return env.get(name, "").strip().lower() in ("1", "true", "yes", "on")


def _variables(kind: ProviderKind, env: Mapping[str, str]) -> list[str] | None:
    """The variables that configure ``kind``, or None when it is not configured."""
    if kind == "anthropic":
        return ["ANTHROPIC_API_KEY"] if _set(env, "ANTHROPIC_API_KEY") else None
    if kind == "openai_compatible":
        if not _set(env, "OPENAI_BASE_URL"):
            return None
        return ["OPENAI_BASE_URL", *(["OPENAI_API_KEY"] if _set(env, "OPENAI_API_KEY") else [])]
    if kind == "openai":
        return ["OPENAI_API_KEY"] if _set(env, "OPENAI_API_KEY") else None
    if kind == "azure_openai":
        if not _set(env, "AZURE_OPENAI_ENDPOINT"):
            return None
        if _set(env, "AZURE_OPENAI_API_KEY"):
            return ["AZURE_OPENAI_ENDPOINT", "AZURE_OPENAI_API_KEY"]
        return ["AZURE_OPENAI_ENDPOINT"] if importlib.util.find_spec("azure.identity") else None
    if kind == "gemini":
        if _truthy(env, "GOOGLE_GENAI_USE_VERTEXAI"):
            return ["GOOGLE_GENAI_USE_VERTEXAI", "GOOGLE_CLOUD_PROJECT"] if _set(env, "GOOGLE_CLOUD_PROJECT") else None
        key = next((name for name in ("GOOGLE_API_KEY", "GEMINI_API_KEY") if _set(env, name)), None)  # as google-genai
        return [key] if key else None
    if kind == "bedrock":
        region = next((name for name in ("AWS_REGION", "AWS_DEFAULT_REGION") if _set(env, name)), None)
        if _set(env, "AWS_BEARER_TOKEN_BEDROCK"):
            credentials = ["AWS_BEARER_TOKEN_BEDROCK"]
        elif _set(env, "AWS_ACCESS_KEY_ID") and _set(env, "AWS_SECRET_ACCESS_KEY"):
            credentials = ["AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY"]
        elif _set(env, "AWS_PROFILE"):
            credentials = ["AWS_PROFILE"]
        else:
            return None
        return [*credentials, region] if region else None
    return ["OLLAMA_HOST"] if _set(env, "OLLAMA_HOST") else None


def _model(kind: ProviderKind, env: Mapping[str, str]) -> tuple[str | None, str | None]:
    for name in (MODEL_VAR, *_MODEL_VARS[kind]):
        if _set(env, name):
            return env[name].strip(), name
    return None, None


def _kind(value: str) -> ProviderKind:
    name = value.strip().lower().replace("-", "_")
    name = _ALIASES.get(name, name)
    for kind in ORDER:
        if kind == name:
            return kind
    raise ProviderNotConfiguredError(
        f"{CHOOSE_VAR} names no known provider; use one of: {', '.join(sorted({*ORDER, *_ALIASES}))}"
    )


def pick_provider_from_env(env: Mapping[str, str] | None = None) -> ProviderPick:
    """Decide which provider ``env`` (default ``os.environ``) configures, without building it."""
    env = os.environ if env is None else env
    configured = {kind: names for kind in ORDER if (names := _variables(kind, env)) is not None}
    if _set(env, CHOOSE_VAR):
        kind = _kind(env[CHOOSE_VAR])
        if kind not in configured:
            raise ProviderNotConfiguredError(f"{CHOOSE_VAR} chooses {kind}, which needs {_NEEDS[kind]}")
        variables = [CHOOSE_VAR, *configured[kind]]
    elif configured:
        kind = next(iter(configured))
        variables = configured[kind]
    else:
        lines = "; ".join(f"{kind}: {_NEEDS[kind]}" for kind in ORDER if kind != "openai")
        raise ProviderNotConfiguredError(
            f"no model provider is configured in the environment. Set one of: {lines}. "
            f"Set {CHOOSE_VAR} to choose when several are set, and {MODEL_VAR} (or the agent's model) for the model."
        )
    model, model_var = _model(kind, env)
    also = [other for other in configured if other != kind and not (kind == "openai_compatible" and other == "openai")]
    reason = f"picked {kind} because {', '.join(variables)} {'is' if len(variables) == 1 else 'are'} set"
    if model_var:
        reason += f"; model from {model_var}"
    if also:
        reason += f" (also configured: {', '.join(also)}; set {CHOOSE_VAR} to choose)"
    return ProviderPick(
        kind=kind,
        variables=[*variables, *([model_var] if model_var else [])],
        model=model,
        also_configured=also,
        reason=reason,
    )


def _build(pick: ProviderPick, env: Mapping[str, str], model: str | None, options: dict[str, Any]) -> Provider:
    model = model or pick.model
    get = env.get
    if pick.kind == "anthropic":
        from agentfootprint.providers.anthropic_api import anthropic

        return anthropic(get("ANTHROPIC_API_KEY"), model, **options)
    if pick.kind in ("openai", "openai_compatible"):
        from agentfootprint.providers.openai_compat import openai_compatible

        options.setdefault("name", pick.kind)
        base_url = (get("OPENAI_BASE_URL") or "").strip() or "https://api.openai.com/v1"
        return openai_compatible(base_url, get("OPENAI_API_KEY") or "", model, **options)
    if pick.kind == "azure_openai":
        from agentfootprint.providers.azure_openai_api import azure_openai

        return azure_openai(
            get("AZURE_OPENAI_ENDPOINT"),
            model,
            api_key=get("AZURE_OPENAI_API_KEY") or None,
            api_version=get("AZURE_OPENAI_API_VERSION") or get("OPENAI_API_VERSION") or None,
            **options,
        )
    if pick.kind == "gemini":
        from agentfootprint.providers.gemini_api import gemini

        if "GOOGLE_GENAI_USE_VERTEXAI" in pick.variables:
            project, location = get("GOOGLE_CLOUD_PROJECT"), get("GOOGLE_CLOUD_LOCATION") or None
            return gemini(None, model, vertex=True, project=project, location=location, **options)
        return gemini(get("GOOGLE_API_KEY") or get("GEMINI_API_KEY"), model, **options)
    if pick.kind == "bedrock":
        from agentfootprint.providers.bedrock_api import bedrock, botocore_module

        if "AWS_ACCESS_KEY_ID" in pick.variables:
            keys = (get("AWS_ACCESS_KEY_ID"), get("AWS_SECRET_ACCESS_KEY"), get("AWS_SESSION_TOKEN") or None)
            options.setdefault("credentials", botocore_module("credentials").Credentials(*keys))
        return bedrock(
            model,
            region=get("AWS_REGION") or get("AWS_DEFAULT_REGION"),
            profile=get("AWS_PROFILE") or None,
            api_key=get("AWS_BEARER_TOKEN_BEDROCK") or None,
            **options,
        )
    from agentfootprint.providers.ollama_api import ollama, ollama_host_url

    options.setdefault("base_url", ollama_host_url(get("OLLAMA_HOST")))
    return ollama(model, **options)


def provider_from_env(env: Mapping[str, str] | None = None, *, model: str | None = None, **options: Any) -> Provider:
    """The provider the environment configures (see ``ORDER``); logs which and why, naming variables, never values.

    ``AGENTFOOTPRINT_PROVIDER`` chooses when several are configured; ``AGENTFOOTPRINT_MODEL`` (or each provider's
    own model variable) sets the model. ``options`` go to the provider's factory (``timeout=``, ``transport=``...).
    Raises ``ProviderNotConfiguredError`` saying exactly what to set when nothing fits.
    """
    env = os.environ if env is None else env
    pick = pick_provider_from_env(env)
    provider = _build(pick, env, model, dict(options))
    logger.info("provider_from_env: %s", pick.reason)
    return provider
