"""What the frontend protocols' routes share: a thread's session claimed on first use, a run's events followed.

`POST /ag-ui` (`eve_py.server._ag_ui`) and `POST /ai-sdk/chat` (`eve_py.server._ai_sdk`) each
name the session in their body (AG-UI's `threadId`, the AI SDK's chat `id`) and answer with
server-sent events projected from the events the run stores. Both use `open_thread` to find or
create that session and `follow_run` to read the run's events as they are committed.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable

from eve_py.errors import ApiError, SessionNotFoundError
from eve_py.harness import Session
from eve_py.protocol import Event
from eve_py.server._hub import Subscriber
from eve_py.server._routes import Api, UnownedSessionError

__all__ = (
    "KEEPALIVE",
    "SSE_HEADERS",
    "check_thread_id",
    "create_thread",
    "follow_run",
    "open_thread",
    "thread_owner",
)

SSE_HEADERS = {"cache-control": "no-store", "x-accel-buffering": "no"}
_REPORTS = ("action.progress", "action.log")
KEEPALIVE = b": keepalive\n\n"
"""An SSE comment, sent while a run waits on its model or tools (proxies drop idle connections)."""


def check_thread_id(thread_id: str, field: str) -> None:
    """Refuse an id that cannot name a session.

    Raises:
        ApiError: 400 unless it is 1 to 200 printable characters.
    """
    if not thread_id or len(thread_id) > 200 or not thread_id.isprintable():
        raise ApiError(
            f"{field} names the eve-py session: 1 to 200 printable characters.", status=400, code="bad_request"
        )


async def thread_owner(api: Api, thread_id: str, principal: str) -> bool:
    """Whether the thread's session exists and is the caller's (False: it does not exist yet).

    Raises:
        SessionNotFoundError: Another principal owns it (a 404, as if it did not exist).
        UnownedSessionError: It exists but was made outside the server.
    """
    owner = await api.owners.owner(thread_id)
    if owner == principal:
        return True
    if owner is not None:
        raise SessionNotFoundError(thread_id)
    if await api._stored(thread_id):
        raise UnownedSessionError(thread_id)
    return False


async def open_thread(api: Api, thread_id: str, principal: str) -> str:
    """The thread's session, created and claimed by the caller on first use; another caller's is a 404.

    Raises:
        SessionNotFoundError: Another principal owns it.
        UnownedSessionError: It exists but was made outside the server.
    """
    if not await thread_owner(api, thread_id, principal):
        await create_thread(api, thread_id, principal)
    return thread_id


async def create_thread(api: Api, thread_id: str, principal: str) -> Session:
    """The thread's new session, claimed by the caller (`thread_owner` said it does not exist yet).

    Raises:
        SessionConflictError: Another request created it meanwhile.
    """
    await api.owners.claim(thread_id, principal)
    return await api.runtime.create_session(thread_id)


async def follow_run(
    api: Api, session_id: str, start: int, subscriber: Subscriber, *, done: Callable[[], bool]
) -> AsyncIterator[list[Event] | None]:
    """The session's stored events from index `start`, batch by batch, as they are committed, and
    a running tool's reports (`action.progress`, `action.log`) as they happen, if `subscriber`
    `wants_live`: each report once, whether its live or its stored copy comes first.

    Yields None after `api.recheck_s` quiet seconds (send a keepalive then; a turn whose worker
    died meanwhile is taken over). Ends once `done()` is true after a batch.

    Raises:
        ApiError: 503 `unavailable` when the server shuts down before the run ends.
    """
    store = api.runtime.store
    cursor = start
    shown: set[str] = set()
    taken: list[Event] | None = None
    while True:
        events = await store.read_events(session_id, cursor) if taken is None else taken
        cursor += len(events)
        yield _once(events, shown)
        if subscriber.wants_live and (live := _once(subscriber.take_live(), shown)):
            yield live
        if done():
            return
        if api.closing:
            raise ApiError("The server is shutting down; send again.", status=503, code="unavailable")
        if await subscriber.wait(api.recheck_s):
            taken = subscriber.take(cursor)  # this process's commits, handed over by the hub
        else:
            taken = None
            await api._recover_quiet(session_id)
            yield None


def _once(events: list[Event], shown: set[str]) -> list[Event]:
    """`events` without the reports already in `shown` (by event id); the others' ids join it."""
    if not any(event.type in _REPORTS for event in events):
        return events
    fresh: list[Event] = []
    for event in events:
        if event.type in _REPORTS:
            if event.meta.id in shown:
                continue
            shown.add(event.meta.id)
        fresh.append(event)
    return fresh
