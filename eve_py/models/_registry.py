"""Turn a model specification (`Model` instance or string) into a `Model`.

Spellings:

```
"anthropic/claude-sonnet-4.6"          Vercel AI Gateway (any "provider/model"); `model` is the whole string
                                       key AI_GATEWAY_API_KEY; base URL AI_GATEWAY_BASE_URL
                                       (default https://ai-gateway.vercel.sh/v1)
"gateway:anthropic/claude-sonnet-4.6"  the same, spelled out
"anthropic:claude-sonnet-4-6"          Anthropic Messages API; `model` is what follows the colon
                                       key ANTHROPIC_API_KEY; base URL ANTHROPIC_BASE_URL
                                       (default https://api.anthropic.com)
"openai:gpt-5"                         OpenAI Chat Completions, or any compatible server
                                       key OPENAI_API_KEY; base URL OPENAI_BASE_URL
                                       (default https://api.openai.com/v1)
"mock"                                 the app's agent/mock_model.py (needs the app folder)
```

A key is required while the base URL is the provider's own; with the base URL pointed
elsewhere (a local server) a missing key is allowed and no key is sent.

Which spec is used: an explicit one (`Runtime(model=...)`, `--model`) wins, then the
`EVE_MODEL` environment variable, then `define_agent(model=...)`.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

import httpx

from eve_py.errors import ModelConfigurationError
from eve_py.models._anthropic import ANTHROPIC_BASE_URL, AnthropicModel
from eve_py.models._base import Model
from eve_py.models._mock import load_mock_model
from eve_py.models._openai import GATEWAY_BASE_URL, OPENAI_BASE_URL, ChatCompletionsModel

__all__ = ("EVE_MODEL_ENV", "choose_model_spec", "resolve_model")

EVE_MODEL_ENV = "EVE_MODEL"
"""The environment variable that overrides the agent's own model."""

_MOCK_HINT = "or run with --model mock to use the app's scripted mock model (agent/mock_model.py)"


def choose_model_spec(
    explicit: str | Model | None, agent_default: str | Model | None, *, env: Mapping[str, str] | None = None
) -> str | Model | None:
    """Pick the spec to use: `explicit`, else `EVE_MODEL` (when set and not empty), else `agent_default`."""
    if explicit is not None:
        return explicit
    override = (os.environ if env is None else env).get(EVE_MODEL_ENV, "").strip()
    return override or agent_default


def resolve_model(
    spec: str | Model | None,
    *,
    app_dir: str | Path | None = None,
    env: Mapping[str, str] | None = None,
    client: httpx.AsyncClient | None = None,
) -> Model:
    """Return the `Model` for `spec` (see the module docstring for the spellings).

    Args:
        spec: A `Model`, a model string, or None.
        app_dir: The app folder, for `"mock"`.
        env: Where keys and base URLs are read; defaults to `os.environ`.
        client: An `httpx.AsyncClient` for the model to use; by default it creates its own.

    Raises:
        ModelConfigurationError: No model was given, the string names no provider, or the
            provider's API key is not set (the message names the variable to set).
    """
    if spec is None:
        raise ModelConfigurationError(
            "No model: set define_agent(model=...) in agent/agent.py, pass Runtime(model=...), set EVE_MODEL, "
            "or use --model mock to run the app's mock model"
        )
    if isinstance(spec, Model):
        return spec
    if not isinstance(spec, str):
        raise ModelConfigurationError(f"A model must be a Model or a string, got {type(spec).__name__}")
    env = os.environ if env is None else env
    text = spec.strip()
    if text == "mock":
        return _mock(app_dir)
    prefix, colon, rest = text.partition(":")
    if colon and "/" not in prefix:
        if not rest:
            raise ModelConfigurationError(f"Model {spec!r} names no model after {prefix + ':'!r}")
        if prefix == "anthropic":
            key, base_url = _key_and_url(env, spec, "ANTHROPIC_API_KEY", "ANTHROPIC_BASE_URL", ANTHROPIC_BASE_URL)
            return AnthropicModel(rest, api_key=key, base_url=base_url, client=client, key_hint="ANTHROPIC_API_KEY")
        if prefix == "openai":
            key, base_url = _key_and_url(env, spec, "OPENAI_API_KEY", "OPENAI_BASE_URL", OPENAI_BASE_URL)
            return ChatCompletionsModel(
                rest, provider="openai", api_key=key, base_url=base_url, client=client, key_hint="OPENAI_API_KEY"
            )
        if prefix == "gateway":
            text = rest
        else:
            raise ModelConfigurationError(
                f"No provider is available for model {spec!r}: the prefix {prefix + ':'!r} is not one of "
                "'anthropic:', 'openai:', 'gateway:'. Use 'provider/model' for the Vercel AI Gateway "
                f"(e.g. 'anthropic/claude-sonnet-4.6'), {_MOCK_HINT}"
            )
    if "/" not in text.strip("/"):
        raise ModelConfigurationError(
            f"No provider is available for model {spec!r}: write 'provider/model' for the Vercel AI Gateway "
            "(e.g. 'anthropic/claude-sonnet-4.6' or 'openai/gpt-5'), 'anthropic:MODEL' for Anthropic's API, "
            f"'openai:MODEL' for OpenAI or a compatible server, {_MOCK_HINT}"
        )
    key, base_url = _key_and_url(env, spec, "AI_GATEWAY_API_KEY", "AI_GATEWAY_BASE_URL", GATEWAY_BASE_URL)
    return ChatCompletionsModel(
        text, provider="gateway", api_key=key, base_url=base_url, client=client, key_hint="AI_GATEWAY_API_KEY"
    )


def _key_and_url(
    env: Mapping[str, str], spec: str, key_var: str, url_var: str, default_url: str
) -> tuple[str | None, str]:
    """The API key and base URL from the environment; a missing key is an error at the default URL."""
    key = env.get(key_var, "").strip() or None
    base_url = env.get(url_var, "").strip() or default_url
    if key is None and base_url.rstrip("/") == default_url:
        served = {
            "AI_GATEWAY_API_KEY": "is served through the Vercel AI Gateway",
            "ANTHROPIC_API_KEY": "is served by the Anthropic API",
            "OPENAI_API_KEY": "is served by the OpenAI API",
        }[key_var]
        alternative = (
            " (or name a native provider, e.g. 'anthropic:claude-sonnet-4-6' with ANTHROPIC_API_KEY)"
            if key_var == "AI_GATEWAY_API_KEY"
            else ""
        )
        raise ModelConfigurationError(
            f"Model {spec!r} {served}, and {key_var} is not set. Set {key_var}{alternative}, point {url_var} "
            f"at a compatible local server, {_MOCK_HINT}."
        )
    return key, base_url


def _mock(app_dir: str | Path | None) -> Model:
    if app_dir is None:
        raise ModelConfigurationError(
            "Model 'mock' means the app's agent/mock_model.py, but this agent was not loaded from an app folder; "
            "pass a MockModel instance instead"
        )
    return load_mock_model(app_dir)
