"""`Eve1Client`: the Python client of eve 1.0's wire (`/eve/v1`, stream version 27), after eve 1.0.1's own.

```python
async with Eve1Client("http://127.0.0.1:8000", token="s3cret") as client:
    session, delivery = await client.create_session("help me pick a template")
    parked = await delivery.result()                    # status "awaiting-input"
    picker = parked.interactions[0]
    answered = await session.respond([Answer(interaction_id=picker.interaction_id, option_id="tpl_blue")])
    print((await answered.result()).reply)              # "Recorded your pick: tpl_blue."
```

Every accepted message, answer and control is a `Delivery`: the server admits it
(`delivery.admitted`) and settles it (`delivery.settled`) on the session's stream, and
`Delivery.stream()` reads the facts from the line that admits it to the line that settles it (eve's
`deliveryEvents`), which `Delivery.result()` sums up as eve's `turnSummary` does. A `ClientSession`
keeps a cursor (`stream_index`, eve's `streamIndex`): the lines it has read, so a delivery's read
skips them. Line N of the stream is stored event N, so a read resumes from a line number;
transport records (`$eve`: heartbeat, position, lease-ended, ended) move the cursor and are never
yielded. Errors are `eve_py.client.Client`'s: eve's `409 session_not_active` (an unknown or ended
session) is `SessionEndedError`, a message refused with `session_not_ready` is sent again for 20 s.
"""

from __future__ import annotations

import json
from collections.abc import AsyncGenerator, Mapping, Sequence
from contextlib import aclosing
from typing import Any

import anyio
import httpx

from eve_py._json import JsonSchema, JsonValue
from eve_py.client._client import HttpApi, StreamError, retry_not_ready, turn_body
from eve_py.client._eve1_results import (
    Answer,
    DeliveryResult,
    Fact,
    Interaction,
    awaited,
    facts_of,
    ignored_settlement,
    opened_in,
    summarize,
)
from eve_py.errors import ApiError, SessionEndedError

__all__ = ("ClientSession", "Delivery", "Eve1Client")

_STREAM_VERSION = "27"
_IDLE_S = 30.0
"""A stream silent this long (the server sends a heartbeat every few seconds) is treated as broken."""
_IGNORED_CANCEL = "dlv_cancel_ignored"
"""How eve-py's server names the receipt of a cancel that stopped nothing: it stores no delivery for it."""

ClientContext = str | Sequence[str] | Mapping[str, JsonValue]


class Eve1Client(HttpApi):
    """An async client for a server on eve 1.0's wire: `eve-py serve`, or eve 1.0's own.

    Args:
        base_url: The server, e.g. `http://127.0.0.1:8000` (the `/eve/v1` prefix is added).
        token: The bearer token; None reads `EVE_API_TOKEN` (the first one, if it lists several).
        timeout_s: Timeout of ordinary requests, in seconds (streams wait as long as the session lives).
        reconnects: How many times a stream reconnects in a row after the connection breaks.
        http: An `httpx.AsyncClient` to use instead of a new one (it is not closed by `aclose`).
    """

    prefix = "/eve/v1"

    async def create_session(
        self,
        message: str | Sequence[str],
        *,
        client_context: ClientContext | None = None,
        output_schema: JsonSchema | None = None,
    ) -> tuple[ClientSession, Delivery]:
        """Create a session with a first message (text, or text parts): the session and the message's delivery.

        Raises:
            ApiError: The server refused the request (`400` for an empty message, ...).
            AuthenticationError: A missing or wrong token.
        """
        response = await self._request("POST", "/session", turn_body(message, client_context, output_schema))
        data = response.json()
        session = ClientSession(self, data["sessionId"])
        return session, session._delivery(response, 0)

    def attach(self, session_id: str, *, stream_index: int = 0) -> ClientSession:
        """A handle on an existing session (no request is made), with its cursor where a saved one was."""
        return ClientSession(self, session_id, stream_index)

    async def _lines(
        self, session_id: str, start: int, *, follow: bool
    ) -> AsyncGenerator[tuple[int, list[Fact]], None]:
        """The session's stream lines from line `start` (negative: from the end): each line's number and facts.

        Reconnects from its position when a response ends or breaks; ends at `stream.ended` (the
        session ended), or at the stored tail with `follow=False`.

        Raises:
            SessionNotFoundError: No such session (or another principal's).
            StreamError: The connection broke more than `reconnects` times in a row.
            ApiError: The server speaks another stream version (`stream_version_unsupported`), or
                sent a line that is neither a record nor JSON (`bad_stream`).
        """
        cursor, failures = start, 0
        params: dict[str, str | int] = {} if follow else {"follow": "false"}
        while True:
            try:
                async with self._open_stream(session_id, {"startIndex": cursor, **params}, read_s=_IDLE_S) as response:
                    version = response.headers.get("x-eve-stream-version")
                    if version != _STREAM_VERSION:
                        raise ApiError(
                            f"The server streams version {version!r}; this client reads eve 1.0's {_STREAM_VERSION}.",
                            status=response.status_code,
                            code="stream_version_unsupported",
                        )
                    cursor = int(response.headers.get("x-eve-start-index", cursor))  # a negative start, resolved
                    async for text in response.aiter_lines():
                        record = _record(text, response.status_code) if text.strip() else None
                        if record is None:
                            continue
                        transport = record.get("$eve")
                        if transport == "stream.ended":
                            return
                        if transport == "position" and isinstance(record.get("next"), int):
                            cursor = max(cursor, record["next"])
                        if transport is not None:
                            continue  # a heartbeat, the end of a lease (reconnect below), or a newer record
                        failures = 0
                        yield cursor, facts_of(record, cursor)
                        cursor += 1
                    if not follow:
                        return
            except httpx.TransportError as exc:
                failures += 1
                await self._back_off(failures, exc, f"stream of session {session_id!r}")


class ClientSession:
    """A handle on one session (eve's `ClientSession`): its messages, answers, controls and stream.

    It keeps a cursor, `stream_index`: the lines read through it (by `stream()` or a delivery's
    read), so a later delivery's read starts there instead of at the first line.
    """

    def __init__(self, client: Eve1Client, session_id: str, stream_index: int = 0) -> None:
        self._client = client
        self.session_id = session_id
        self._stream_index = stream_index

    def __repr__(self) -> str:
        return f"ClientSession(session_id={self.session_id!r}, stream_index={self._stream_index})"

    @property
    def stream_index(self) -> int:
        """The line after the last one read through this handle: save it to `attach` again later."""
        return self._stream_index

    async def send(
        self,
        message: str | Sequence[str],
        *,
        client_context: ClientContext | None = None,
        output_schema: JsonSchema | None = None,
        idempotency_key: str | None = None,
    ) -> Delivery:
        """Send a follow-up message (text, or text parts); its delivery.

        A message refused because a turn is still running (409 `session_not_ready`) is sent again,
        backing off from 0.25 s to 2 s, for up to 20 seconds, as eve's client does. A repeat with
        the same `idempotency_key` (1-256 characters) gets the first one's delivery and runs nothing.

        Raises:
            SessionEndedError: The session ended, or there is no such session (`409 session_not_active`).
            SessionStateError: A turn was still running after 20 seconds.
        """
        body = turn_body(message, client_context, output_schema)
        if idempotency_key is not None:
            body["idempotencyKey"] = idempotency_key
        start = self._stream_index
        response = await retry_not_ready(lambda: self._client._request("POST", f"/session/{self.session_id}", body))
        return self._delivery(response, start)

    async def respond(
        self, answers: Sequence[Answer | Mapping[str, Any]], *, idempotency_key: str | None = None
    ) -> Delivery:
        """Answer open interactions; the answers' delivery (it settles when the turn they resume pauses or ends).

        Args:
            answers: `Answer`s, or dicts of its fields (`{"interaction_id": ..., "option_id": ...}`).
            idempotency_key: A repeat with the same key gets the first one's delivery and runs nothing.

        Raises:
            ValueError: No answers.
            TypeError: A dict with a key `Answer` has no field for.
            InvalidAnswerError: An answer does not fit its interaction (nothing changed).
            UnknownRequestError: An interaction that is not open.
            RequestAlreadyAnsweredError: An interaction answered before.
            SessionNotWaitingError: The session waits on no interaction.
            SessionEndedError: The session ended, or there is no such session.
        """
        if not answers:
            raise ValueError("respond() needs at least one answer.")
        wire = [(a if isinstance(a, Answer) else Answer(**a)).to_wire() for a in answers]
        body: dict[str, Any] = {"answers": wire}
        if idempotency_key is not None:
            body["idempotencyKey"] = idempotency_key
        start = self._stream_index
        return self._delivery(await self._client._request("POST", f"/session/{self.session_id}", body), start)

    async def cancel(self, turn_id: str | None = None) -> Delivery:
        """Cancel the running or parked turn (only turn `turn_id`, when given); the cancel's delivery.

        It settles `applied` in the line where the turn settles `cancelled`. A cancel that stops
        nothing settles `ignored` at once.

        Raises:
            SessionEndedError: The session ended, or there is no such session.
        """
        return await self._control("cancel", {} if turn_id is None else {"turnId": turn_id})

    async def clear(self) -> Delivery:
        """Drop the session's history (the next turn starts afresh); the clear's delivery, settled `applied`.

        Raises:
            SessionEndedError: The session ended, or there is no such session.
            SessionStateError: A turn is running (clear once it settles).
        """
        return await self._control("clear", {})

    async def end(self, reason: str | None = None) -> Delivery:
        """End the session for good; the end's delivery (`result().session_ended` is True).

        Raises:
            SessionEndedError: The session ended before, or there is no such session.
            SessionStateError: A turn was running: it is being cancelled, end again.
        """
        return await self._control("end", {} if reason is None else {"reason": reason})

    async def prewarm(self) -> str:
        """eve's prewarm: `ready` for a live session, `no_active_session` for an ended or unknown one."""
        return str((await self._client._request("POST", f"/session/{self.session_id}")).json()["status"])

    async def stream(self, start_index: int | None = None, *, follow: bool = True) -> AsyncGenerator[Fact, None]:
        """The session's facts from line `start_index` (None: from `stream_index`; negative: from the end).

        Follows new lines as they are written until the session ends (`follow=False`: until the
        stored tail); stop reading where you need to. A read from the end does not move `stream_index`.
        A progress record (a streamed text delta, `content.delta`) comes as a fact with `at` None.

        Raises:
            SessionNotFoundError: No such session.
            StreamError: The connection broke more than `reconnects` times in a row.
        """
        start = self._stream_index if start_index is None else start_index
        async with aclosing(self._lines(start, follow=follow, moves=False)) as lines:
            async for line, facts in lines:
                for fact in facts:
                    if start >= 0:  # as eve's does: a fact read moves the cursor to it, the line's last past it
                        self._stream_index = max(self._stream_index, line + 1 if fact is facts[-1] else line)
                    yield fact

    async def _lines(
        self, start: int, *, follow: bool, moves: bool = True
    ) -> AsyncGenerator[tuple[int, list[Fact]], None]:
        """`Eve1Client._lines` of this session; each line read moves `stream_index` past it (with `moves`)."""
        async with aclosing(self._client._lines(self.session_id, start, follow=follow)) as lines:
            async for line, facts in lines:
                if moves:  # before the yield: a reader that stops at this line has read it
                    self._stream_index = max(self._stream_index, line + 1)
                yield line, facts

    def _delivery(self, response: httpx.Response, start: int, *, follow: bool = True) -> Delivery:
        """The `Delivery` a `202` receipt names, read from line `start` unless the receipt says where it starts."""
        data = response.json()
        if "startIndex" in data:  # eve-py's: the request's first line, so the read skips what came before
            start = int(data["startIndex"])
        elif response.headers.get("x-eve-idempotent-replay") == "true":
            start = 0  # a repeat's delivery may lie before the cursor, and its receipt does not say where
        return Delivery(self, str(data["deliveryId"]), data.get("turnId"), start, follow=follow)

    async def _control(self, kind: str, body: dict[str, Any]) -> Delivery:
        start = self._stream_index
        response = await self._client._request("POST", f"/session/{self.session_id}/{kind}", body)
        # eve reads an end's delivery to the stored tail: the session's last line is in by its receipt.
        return self._delivery(response, start, follow=kind != "end")


class Delivery:
    """An accepted message, answer or control (eve's `Delivery`): its receipt, and reads up to its settlement.

    Attributes:
        delivery_id: The id the server admits and settles it under.
        session_id: Its session.
        turn_id: The turn it started or resumed, when the receipt says (eve-py's extra).
    """

    def __init__(
        self, session: ClientSession, delivery_id: str, turn_id: str | None, start: int, *, follow: bool = True
    ) -> None:
        self._session = session
        self.delivery_id = delivery_id
        self.session_id = session.session_id
        self.turn_id = turn_id
        self._start = start
        self._follow = follow
        self._result: DeliveryResult | None = None

    def __repr__(self) -> str:
        return f"Delivery(session_id={self.session_id!r}, delivery_id={self.delivery_id!r})"

    async def stream(self) -> AsyncGenerator[Fact, None]:
        """The facts from the line that admits the delivery to the end of the line that settles it.

        Each call is a read of its own (eve's `deliveryEvents`); lines before the admission are skipped.

        Raises:
            SessionEndedError: The session ended before admitting the delivery.
            StreamError: The stream ended (or broke for good) before the delivery settled.
        """
        if self.delivery_id.startswith(_IGNORED_CANCEL):
            return
        admitted = False
        async with aclosing(self._session._lines(self._start, follow=self._follow)) as lines:
            async for _, facts in lines:
                if not admitted:
                    admitted = any(f.type == "delivery.admitted" and self._names(f) for f in facts)
                    if not admitted and any(f.type == "session.ended" for f in facts):
                        raise SessionEndedError(
                            f"Session {self.session_id!r} ended before admitting delivery {self.delivery_id!r}.",
                            status="ended",
                        )
                    if not admitted:
                        continue
                for fact in facts:
                    yield fact
                if any(f.type == "session.ended" or (f.type == "delivery.settled" and self._names(f)) for f in facts):
                    return
        raise StreamError(
            f"The stream of session {self.session_id!r} ended before delivery {self.delivery_id!r} settled.",
            status=0,
            code="delivery_unsettled",
        )

    async def result(self, *, timeout_s: float | None = None) -> DeliveryResult:
        """Wait until the delivery settles; how it settled (read once, then kept).

        Raises:
            TimeoutError: It did not settle within `timeout_s` seconds.
            SessionEndedError: The session ended before admitting it.
            StreamError: The stream ended (or the session ended) before it settled.
        """
        if self._result is not None:
            return self._result
        facts, earlier = [ignored_settlement(self.delivery_id)], {}
        if not self.delivery_id.startswith(_IGNORED_CANCEL):
            with anyio.fail_after(timeout_s):
                facts = [fact async for fact in self.stream()]
                earlier = await self._asked_before(facts)
        try:
            self._result = summarize(self.session_id, self.delivery_id, facts, earlier)
        except ValueError as exc:  # the session ended with the delivery unsettled
            raise StreamError(str(exc), status=0, code="delivery_unsettled") from None
        return self._result

    async def _asked_before(self, facts: list[Fact]) -> dict[str, Interaction]:
        """The interactions a pause awaits that were opened before the delivery (read from the first line)."""
        missing = set(awaited(facts)) - set(opened_in(facts))
        if not missing:
            return {}
        before: list[Fact] = []
        async with aclosing(self._session._lines(0, follow=False, moves=False)) as lines:
            async for line, facts_of_line in lines:
                if line >= facts[0].line:
                    break
                before += facts_of_line
        return opened_in(before)

    def _names(self, fact: Fact) -> bool:
        return fact.data.get("deliveryId") == self.delivery_id


def _record(text: str, status: int) -> dict[str, Any]:
    """One stream line, decoded.

    Raises:
        ApiError: It is not a JSON object (`bad_stream`).
    """
    try:
        record = json.loads(text)
    except json.JSONDecodeError:
        record = None
    if not isinstance(record, dict):
        raise ApiError(f"The stream sent a line that is not a record: {text[:200]!r}", status=status, code="bad_stream")
    return record
