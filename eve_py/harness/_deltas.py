"""`DeltaWriter`: a streaming model's text and tool-input deltas, stored as events while the step runs.

eve's wire counts every streamed event in `startIndex`, so deltas are stored like every other
event (`message.appended`, `action.input.appended`), never sent around the log. Writes do not
wait on each other: deltas that arrive while a write is in progress are coalesced into one
event per run of the same kind (and call), as eve does when its stream writer is busy, so a
fast model costs a bounded number of commits, not one per token.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from contextlib import asynccontextmanager

import anyio
from anyio.abc import TaskGroup

from eve_py.models import ModelDelta
from eve_py.protocol import Event
from eve_py.protocol.payloads import ActionInputAppendedData, MessageAppendedData
from eve_py.protocol.turns import TurnState

__all__ = ("DeltaWriter", "coalesce")


class DeltaWriter:
    """Stores one step's deltas through its unit of work's writes, in the order they arrived.

    Args:
        append: Writes events that change nothing else (`TurnUnit.append`: each write renews the
            lease and reaches the listener).
        turn: The turn the step belongs to (its coordinates and delivery ids).
        step_index: The step's index.
        lead: Events that must precede the first delta (`step.started`); the first write takes
            them out of this list, so what is left in it afterwards is still unwritten.
    """

    def __init__(
        self, append: Callable[[list[Event]], Awaitable[object]], turn: TurnState, step_index: int, *, lead: list[Event]
    ) -> None:
        self._append = append
        self._turn = turn
        self._step_index = step_index
        self._lead = lead
        self._buffer: list[ModelDelta] = []
        self._tool_names: dict[str, str] = {}
        self._wake = anyio.Event()
        self._closed = False
        self._group: TaskGroup | None = None
        self._started = False

    async def on_delta(self, delta: ModelDelta) -> None:
        """Queue one delta for the next write (the model never waits for the store)."""
        if delta.call_id is not None and delta.tool_name:
            # Providers name the tool once, often in a piece with no argument text yet.
            self._tool_names[delta.call_id] = delta.tool_name
        if delta.text:
            self._buffer.append(delta)
            self._wake.set()
            if self._group is not None and not self._started:
                # The writer task starts with the first delta: a model that does not stream costs none.
                self._started = True
                self._group.start_soon(self._run)

    @asynccontextmanager
    async def writing(self) -> AsyncIterator[DeltaWriter]:
        """Write deltas in the background while the block runs; on exit, every queued one is stored."""
        try:
            async with anyio.create_task_group() as group:
                self._group = group
                try:
                    yield self
                finally:
                    self._closed = True
                    self._wake.set()
                    self._group = None
        except BaseExceptionGroup as group:
            # The model's own error, not a group: the step fails with what the provider said.
            if len(group.exceptions) == 1:
                raise group.exceptions[0] from None
            raise

    async def _run(self) -> None:
        while True:
            await self._wake.wait()
            self._wake = anyio.Event()
            while self._buffer:
                batch, self._buffer = self._buffer, []
                events = [*self._lead, *coalesce(self._turn, self._step_index, batch, self._tool_names)]
                # A write under way finishes even if the step is cancelled: the unit must know
                # what it stored, or the turn's next write would conflict with its own.
                with anyio.CancelScope(shield=True):
                    await self._append(events)
                self._lead.clear()
            if self._closed:
                return


def coalesce(turn: TurnState, step_index: int, deltas: list[ModelDelta], tool_names: Mapping[str, str]) -> list[Event]:
    """One event per run of adjacent deltas of the same kind (and tool call), texts joined.

    `tool_names` maps call ids to the tool names the stream gave for them.
    """
    runs: list[tuple[ModelDelta, list[str]]] = []
    for delta in deltas:
        if runs and runs[-1][0].kind == delta.kind and runs[-1][0].call_id == delta.call_id:
            runs[-1][1].append(delta.text)
        else:
            runs.append((delta, [delta.text]))
    coords = {"sequence": turn.sequence, "turn_id": turn.turn_id, "step_index": step_index}
    events: list[Event] = []
    for first, texts in runs:
        text = "".join(texts)
        if first.kind == "text":
            events.append(turn.stamp(MessageAppendedData(**coords, message_delta=text)))
        else:
            appended = ActionInputAppendedData(
                **coords,
                call_id=first.call_id or "",
                tool_name=first.tool_name or tool_names.get(first.call_id or "", ""),
                input_text_delta=text,
            )
            events.append(turn.stamp(appended))
    return events
