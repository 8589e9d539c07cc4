"""`ActiveTurns`: the turns running in this process, by session id, so that `Session.cancel` can stop one.

It also keeps the events to record with a running turn's next write (`note`): a write of its
own would conflict with the turn's, whose unit of work holds the record.
"""

from __future__ import annotations

from types import TracebackType

import anyio

from eve_py.protocol import Event

__all__ = ("ActiveTurns",)


class ActiveTurns:
    """The cancel scope of each turn this process runs now, by session id (one `Runtime` keeps one)."""

    def __init__(self) -> None:
        self._scopes: dict[str, anyio.CancelScope] = {}
        self._notes: dict[str, list[Event]] = {}
        """Events waiting for their running turn's next write, by session id."""

    def note(self, session_id: str, events: list[Event]) -> bool:
        """Record `events` with the running turn's next write; False when no turn of the session runs here."""
        if session_id not in self._scopes:
            return False
        self._notes.setdefault(session_id, []).extend(events)
        return True

    def take_notes(self, session_id: str) -> list[Event]:
        """The events waiting for the session's next write (and none are left waiting)."""
        return self._notes.pop(session_id, []) if self._notes else []

    def running(self, session_id: str) -> bool:
        """Whether a turn of this session runs in this process now."""
        return session_id in self._scopes

    def cancel(self, session_id: str) -> bool:
        """Stop the session's running turn; False when none runs here."""
        scope = self._scopes.get(session_id)
        if scope is None:
            return False
        scope.cancel()
        return True

    def run(self, session_id: str) -> _Registered:
        """A cancel scope for one turn of `session_id`, registered while it is entered.

        Like any cancel scope it swallows its own cancellation: code after the `with` runs.
        """
        return _Registered(self._scopes, session_id)


class _Registered:
    def __init__(self, scopes: dict[str, anyio.CancelScope], session_id: str) -> None:
        self._scopes = scopes
        self._session_id = session_id
        self._scope = anyio.CancelScope()

    def __enter__(self) -> anyio.CancelScope:
        self._scopes[self._session_id] = self._scope.__enter__()
        return self._scope

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, traceback: TracebackType | None
    ) -> bool:
        if self._scopes.get(self._session_id) is self._scope:
            del self._scopes[self._session_id]
        return self._scope.__exit__(kind, exc, traceback)
