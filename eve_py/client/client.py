"""`Client`: the Python client of the eve HTTP session API, on httpx.

```python
async with Client("http://127.0.0.1:8000", token="s3cret") as client:
    accepted = await client.create_session("help me pick a template")
    result = await client.result(accepted)              # TurnResult: status "waiting"
    request = result.input_requests[0]
    accepted = await client.respond(accepted.session_id,
                                    [InputResponse(request_id=request.request_id, option_id="tpl_blue")])
    result = await client.result(accepted)              # status "completed", result.message
```

Errors come back as the same exceptions the local `Session` raises (`SessionNotFoundError`,
`RequestAlreadyAnsweredError`, `InvalidAnswerError`, ...), or `ApiError` /
`AuthenticationError` for the rest.
"""

from __future__ import annotations

import json
import os
from collections.abc import AsyncGenerator, Mapping, Sequence
from contextlib import aclosing
from dataclasses import dataclass
from types import TracebackType
from typing import Any, Self

import anyio
import httpx
from pydantic import ValidationError

from eve_py._json import JsonObject
from eve_py.errors import (
    ApiError,
    AuthenticationError,
    EveError,
    InvalidAnswerError,
    RequestAlreadyAnsweredError,
    SessionConflictError,
    SessionNotFoundError,
    SessionNotWaitingError,
    SessionStateError,
    UnknownRequestError,
)
from eve_py.events import Event
from eve_py.harness.loop import TurnResult, TurnStatus
from eve_py.parking.requests import InputRequest, InputResponse
from eve_py.sessions.record import SessionStatus, TurnState

__all__ = ("Accepted", "Client", "RemoteSession", "StreamError")

_PREFIX = "/eve/v1"
_SETTLING = ("turn.completed", "turn.failed", "turn.cancelled")


class StreamError(ApiError):
    """The event stream broke and could not be resumed within the reconnect budget."""


@dataclass(frozen=True, kw_only=True)
class Accepted:
    """The server accepted a request; its events start at `start_index` in the session's log."""

    session_id: str
    turn_id: str | None
    """The turn the request started or continued (None for a session created without a message)."""
    start_index: int | None
    """Index of the first event the request caused (None when it caused none)."""


@dataclass(frozen=True, kw_only=True)
class RemoteSession:
    """A session as `GET /session/{id}` reports it."""

    session_id: str
    status: SessionStatus
    turn: TurnState | None
    input_requests: list[InputRequest]
    event_count: int


class Client:
    """An async client for an eve-py (or eve) server.

    Args:
        base_url: The server, e.g. `http://127.0.0.1:8000` (the `/eve/v1` prefix is added).
        token: The bearer token; None reads `EVE_API_TOKEN` (the first one, if it lists several).
        timeout_s: Timeout of ordinary requests, in seconds (streams wait as long as the turn runs).
        reconnects: How many times `stream()` reconnects in a row after the connection breaks.
        http: An `httpx.AsyncClient` to use instead of a new one (it is not closed by `aclose`).
    """

    def __init__(
        self,
        base_url: str,
        *,
        token: str | None = None,
        timeout_s: float = 30.0,
        reconnects: int = 5,
        http: httpx.AsyncClient | None = None,
    ) -> None:
        if token is None:
            listed = [t.strip() for t in os.environ.get("EVE_API_TOKEN", "").split(",") if t.strip()]
            token = listed[0] if listed else None
        self._headers = {"authorization": f"Bearer {token}"} if token else {}
        self._base = base_url.rstrip("/") + _PREFIX
        self._timeout = httpx.Timeout(timeout_s)
        self._reconnects = reconnects
        self._own_http = http is None
        self._http = http if http is not None else httpx.AsyncClient()

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        """Close the HTTP connection pool (unless it was passed in)."""
        if self._own_http:
            await self._http.aclose()

    async def _request(self, method: str, path: str, body: Any = None) -> httpx.Response:
        response = await self._http.request(
            method, self._base + path, json=body, headers=self._headers, timeout=self._timeout
        )
        if response.status_code >= 400:
            raise _error(response)
        return response

    async def health(self) -> JsonObject:
        """`GET /health`."""
        data: JsonObject = (await self._request("GET", "/health")).json()
        return data

    async def create_session(self, message: str | None = None) -> Accepted:
        """Create a session, starting a turn with `message` when one is given."""
        body = {"message": message} if message is not None else {}
        return _accepted((await self._request("POST", "/session", body)).json())

    async def send(self, session_id: str, message: str) -> Accepted:
        """Send a message (a waiting session's open questions are dismissed first)."""
        return _accepted((await self._request("POST", f"/session/{session_id}", {"message": message})).json())

    async def respond(self, session_id: str, responses: Sequence[InputResponse | Mapping[str, Any]]) -> Accepted:
        """Answer open input requests of the session's parked batch.

        Raises:
            InvalidAnswerError: An answer does not fit its request (nothing changed).
            RequestAlreadyAnsweredError: A request was answered before.
            SessionConflictError: Another client answered at the same time and won.
            SessionNotWaitingError: The session has no open request.
        """
        wire = [r.to_wire() if isinstance(r, InputResponse) else dict(r) for r in responses]
        response = await self._request("POST", f"/session/{session_id}", {"inputResponses": wire})
        return _accepted(response.json())

    async def cancel(self, session_id: str, turn_id: str | None = None) -> bool:
        """Cancel the session's running turn; False when none was running (a parked turn stays parked)."""
        body = {"turnId": turn_id} if turn_id is not None else {}
        response = await self._request("POST", f"/session/{session_id}/cancel", body)
        return response.status_code == 202

    async def get_session(self, session_id: str) -> RemoteSession:
        """The session's status, current turn and open input requests."""
        data = (await self._request("GET", f"/session/{session_id}")).json()
        return RemoteSession(
            session_id=data["sessionId"],
            status=data["status"],
            turn=TurnState.model_validate(data["turn"]) if data.get("turn") else None,
            input_requests=[InputRequest.model_validate(r) for r in data.get("inputRequests", [])],
            event_count=data["eventCount"],
        )

    async def stream(self, session_id: str, start_index: int = 0) -> AsyncGenerator[Event, None]:
        """The session's events from `start_index` (negative: from the end), live until the turn settles.

        `message.delta` events are yielded as they come but do not count as log entries. When the
        connection breaks, the stream reconnects from the index after the last stored event it
        yielded, and skips deltas of the running step it already yielded (by `deltaIndex`), so
        nothing is lost or repeated.

        Raises:
            StreamError: The connection broke more than `reconnects` times in a row.
        """
        cursor = start_index
        failures = 0
        deltas_seen: dict[tuple[object, object], int] = {}  # (turnId, stepIndex) -> deltas yielded
        while True:
            try:
                async with self._http.stream(
                    "GET",
                    f"{self._base}/session/{session_id}/stream",
                    params={"startIndex": cursor},
                    headers=self._headers,
                    timeout=httpx.Timeout(self._timeout.connect, read=None),
                ) as response:
                    if response.status_code >= 400:
                        await response.aread()
                        raise _error(response)
                    cursor = int(response.headers.get("x-eve-start-index", cursor))
                    async for line in response.aiter_lines():
                        if not line.strip():
                            continue
                        try:
                            event = Event.model_validate_json(line)
                        except ValidationError as exc:
                            raise ApiError(
                                f"The stream sent a line that is not an event: {line[:200]!r}",
                                status=response.status_code,
                                code="bad_stream",
                            ) from exc
                        if event.type == "message.delta":
                            step = (event.data.get("turnId"), event.data.get("stepIndex"))
                            index = event.data.get("deltaIndex")
                            if isinstance(index, int):
                                if index < deltas_seen.get(step, 0):
                                    continue  # sent again after a reconnect
                                deltas_seen[step] = index + 1
                        else:
                            cursor += 1
                        failures = 0
                        yield event
                    return
            except httpx.TransportError as exc:
                failures += 1
                if failures > self._reconnects:
                    raise StreamError(
                        f"The event stream of session {session_id!r} broke {failures} times: {exc}",
                        status=0,
                        code="stream_broken",
                    ) from exc
                await anyio.sleep(min(0.05 * 2**failures, 2.0))  # back off before reconnecting

    async def result(self, accepted: Accepted, *, timeout_s: float | None = None) -> TurnResult:
        """Wait until the accepted request's turn settles; its status, open requests and last message.

        Follows the stream from `accepted.start_index` until the turn completes, parks, fails or
        is cancelled (a cancelled turn is `failed`, its `error` says so). An answer that left
        other requests of its batch open settles nothing: the result is `waiting` with those.

        Raises:
            TimeoutError: The turn did not settle within `timeout_s`.
        """
        with anyio.fail_after(timeout_s):
            return await self._result(accepted)

    async def _result(self, accepted: Accepted) -> TurnResult:
        session_id = accepted.session_id
        turn_id = accepted.turn_id
        events: list[Event] = []
        cursor = accepted.start_index
        if cursor is None:
            cursor = (await self.get_session(session_id)).event_count
        async with aclosing(self.stream(session_id, cursor)) as stream:  # closes the response early
            async for event in stream:
                if event.type == "message.delta":
                    continue
                events.append(event)
                settled = _settled(event, turn_id)
                if settled is not None:
                    return _turn_result(session_id, turn_id, settled, events)
        # The stream ended without a settling event: an answer that left requests open, or a
        # turn whose worker stopped (the server no longer follows it).
        session = await self.get_session(session_id)
        turn = session.turn
        status: TurnStatus
        if session.status == "running":
            return _turn_result(
                session_id,
                turn_id,
                ("failed", "The turn stopped without settling: the worker running it is gone."),
                events,
            )
        if session.status == "waiting":
            status = "waiting"
        elif turn is not None and turn.status == "failed":
            status = "failed"
        else:
            status = "completed"
        return _turn_result(
            session_id,
            turn_id,
            (status, turn.error if turn is not None else None),
            events,
            open_requests=session.input_requests,
        )


def _settled(event: Event, turn_id: str | None) -> tuple[TurnStatus, str | None] | None:
    """The status a settling event of the turn gives, or None for any other event."""
    if event.type not in _SETTLING or (turn_id is not None and event.data.get("turnId") != turn_id):
        return None
    if event.type == "turn.completed":
        return ("waiting" if event.data.get("status") == "waiting" else "completed"), None
    if event.type == "turn.cancelled":
        return "failed", "The turn was cancelled."
    error = event.data.get("error")
    message = error.get("message") if isinstance(error, dict) else error
    return "failed", str(message) if message is not None else "The turn failed."


def _turn_result(
    session_id: str,
    turn_id: str | None,
    settled: tuple[TurnStatus, str | None],
    events: list[Event],
    open_requests: list[InputRequest] | None = None,
) -> TurnResult:
    status, error = settled
    message = None
    requests: dict[str, InputRequest] = {}
    for event in events:
        if event.type == "message.completed" and isinstance(event.data.get("text"), str):
            message = str(event.data["text"])
        elif event.type == "input.requested":
            raw = event.data.get("requests")
            parsed = [InputRequest.model_validate(r) for r in raw] if isinstance(raw, list) else []
            requests = {request.request_id: request for request in parsed}
        elif event.type == "input.resolved":
            answered = event.data.get("responses")
            for response in answered if isinstance(answered, list) else []:
                if isinstance(response, dict):
                    requests.pop(str(response.get("requestId")), None)
    if status != "waiting":
        found: list[InputRequest] = []
    elif open_requests is not None:
        found = open_requests
    else:
        found = list(requests.values())
    return TurnResult(
        session_id=session_id,
        turn_id=turn_id,
        status=status,
        input_requests=found,
        message=message,
        events=events,
        error=error,
    )


def _accepted(data: Mapping[str, Any]) -> Accepted:
    return Accepted(session_id=data["sessionId"], turn_id=data.get("turnId"), start_index=data.get("startIndex"))


def _error(response: httpx.Response) -> EveError:
    """The exception for an error response: the matching session error, else `ApiError`."""
    try:
        body = response.json()
        error = body["error"]
        code, message = str(error["code"]), str(error["message"])
    except (json.JSONDecodeError, KeyError, TypeError):
        code, message = "http_error", response.text[:500] or response.reason_phrase
        error = {}
    request_id = str(error.get("requestId", ""))
    status = str(error.get("status", ""))
    if code == "session_not_found":
        session_id = response.request.url.path.removeprefix(_PREFIX).split("/")
        return SessionNotFoundError(session_id[2] if len(session_id) > 2 else "")
    if code == "request_already_answered":
        return RequestAlreadyAnsweredError(message, request_id=request_id)
    if code == "unknown_request":
        return UnknownRequestError(message, request_id=request_id)
    if code == "invalid_answer":
        return InvalidAnswerError(message, request_id=request_id)
    if code == "session_not_waiting":
        return SessionNotWaitingError(message, status=status)
    if code == "session_not_ready":
        return SessionStateError(message, status=status)
    if code == "conflict":
        return SessionConflictError(message)
    if response.status_code == 401:
        return AuthenticationError(message, status=401, code=code)
    return ApiError(message, status=response.status_code, code=code)
