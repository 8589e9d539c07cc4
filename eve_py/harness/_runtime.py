"""`Runtime`: an agent, a model and a session store; it creates sessions and opens stored ones.

```python
runtime = Runtime(load_agent("fixtures/agent-tools-hitl"), model=MockModel(responder),
                  store=SQLiteSessionStore("sessions.db"))
session = await runtime.create_session()
result = await session.send("Pick a template")          # TurnResult, maybe status "waiting"
result = await session.respond([InputResponse(request_id=..., option_id="blue")])
session = await runtime.get_session(session.id)         # also from another process
result = await runtime.answer_with_link(link.token, {"optionId": "approve"})  # a link's holder
```

The `Session` handles it returns (`eve_py.harness._session`) send messages and answer requests.
While `async with runtime.expiring():` runs (a server does), requests whose deadline passed are
expired in the background (`eve_py.harness._expire`).
"""

from __future__ import annotations

import time
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from contextlib import asynccontextmanager
from typing import Any

import anyio

from eve_py._version import version
from eve_py.agent import Agent
from eve_py.harness._commit import Committed, EventListener, notify
from eve_py.harness._conversation import Conversation, ConversationCache
from eve_py.harness._execute import LiveListener, ModelChannel
from eve_py.harness._expire import Sweeper
from eve_py.harness._links import answer_with_link
from eve_py.harness._session import Session
from eve_py.harness._turns import ActiveTurns
from eve_py.harness._unit import UnitParts
from eve_py.models import Model
from eve_py.models._registry import choose_model_spec, resolve_model
from eve_py.protocol import Event, new_event, new_id, now_iso
from eve_py.protocol.payloads import RuntimeIdentity, SessionStartedData
from eve_py.protocol.requests import InputResponse
from eve_py.protocol.turns import TurnResult
from eve_py.sessions import MemorySessionStore, SessionRecord, SessionStore

__all__ = ("Runtime", "runtime_version")


class Runtime:
    """Runs an agent's sessions against a model and a session store.

    Args:
        agent: The agent (`load_agent(app_dir)` or `Agent.from_definitions(...)`).
        model: Overrides the agent's model: a `Model` or a model string (`"provider/model"`,
            `"anthropic:..."`, `"openai:..."`, `"mock"`; see `eve_py.models._registry`). Without
            it, the `EVE_MODEL` environment variable is used if set, else the agent's own model.
        store: Where sessions live; defaults to a new `MemorySessionStore`.
        max_steps: Most model steps a turn takes in a row without a person's input (an answered
            batch starts the count again); defaults to the agent's `max_steps`.
        lease_s: How long a running turn's worker counts as alive after its last write or
            heartbeat (every `lease_s / 3` while a step runs), in seconds; `resume()` elsewhere
            takes the turn over only after that.
        on_event: Called with each committed write (`Committed`: session id, the log index of its
            first event, its events) right after it is stored (sync or async).
        on_live: Called (synchronously: it must not block) with the session id and each event a
            running tool reports (`action.progress`, `action.log`) as it happens; the same event
            (same id) is committed later with the call's result and reaches `on_event` then.

    Raises:
        ModelConfigurationError: The chosen model string names no provider, or its API key is not set.
    """

    def __init__(
        self,
        agent: Agent,
        *,
        model: Model | str | None = None,
        store: SessionStore | None = None,
        max_steps: int | None = None,
        on_event: EventListener | None = None,
        lease_s: float = 120.0,
        on_live: LiveListener | None = None,
    ) -> None:
        self.agent = agent
        spec = choose_model_spec(model, agent.model)  # explicit > EVE_MODEL > define_agent(model=...)
        self._model: Model | None = resolve_model(spec, app_dir=agent.app_dir) if spec is not None else None
        self._owns_model = isinstance(spec, str)
        self.store: SessionStore = store if store is not None else MemorySessionStore()
        self.max_steps = max_steps if max_steps is not None else agent.max_steps
        self.on_event = on_event
        self.on_live = on_live
        self.lease_s = lease_s
        self._listeners: list[EventListener] = []
        self._live_listeners: list[LiveListener] = []
        self._parts: tuple[tuple[object, ...], UnitParts] | None = None
        """The last `UnitParts` made, and what it was made of (made again when any of that changes)."""
        self._turns = ActiveTurns()
        self.conversations = ConversationCache()
        """Recent sessions' conversations, so a resumed session reads only what its log gained."""
        self.sweeper = Sweeper(self.store, self._expire_one)
        """The expiry sweep (`expiring` runs it); its `interval_s`, `batch` and `concurrency` may be tuned."""

    @property
    def model(self) -> Model:
        """The model every step uses.

        Raises:
            ModelConfigurationError: Neither the runtime nor the agent names a model.
        """
        if self._model is None:
            return resolve_model(None)
        return self._model

    async def aclose(self) -> None:
        """Close the model's HTTP client if this runtime built the model from a string, and the
        sessions of the agent's MCP servers (`agent/connections/`) in this event loop.

        A `Model` instance you passed is yours to close; the store is never closed here.
        """
        close = getattr(self._model, "aclose", None) if self._owns_model else None
        if close is not None:
            await close()
        for plan in {id(tool.plan): tool.plan for tool in self.agent.tools.values()}.values():
            close_plan = getattr(plan, "aclose", None)  # a connected server's tool: its shared session
            if close_plan is not None:
                await close_plan()

    async def create_session(self, session_id: str | None = None, *, durable: bool | None = None) -> Session:
        """Create and store a new, idle session (emits `session.started`).

        Args:
            session_id: The new session's id (default: a new `ses_...` id).
            durable: Sync the session's write to disk before returning. Default: only when the
                runtime has an event listener (a server, which acknowledges the session at
                once). False is for a caller whose next write is a durable one that syncs this
                one too (the server's `POST /session` with a first message).

        Raises:
            SessionConflictError: `session_id` is taken.
        """
        now = now_iso()
        record = SessionRecord(id=session_id or new_id("ses"), created_at=now, updated_at=now)
        identity = RuntimeIdentity(agent_id=self.agent.name, agent_name=self.agent.name, eve_version=runtime_version())
        events: list[Event] = [new_event(SessionStartedData(runtime=identity))]
        # Without a listener nobody outside this call hears of the session before its first turn,
        # whose durable write syncs it too; a server (a listener) acknowledges it at once.
        listener = self._listener()
        if durable is None:
            durable = listener is not None
        stored = await self.store.create(record, events, durable=durable)
        self.conversations.remember(stored.id, Conversation([], start=stored.history_start))  # no read to start
        await notify(listener, Committed(record.id, 0, events))
        return self._session(stored)

    async def get_session(self, session_id: str) -> Session:
        """Open a stored session (possibly created by another process).

        When no expiry sweep runs here (`expiring`) and a request the session waits on is past its
        deadline, it is expired first and the turn goes on (`Session.expire`).

        Raises:
            SessionNotFoundError: No such session.
            SessionConflictError: Expiring it, another writer wrote first (open it again).
        """
        session = self._session(await self.store.load(session_id))
        deadline = session.record.input_deadline
        if deadline is not None and deadline <= time.time() and not self.sweeper.running:
            await session.expire()
        return session

    async def answer_with_link(self, token: str, response: InputResponse | Mapping[str, Any]) -> TurnResult:
        """Answer the one request an answer link names, as the link's holder (`answeredBy: "link"`).

        `token` is `AnswerLink.token` from `Session.answer_link`, made by any process on this store.
        `response` may leave `requestId` out: the link fills it in. Returns as `Session.respond` does.

        Raises:
            LinkInvalidError: The token is not genuine, or the answer names another request.
            LinkExpiredError: The link's time is up.
            SessionNotFoundError: Its session is gone.
            RequestAlreadyAnsweredError: The request was answered (a link answers once) or withdrawn.
            RequestExpiredError: The request's deadline passed.
            UnknownRequestError: The session holds no such request.
            InvalidAnswerError: The answer does not fit the request; the request stays open.
        """
        return await answer_with_link(self, token, response)

    async def expire_due(self) -> int:
        """Expire every session waiting on a request past its deadline (at most `sweeper.batch` of them).

        Returns:
            How many due sessions were found.
        """
        return await self.sweeper.sweep()

    @asynccontextmanager
    async def expiring(self, expire_one: Callable[[str], Awaitable[object]] | None = None) -> AsyncIterator[None]:
        """Expire requests in the background while the block runs: at once, then every `sweeper.interval_s`.

        A running server does this for its whole life, so a request is expired within about a
        second of its deadline, and deadlines that passed while no process ran are met as it starts.

        Args:
            expire_one: How one session is expired (the server runs it as its own background
                work); `Session.expire` by default.
        """
        previous = self.sweeper.expire_one
        if expire_one is not None:
            self.sweeper.expire_one = expire_one
        try:
            async with anyio.create_task_group() as group:
                await group.start(self.sweeper.run)
                try:
                    yield
                finally:
                    group.cancel_scope.cancel()
        finally:
            self.sweeper.expire_one = previous

    async def _expire_one(self, session_id: str) -> None:
        record = await self.store.load(session_id)
        await self._session(record)._expire_from(record)

    def add_listener(self, on_event: EventListener | None = None, on_live: LiveListener | None = None) -> None:
        """Also tell `on_event` about every committed write and `on_live` about every live report,
        after `Runtime(on_event=..., on_live=...)`'s own (a server's hub listens this way)."""
        if on_event is not None:
            self._listeners.append(on_event)
        if on_live is not None:
            self._live_listeners.append(on_live)
        self._parts = None

    def _session(self, record: SessionRecord) -> Session:
        return Session(
            record,
            store=self.store,
            conversations=self.conversations,
            parts=self._unit_parts,
            turns=self._turns,
            sweeper=self.sweeper,
        )

    def _unit_parts(self) -> UnitParts:
        """What this call's unit of work needs (read per call: `on_event`, `model` may be set since)."""
        model = self.model
        key = (model, self.store, self.on_event, self.on_live, self.max_steps, self.lease_s)
        cached = self._parts
        if cached is not None and cached[0] == key:
            return cached[1]
        parts = UnitParts(
            agent=self.agent,
            model=model,
            store=self.store,
            max_steps=self.max_steps,
            listener=self._listener(),
            lease_s=self.lease_s,
            conversations=self.conversations,
            channel=ModelChannel(model, self._live()),
            turns=self._turns,
        )
        self._parts = (key, parts)
        return parts

    def _listener(self) -> EventListener | None:
        listeners = [listener for listener in (self.on_event, *self._listeners) if listener is not None]
        if len(listeners) <= 1:
            return listeners[0] if listeners else None
        return _fan_out(listeners)

    def _live(self) -> LiveListener | None:
        listeners = [listener for listener in (self.on_live, *self._live_listeners) if listener is not None]
        if len(listeners) <= 1:
            return listeners[0] if listeners else None

        def live(session_id: str, event: Event) -> None:
            for listener in listeners:
                listener(session_id, event)

        return live


def _fan_out(listeners: list[EventListener]) -> EventListener:
    """One listener that tells each of `listeners` in turn (each one's failure logged, as `notify` does)."""

    async def listener(committed: Committed) -> None:
        for each in listeners:
            await notify(each, committed)

    return listener


def runtime_version() -> str:
    """What `session.started` names as the serving runtime (`eve-py/<version>`)."""
    return f"eve-py/{version()}"
