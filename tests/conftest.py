"""Shared test fixtures: the anyio backend, and the fixture apps' paths."""

from __future__ import annotations

from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
HITL_APP = REPO / "fixtures" / "agent-tools-hitl"


PROVIDER_ENV = (
    "EVE_MODEL",
    "AI_GATEWAY_API_KEY",
    "AI_GATEWAY_BASE_URL",
    "ANTHROPIC_API_KEY",
    "ANTHROPIC_BASE_URL",
    "OPENAI_API_KEY",
    "OPENAI_BASE_URL",
    "EVE_IMPORT_TIMEOUT",
)
"""Variables that choose a real model or its key; no test may see the developer's own values."""


@pytest.fixture(autouse=True)
def _no_provider_env(monkeypatch: pytest.MonkeyPatch) -> None:
    """Remove model keys and overrides, so no test reaches a real provider or depends on the shell."""
    for name in PROVIDER_ENV:
        monkeypatch.delenv(name, raising=False)


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"
