"""`eve_py.client.Client.stream(live=True)`: a running tool's reports arrive while it runs, each once.

The tool reports, then waits until the test has read the reports from the client: reports that
came only with the call's result would leave it waiting, and the test would time out.
"""

from __future__ import annotations

import anyio
import pytest

from eve_py.client import Client
from eve_py.protocol import AnyEvent
from tests.server.helpers import ALICE, serve
from tests.server.test_live_reports import Gated

pytestmark = pytest.mark.anyio


async def test_a_live_stream_yields_reports_as_they_happen_and_skips_their_stored_copies() -> None:
    gated = Gated()
    async with serve(gated.runtime()) as served, Client(served.base, token=ALICE) as client:
        accepted = await client.create_session("index the docs")
        assert accepted.start_index is not None
        seen: list[AnyEvent] = []
        with anyio.fail_after(10):
            async for event in client.stream(accepted.session_id, accepted.start_index, live=True):
                gated.ready.set()  # connected: the reports from here on are made while it reads
                seen.append(event)
                if event.type == "action.log":  # the progress and the log entry, while the call runs
                    assert "action.result" not in [e.type for e in seen]
                    gated.gate.set()
                if event.type == "session.waiting":
                    break
        stored = [e async for e in client.stream(accepted.session_id, accepted.start_index, follow=False)]

    def reports(events: list[AnyEvent]) -> list[tuple[str, str]]:
        return [(e.type, e.meta.id) for e in events if e.type in ("action.progress", "action.log") and e.meta]

    assert len(reports(seen)) == 3 and reports(seen) == reports(stored)  # each once, the same events
    assert [e.type for e in seen if e.type not in ("action.progress", "action.log")] == [
        e.type for e in stored if e.type not in ("action.progress", "action.log")
    ]
    first_result = [e.type for e in seen].index("action.result")
    assert [e.type for e in seen[:first_result]].count("action.progress") == 2  # "listing" and "done"
