"""Where an eval's sessions run: the `EvalBackend` protocol, in process or over HTTP.

The driver (`t`) only needs to create sessions, send messages, answer requests and read a
session's stored events, so the same eval runs against an in-process `Runtime` (the default,
`InProcessBackend`), a running server (`HttpBackend`, `eve-py eval --url`), or any other
implementation of these two protocols. Over HTTP the conversation cannot be read, so the
driver rebuilds the results of client-resolved calls from the events (see `eve_py.evals._calls`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from eve_py.agent import Agent
from eve_py.client import Client
from eve_py.harness import Runtime, Session
from eve_py.models import Model
from eve_py.protocol import AnyEvent
from eve_py.protocol.messages import Message
from eve_py.protocol.requests import InputResponse
from eve_py.protocol.turns import TurnResult
from eve_py.sessions import MemorySessionStore

__all__ = ("EvalBackend", "EvalSession", "HttpBackend", "HttpSession", "InProcessBackend", "InProcessSession")


class EvalSession(Protocol):
    """One session an eval drives."""

    @property
    def id(self) -> str:
        """The session id."""
        ...

    async def send(self, message: str) -> TurnResult:
        """Send a user message; returns when the turn completes, parks or fails."""
        ...

    async def respond(self, responses: Sequence[InputResponse]) -> TurnResult:
        """Answer open input requests; returns when the turn completes, parks or fails."""
        ...

    async def events(self, start: int) -> list[AnyEvent]:
        """The session's stored events from index `start` on, oldest first."""
        ...

    async def conversation(self) -> list[Message] | None:
        """The session's messages, or None where they cannot be read."""
        ...


class EvalBackend(Protocol):
    """Creates the sessions of one eval."""

    @property
    def label(self) -> str:
        """What the sessions run against, for reports (e.g. `in-process`)."""
        ...

    async def create_session(self) -> EvalSession:
        """A new, idle session."""
        ...


class InProcessSession:
    """An `EvalSession` on an in-process `Session`."""

    def __init__(self, session: Session) -> None:
        self._session = session

    @property
    def id(self) -> str:
        """The session id."""
        return self._session.id

    async def send(self, message: str) -> TurnResult:
        """Send a user message and run the turn."""
        return await self._session.send(message)

    async def respond(self, responses: Sequence[InputResponse]) -> TurnResult:
        """Answer open input requests and run the turn on."""
        return await self._session.respond(responses)

    async def events(self, start: int) -> list[AnyEvent]:
        """The stored events from index `start` on."""
        return list[AnyEvent](await self._session.events(start))

    async def conversation(self) -> list[Message]:
        """The stored conversation (a parked step is not in it yet)."""
        await self._session.refresh()
        return await self._session.messages()


class InProcessBackend:
    """Runs an eval's sessions in this process, on a private in-memory store.

    Args:
        agent: The app's agent (`load_agent(app_dir)`).
        model: The model every session uses.
    """

    def __init__(self, agent: Agent, model: Model) -> None:
        self._runtime = Runtime(agent, model=model, store=MemorySessionStore())

    @property
    def label(self) -> str:
        """`in-process`."""
        return "in-process"

    async def create_session(self) -> InProcessSession:
        """A new session in this backend's store."""
        return InProcessSession(await self._runtime.create_session())


class HttpSession:
    """An `EvalSession` on a session of a running server, through `eve_py.client.Client`."""

    def __init__(self, client: Client, session_id: str) -> None:
        self._client = client
        self._id = session_id

    @property
    def id(self) -> str:
        """The session id."""
        return self._id

    async def send(self, message: str) -> TurnResult:
        """Send a user message and follow the stream until the turn settles."""
        return await self._client.result(await self._client.send(self._id, message))

    async def respond(self, responses: Sequence[InputResponse]) -> TurnResult:
        """Answer open input requests and follow the stream until the turn settles."""
        return await self._client.result(await self._client.respond(self._id, responses))

    async def events(self, start: int) -> list[AnyEvent]:
        """The stored events from index `start` on (up to the stored tail)."""
        return [event async for event in self._client.stream(self._id, start, follow=False)]

    async def conversation(self) -> None:
        """None: the HTTP API does not expose the conversation."""
        return None


class HttpBackend:
    """Runs an eval's sessions on a running eve-py (or eve) server.

    Args:
        client: A client for the server (its token is the sessions' owner).
        label: How reports name the backend; defaults to `http`.
    """

    def __init__(self, client: Client, *, label: str = "http") -> None:
        self._client = client
        self._label = label

    @property
    def label(self) -> str:
        """The server, as given."""
        return self._label

    async def create_session(self) -> HttpSession:
        """A new session on the server (created without a message)."""
        accepted = await self._client.create_session()
        return HttpSession(self._client, accepted.session_id)
