"""Turn a model specification (`Model` instance or `"provider/model"` string) into a `Model`."""

from __future__ import annotations

from eve_py.errors import ModelConfigurationError
from eve_py.models.base import Model

__all__ = ("resolve_model",)


def resolve_model(spec: str | Model | None) -> Model:
    """Return the `Model` for `spec`.

    Raises:
        ModelConfigurationError: No model was given, or the string names no available provider.
    """
    if spec is None:
        raise ModelConfigurationError(
            "No model: set define_agent(model=...) in agent/agent.py, pass Runtime(model=...), "
            "or use --model mock to run the app's mock model"
        )
    if isinstance(spec, Model):
        return spec
    raise ModelConfigurationError(
        f"No provider is available for model {spec!r} in this build of eve-py; pass a Model instance "
        "(e.g. eve_py.testing.MockModel) or run the CLI with --model mock"
    )
