"""Fixtures for the server tests: the fixture app, compiled once."""

from __future__ import annotations

import pytest

from eve_py import load_agent
from eve_py.agent import Agent
from tests.conftest import HITL_APP


@pytest.fixture(scope="session")
def hitl_agent() -> Agent:
    """The fixture app `agent-tools-hitl`, compiled once for all server tests."""
    return load_agent(HITL_APP)
