"""`Client`: the Python client of the eve HTTP session API (an eve-py server, or eve's own), on httpx.

```python
async with Client("http://127.0.0.1:8000", token="s3cret") as client:
    accepted = await client.create_session("help me pick a template")
    result = await client.result(accepted)              # TurnResult: status "waiting"
    request = result.input_requests[0]
    accepted = await client.respond(accepted.session_id,
                                    [InputResponse(request_id=request.request_id, option_id="tpl_blue")])
    result = await client.result(accepted)              # status "completed", result.message
```

It reads events as `eve_py.protocol` types (an event type it does not know comes back as an
`UnknownEvent`), follows a turn the way eve's TypeScript client does (a message's events carry
its `deliveryId`; a turn's boundary is `turn.waiting`, `session.waiting` or a terminal session
event), and retries a message refused with `session_not_ready` for up to 20 seconds, as eve's
client does. Errors come back as the same exceptions the local `Session` raises
(`SessionNotFoundError`, `RequestAlreadyAnsweredError`, `InvalidAnswerError`, ...), or
`ApiError` / `AuthenticationError` for the rest.
"""

from __future__ import annotations

import os
from collections.abc import AsyncGenerator, AsyncIterator, Awaitable, Callable, Mapping, Sequence
from contextlib import aclosing, asynccontextmanager
from dataclasses import dataclass, replace
from types import TracebackType
from typing import Any, Self, TypeVar

import anyio
import httpx

from eve_py._json import JsonObject, JsonSchema, JsonValue
from eve_py.client._errors import error_for
from eve_py.client._turns import open_requests, summarize
from eve_py.errors import ApiError, SessionStateError
from eve_py.protocol import AnyEvent, is_turn_boundary, parse_event
from eve_py.protocol.requests import InputRequest, InputResponse
from eve_py.protocol.turns import SessionStatus, TurnResult, TurnState

__all__ = ("Accepted", "Client", "HttpApi", "RemoteSession", "StreamError", "retry_not_ready", "turn_body")

_T = TypeVar("_T")

_PREFIX = "/v26/eve/v1"
_SEND_RETRY_S = 20.0
"""How long a message refused with 409 `session_not_ready` is retried (eve's client: 20 s)."""


class StreamError(ApiError):
    """The event stream broke and could not be resumed within the reconnect budget."""


@dataclass(frozen=True, kw_only=True)
class Accepted:
    """The server accepted a request; its events start at `start_index` in the session's log."""

    session_id: str
    turn_id: str | None
    """The turn the request started or continued (None when the server did not say)."""
    start_index: int | None
    """Index of the first event the request caused (None when the server did not say)."""
    delivery_id: str | None = None
    """The message's delivery id: every event of its turn carries it in `meta.deliveryIds`."""


@dataclass(frozen=True, kw_only=True)
class RemoteSession:
    """A session as eve-py's `GET /session/{id}` reports it."""

    session_id: str
    status: SessionStatus
    turn: TurnState | None
    input_requests: list[InputRequest]
    event_count: int


class HttpApi:
    """What both clients share: the bearer token, the connection pool, requests whose errors are raised.

    Its arguments are each client's (`Client`, `Eve1Client`); its public methods (`aclose`, `health`,
    `info`) are theirs too, and the API reference lists them under each.
    """

    prefix = ""
    """Where the wire's routes are, under `base_url` (each client names its own)."""

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
        self._base = base_url.rstrip("/") + self.prefix
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

    async def health(self) -> JsonObject:
        """`GET /health`: `{ok: true, status: "ready", workflowId}`."""
        return await self._json("/health")

    async def info(self) -> JsonObject:
        """`GET /info`: eve's agent-info document (the agent, its tools and schemas, its routes)."""
        return await self._json("/info")

    @asynccontextmanager
    async def _open_stream(
        self, session_id: str, params: Mapping[str, str | int], *, read_s: float | None
    ) -> AsyncIterator[httpx.Response]:
        """`GET /session/{id}/stream`: the open response, read with an idle timeout of `read_s` seconds.

        Raises:
            ApiError: The server refused the request (`SessionNotFoundError`, ...).
        """
        async with self._http.stream(
            "GET",
            f"{self._base}/session/{session_id}/stream",
            params=params,
            headers=self._headers,
            timeout=httpx.Timeout(self._timeout.connect, read=read_s),
        ) as response:
            if response.status_code >= 400:
                await response.aread()
                raise error_for(response)
            yield response

    async def _back_off(self, failures: int, exc: httpx.TransportError, what: str) -> None:
        """Wait before reconnecting a stream that broke `failures` times in a row.

        Raises:
            StreamError: `failures` is over the client's `reconnects` budget.
        """
        if failures > self._reconnects:
            raise StreamError(f"The {what} broke {failures} times: {exc}", status=0, code="stream_broken") from exc
        await anyio.sleep(min(0.05 * 2**failures, 2.0))

    async def _request(self, method: str, path: str, body: Any = None) -> httpx.Response:
        response = await self._http.request(
            method, self._base + path, json=body, headers=self._headers, timeout=self._timeout
        )
        if response.status_code >= 400:
            raise error_for(response)
        return response

    async def _json(self, path: str) -> JsonObject:
        data: JsonObject = (await self._request("GET", path)).json()
        return data


class Client(HttpApi):
    """An async client for an eve-py (or eve) server, on eve 0.80.1's wire (`/v26/eve/v1`).

    Args:
        base_url: The server, e.g. `http://127.0.0.1:8000` (the `/v26/eve/v1` prefix is added).
        token: The bearer token; None reads `EVE_API_TOKEN` (the first one, if it lists several).
        timeout_s: Timeout of ordinary requests, in seconds (streams wait as long as the turn runs).
        reconnects: How many times `stream()` reconnects in a row after the connection breaks.
        http: An `httpx.AsyncClient` to use instead of a new one (it is not closed by `aclose`).
    """

    prefix = _PREFIX

    async def create_session(
        self,
        message: str | Sequence[str] | None = None,
        *,
        client_context: str | Sequence[str] | Mapping[str, JsonValue] | None = None,
        output_schema: JsonSchema | None = None,
    ) -> Accepted:
        """Create a session, starting a turn with `message` (text, or text parts) when one is given."""
        body = turn_body(message, client_context, output_schema)
        return _accepted((await self._request("POST", "/session", body)).json())

    async def send(
        self,
        session_id: str,
        message: str | Sequence[str],
        *,
        client_context: str | Sequence[str] | Mapping[str, JsonValue] | None = None,
        output_schema: JsonSchema | None = None,
    ) -> Accepted:
        """Send a message (a waiting session's open questions are dismissed first).

        A message refused because a turn is still running (409 `session_not_ready`) is sent again,
        backing off from 0.25 s to 2 s, for up to 20 seconds.
        """
        body = turn_body(message, client_context, output_schema)
        response = await retry_not_ready(lambda: self._request("POST", f"/session/{session_id}", body))
        return _accepted(response.json())

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
        """Cancel the session's running or parked turn; False when it had none (`no_active_turn`)."""
        body = {"turnId": turn_id} if turn_id is not None else {}
        response = await self._request("POST", f"/session/{session_id}/cancel", body)
        return response.status_code == 202

    async def clear(self, session_id: str) -> bool:
        """Remove the session's history; False when the session is no longer active."""
        response = await self._request("POST", f"/session/{session_id}/clear")
        return bool(response.json().get("status") == "accepted")

    async def reset(self, session_id: str) -> bool:
        """Retire the session for good; False when it was already retired."""
        response = await self._request("POST", f"/session/{session_id}/reset")
        return bool(response.json().get("status") == "reset")

    async def get_session(self, session_id: str) -> RemoteSession:
        """The session's status, current turn and open input requests (an eve-py route)."""
        data = (await self._request("GET", f"/session/{session_id}")).json()
        return RemoteSession(
            session_id=data["sessionId"],
            status=data["status"],
            turn=TurnState.model_validate(data["turn"]) if data.get("turn") else None,
            input_requests=[InputRequest.model_validate(r) for r in data.get("inputRequests", [])],
            event_count=data["eventCount"],
        )

    async def stream(
        self, session_id: str, start_index: int = 0, *, follow: bool = True, live: bool = False
    ) -> AsyncGenerator[AnyEvent, None]:
        """The session's events from `start_index` (negative: from the end), then live ones.

        Every line is an event of the log, so the cursor counts them all. When the server ends
        the response (it does after a quiet spell) or the connection breaks, the stream
        reconnects from its cursor, so nothing is lost or repeated; it ends after a
        `session.completed` or `session.failed`, or at the stored tail with `follow=False`. Stop
        reading where you need to (`is_turn_boundary`).

        Args:
            session_id: The session to read.
            start_index: The first event's index in the session's log (negative: from the end).
            follow: Keep reading as events are recorded (False: stop at the stored tail).
            live: Also get a running tool's `action.progress` and `action.log` events as it makes
                them (eve-py's `live=1`), before the call's result is recorded with them; each
                comes once: its stored copy, which follows with the result, is skipped. Without
                it they come with the result. eve's own server ignores the parameter.

        Raises:
            StreamError: The connection broke more than `reconnects` times in a row.
        """
        cursor = start_index
        failures = 0
        params: dict[str, str | int] = {} if follow else {"follow": "false"}
        if live:
            params["live"] = "1"
        heard: set[str] = set()  # ids of reports yielded live whose stored copy has not come yet
        while True:
            try:
                async with self._open_stream(session_id, {"startIndex": cursor, **params}, read_s=None) as response:
                    cursor = int(response.headers.get("x-eve-start-index", cursor))
                    async for line in response.aiter_lines():
                        if not line.strip():
                            continue
                        record = _read_line(line, response.status_code)
                        if record is None:
                            continue  # a transport record, not a session event
                        event, is_live = record
                        if is_live:
                            if live and event.meta is not None:
                                heard.add(event.meta.id)
                                yield event
                            continue
                        cursor += 1
                        failures = 0
                        if event.meta is not None and event.meta.id in heard:
                            heard.discard(event.meta.id)
                            continue
                        yield event
                        if event.type in ("session.completed", "session.failed"):
                            return
                    if not follow:
                        return
            except httpx.TransportError as exc:
                failures += 1
                await self._back_off(failures, exc, f"event stream of session {session_id!r}")

    async def result(self, accepted: Accepted, *, timeout_s: float | None = None) -> TurnResult:
        """Wait until the accepted request's turn reaches a boundary; its status, open requests and message.

        Follows the stream from `accepted.start_index` (skipping, as eve's client does, events
        of earlier turns that do not carry `accepted.delivery_id`) until the turn parks
        (`turn.waiting`: `waiting`, with the open requests), or the session waits again
        (`session.waiting`: `completed`, or `failed` after `turn.failed`/`turn.cancelled`).

        Raises:
            TimeoutError: The turn did not reach a boundary within `timeout_s`.
        """
        with anyio.fail_after(timeout_s):
            cursor = accepted.start_index
            if cursor is None:
                cursor = (await self.get_session(accepted.session_id)).event_count
            events: list[AnyEvent] = []
            seen_own = accepted.delivery_id is None
            async with aclosing(self.stream(accepted.session_id, cursor)) as stream:
                async for event in stream:
                    ids = event.meta.delivery_ids if event.meta is not None else None
                    if not seen_own:
                        if ids is None or accepted.delivery_id not in ids:
                            continue
                        seen_own = True
                    events.append(event)
                    if is_turn_boundary(event):
                        break
            result = summarize(accepted.session_id, accepted.turn_id, events)
            if result.status == "waiting" and not result.input_requests:
                # The requests still open were asked before this read began (an answer that
                # left part of its batch open): the whole log says which they are.
                log = [e async for e in self.stream(accepted.session_id, 0, follow=False)]
                result = replace(result, input_requests=open_requests(log))
            return result


_LIVE = '{"$evePy":"live","event":'
"""How eve-py's server starts a `live=1` record: `{"$evePy":"live","event":<event>}`."""


def _read_line(line: str, status: int) -> tuple[AnyEvent, bool] | None:
    """The event a stream line carries and whether it came live; None for another transport record.

    Raises:
        ApiError: The line is neither an event nor a transport record (`bad_stream`).
    """
    text = line.strip()
    is_live = text.startswith(_LIVE) and text.endswith("}")
    if text.startswith('{"$eve') and not is_live:
        return None
    try:
        return parse_event(text[len(_LIVE) : -1] if is_live else text), is_live
    except ValueError as exc:
        raise ApiError(
            f"The stream sent a line that is not an event: {line[:200]!r}", status=status, code="bad_stream"
        ) from exc


async def retry_not_ready(post: Callable[[], Awaitable[_T]]) -> _T:
    """`post()`, sent again while it is refused with 409 `session_not_ready` (a turn still runs), backing
    off from 0.25 s to 2 s, for up to 20 seconds, as eve's client does; any other error is raised at once."""
    delay, deadline = 0.25, anyio.current_time() + _SEND_RETRY_S
    while True:
        try:
            return await post()
        except SessionStateError as exc:
            left = deadline - anyio.current_time()
            if type(exc) is not SessionStateError or left <= 0:  # only `session_not_ready` is retried
                raise
            await anyio.sleep(min(delay, left))
            delay = min(delay * 2, 2.0)


def turn_body(
    message: str | Sequence[str] | None,
    client_context: str | Sequence[str] | Mapping[str, JsonValue] | None,
    output_schema: JsonSchema | None,
) -> dict[str, Any]:
    body: dict[str, Any] = {}
    if isinstance(message, str):
        body["message"] = message
    elif message is not None:
        body["message"] = [{"type": "text", "text": part} for part in message]
    if client_context is not None:
        body["clientContext"] = client_context if isinstance(client_context, str | Mapping) else list(client_context)
    if output_schema is not None:
        body["outputSchema"] = output_schema
    return body


def _accepted(data: Mapping[str, Any]) -> Accepted:
    return Accepted(
        session_id=data["sessionId"],
        turn_id=data.get("turnId"),
        start_index=data.get("startIndex"),
        delivery_id=data.get("deliveryId"),
    )
