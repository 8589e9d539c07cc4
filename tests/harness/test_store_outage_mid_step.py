"""A store outage during a model step (the step's streamed text cannot be written) leaves the turn
for recovery, as a crash would, instead of recording it as the model's failure."""

from __future__ import annotations

from collections.abc import Sequence

import pytest

from eve_py import Agent, Runtime
from eve_py.errors import StoreUnavailableError
from eve_py.harness import Committed
from eve_py.models import ModelDelta, ModelRequest, ModelResponse
from eve_py.protocol import Event, TurnFailed
from eve_py.sessions import MemorySessionStore
from eve_py.sessions._forwarding import ForwardingStore
from eve_py.sessions._record import SessionRecord

pytestmark = pytest.mark.anyio


class Flaky(ForwardingStore):
    """Memory underneath; once `down`, the next commit fails as a PostgreSQL outage does, and the
    database is back for the one after (so a failure could be recorded, as it was)."""

    def __init__(self) -> None:
        super().__init__(MemorySessionStore())
        self.down = False

    async def commit(
        self, record: SessionRecord, events: Sequence[Event], *args: object, **kwargs: object
    ) -> SessionRecord:
        if self.down:
            self.down = False
            raise StoreUnavailableError("the session store's database cannot be reached")
        return await super().commit(record, events, *args, **kwargs)  # type: ignore[arg-type]


class Streaming:
    """Streams "Hel", "lo": the store goes down on the first delta's way to it."""

    name = "streaming"

    def __init__(self, store: Flaky) -> None:
        self.store = store
        self.calls = 0

    async def request(self, request: ModelRequest) -> ModelResponse:
        assert request.on_delta is not None
        self.calls += 1
        self.store.down = self.calls == 1  # the first step's first write fails
        await request.on_delta(ModelDelta(kind="text", text="Hel"))
        await request.on_delta(ModelDelta(kind="text", text="lo"))
        return ModelResponse(text="Hello")


async def test_an_outage_mid_step_leaves_the_turn_running_for_recovery() -> None:
    store = Flaky()
    seen: list[Committed] = []

    async def listen(committed: Committed) -> None:  # someone listens: the deltas are stored as they come
        seen.append(committed)

    runtime = Runtime(Agent.from_definitions({}), model=Streaming(store), store=store, on_event=listen)
    session = await runtime.create_session()
    with pytest.raises(StoreUnavailableError):
        await session.send("hi")
    stored = await store.load(session.id)
    assert stored.status == "running", "left for recovery, not failed"
    assert not any(isinstance(e, TurnFailed) for e in await store.read_events(session.id))
    done = await (await runtime.get_session(session.id)).resume(force=True)
    assert done.status == "completed" and done.message == "Hello"
