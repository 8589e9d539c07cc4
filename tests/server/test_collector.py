"""While an app serves, Python's garbage collector runs less often; once the last app stops, as it did before."""

from __future__ import annotations

import gc

import pytest

from eve_py.agent import Agent
from tests.server.helpers import hitl_runtime, serve

pytestmark = pytest.mark.anyio


async def test_the_collectors_thresholds_are_raised_while_apps_serve_and_restored_after(hitl_agent: Agent) -> None:
    before = gc.get_threshold()
    async with serve(hitl_runtime(hitl_agent)) as first:
        async with first.client() as client:
            assert (await client.get("/health")).status_code == 200
        raised = gc.get_threshold()
        assert raised[0] >= 10 * before[0]
        async with serve(hitl_runtime(hitl_agent)) as second:
            async with second.client() as client:
                assert (await client.get("/health")).status_code == 200
        assert gc.get_threshold() == raised  # another app still serves
    assert gc.get_threshold() == before
