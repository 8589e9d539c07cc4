"""Shared test fixtures: the anyio backend, and the fixture apps' paths."""

from __future__ import annotations

from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
HITL_APP = REPO / "fixtures" / "agent-tools-hitl"


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"
