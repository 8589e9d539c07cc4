"""The named operations a route runs on a session in the background: `Send`, `Answer` and `Resume`.

A route builds one from the request's body and hands it to `TurnRunner` (`eve_py.server._turns`),
which runs it as a task and passes the `acknowledge` callback the session calls once the work's
effect is durable; its `name` is what the server's log calls the work. Each calls one
`Session` method, which commits through the session store:

- `Send`: `Session.send` starts a turn (dismissing an open batch first).
- `Answer`: `Session.respond`, where answers are accepted (`TurnUnit.accept`, checked by
  `eve_py.harness._accept`) and the batch settles once every approval is in (`TurnUnit.settle`).
- `AnswerThenSend`: `Session.respond`, then `Session.send` once that turn stops (an AG-UI run
  that answers client tools and sends a new message).
- `Resume`: `Session.resume`, finishing a turn whose worker stopped.
- `Expire`: `Session.expire`, requests past their deadline (found by the expiry sweep).

Cancel, clear and reset are not run in the background: their routes call `Session.cancel`,
`Session.clear` and `Session.reset` directly.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar, TypeAlias

from eve_py._json import JsonObject
from eve_py.harness import Session
from eve_py.harness._unit import Acknowledge
from eve_py.protocol.requests import InputResponse
from eve_py.protocol.turns import ClientTool, TurnResult
from eve_py.server._bodies import ClientContext

__all__ = ("Answer", "AnswerThenSend", "Expire", "Operation", "Resume", "Send")


@dataclass(frozen=True, slots=True)
class Send:
    """`POST /session` or `/session/{id}` with a `message`: a new turn."""

    name: ClassVar[str] = "send"
    parts: list[str]
    client_context: ClientContext | None
    output_schema: JsonObject | None
    delivery_id: str
    client_tools: list[ClientTool] | None = None
    """Client-resolved tools offered for this turn only (AG-UI's frontend tools)."""

    async def __call__(self, session: Session, acknowledge: Acknowledge | None = None) -> TurnResult:
        """Send the message (see `Session.send`)."""
        return await session.send(
            self.parts,
            client_context=self.client_context,
            output_schema=self.output_schema,
            delivery_id=self.delivery_id,
            client_tools=self.client_tools,
            acknowledge=acknowledge,
        )


@dataclass(frozen=True, slots=True)
class Answer:
    """`POST /session/{id}` with `inputResponses`: answers to the parked batch."""

    name: ClassVar[str] = "answer"
    responses: list[InputResponse]
    client_context: ClientContext | None
    output_schema: JsonObject | None
    by: str
    """Who answers: the caller's token name."""
    settle: bool = True
    """False: keep the batch open though every approval is answered (see `Session.respond`)."""
    delivery_id: str | None = None
    """The delivery the answers came as, when the request named one (an `idempotencyKey`)."""

    async def __call__(self, session: Session, acknowledge: Acknowledge | None = None) -> TurnResult:
        """Answer the open requests (see `Session.respond`)."""
        return await session.respond(
            self.responses,
            client_context=self.client_context,
            output_schema=self.output_schema,
            settle=self.settle,
            by=self.by,
            delivery_id=self.delivery_id,
            acknowledge=acknowledge,
        )


@dataclass(frozen=True, slots=True)
class AnswerThenSend:
    """Answers to the parked batch, then a new message once the turn they continue stops."""

    name: ClassVar[str] = "answer-then-send"
    answer: Answer
    send: Send

    async def __call__(self, session: Session, acknowledge: Acknowledge | None = None) -> TurnResult:
        """Answer (see `Session.respond`), then send (see `Session.send`; a batch parked again is dismissed)."""
        await self.answer(session, acknowledge)
        return await self.send(session)


@dataclass(frozen=True, slots=True)
class Resume:
    """A turn whose worker stopped, found by any request that reads the session: finished here."""

    name: ClassVar[str] = "resume"

    async def __call__(self, session: Session, acknowledge: Acknowledge | None = None) -> TurnResult:
        """Finish the turn (see `Session.resume`)."""
        return await session.resume(acknowledge=acknowledge)


@dataclass(frozen=True, slots=True)
class Expire:
    """A session waiting on a request past its deadline, found by the expiry sweep: expired here."""

    name: ClassVar[str] = "expire"

    async def __call__(self, session: Session, acknowledge: Acknowledge | None = None) -> TurnResult | None:
        """Expire the due requests and go on with the turn (see `Session.expire`)."""
        return await session.expire(acknowledge=acknowledge)


Operation: TypeAlias = Send | Answer | AnswerThenSend | Resume | Expire
"""What a request asks the runner to do with a session."""
