"""The eve-py error tree: every exception the library raises derives from `EveError`.

```
EveError
├── UsageError                  a mistake in the app's code, found at definition or compile time
│   ├── ToolDefinitionError     define_tool / define_client_tool got a shape it cannot accept
│   ├── ToolResolutionError     the runtime normalizer rejected a tool at load time
│   ├── CompileError            `eve-py build` / compile_app found problems (.diagnostics)
│   └── ModelConfigurationError a model could not be chosen or built (unknown "provider/model")
├── SessionError                a session operation could not be applied; nothing was changed
│   ├── SessionNotFoundError    no session with that id in the store
│   ├── SessionStateError       the session is not in a state that allows the operation
│   │   └── SessionNotWaitingError  respond() on a session that has no open input request
│   ├── SessionConflictError    another writer changed the session first (lost a race)
│   └── InputResponseError      an answer was rejected; the session stays parked, unchanged
│       ├── UnknownRequestError         requestId not in the parked batch
│       ├── RequestAlreadyAnsweredError requestId answered before (or twice in one call);
│       │                               also a SessionConflictError: another respond() won
│       └── InvalidAnswerError          option not offered, value fails the schema, ...
├── ToolError                   raised by a tool body or resolver: the call fails with this message,
│                               which the model sees as the call's error result
└── RunError                    a turn could not go on
    ├── PairingError            a model request would break the one-call-one-result rule
    └── ModelError              the model failed (provider error, bad response)
```

Session errors are raised *before* anything is written, so catching one and retrying with
a corrected input is always safe.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from eve_py.compiler.diagnostics import Diagnostic

__all__ = (
    "CompileError",
    "EveError",
    "InputResponseError",
    "InvalidAnswerError",
    "ModelConfigurationError",
    "ModelError",
    "PairingError",
    "RequestAlreadyAnsweredError",
    "RunError",
    "SessionConflictError",
    "SessionError",
    "SessionNotFoundError",
    "SessionNotWaitingError",
    "SessionStateError",
    "ToolDefinitionError",
    "ToolError",
    "ToolResolutionError",
    "UnknownRequestError",
    "UsageError",
)


class EveError(Exception):
    """Root of every error eve-py raises."""


class UsageError(EveError):
    """A mistake in the application's code (tool files, agent definition, configuration)."""


class ToolDefinitionError(UsageError):
    """`define_tool` or `define_client_tool` was called with a shape it cannot accept."""


class ToolResolutionError(UsageError):
    """The runtime normalizer (`resolve_tool`) rejected a tool definition at load time.

    Attributes:
        path: The tool file's path relative to the app's `agent/` folder.
    """

    def __init__(self, message: str, *, path: str) -> None:
        super().__init__(message)
        self.path = path


class CompileError(UsageError):
    """Compiling an app found one or more errors.

    Attributes:
        diagnostics: Every problem found, errors and warnings, in discovery order.
    """

    def __init__(self, diagnostics: Sequence[Diagnostic]) -> None:
        self.diagnostics = list(diagnostics)
        errors = [d for d in self.diagnostics if d.severity == "error"]
        lines = [f"{len(errors)} error(s) while compiling the app:"]
        lines += [f"  {d.render()}" for d in errors]
        super().__init__("\n".join(lines))


class ModelConfigurationError(UsageError):
    """A model could not be chosen or built from the given specification."""


class SessionError(EveError):
    """A session operation was refused; the stored session was not changed."""


class SessionNotFoundError(SessionError):
    """No session with the given id exists in the store.

    Attributes:
        session_id: The id that was looked up.
    """

    def __init__(self, session_id: str) -> None:
        super().__init__(f"No session with id {session_id!r} in this store.")
        self.session_id = session_id


class SessionStateError(SessionError):
    """The session's status does not allow the requested operation.

    Attributes:
        status: The session's status when the operation was refused.
    """

    def __init__(self, message: str, *, status: str) -> None:
        super().__init__(message)
        self.status = status


class SessionNotWaitingError(SessionStateError):
    """`respond()` was called on a session that has no open input request."""


class SessionConflictError(SessionError):
    """Another writer changed the session between this operation's read and its write.

    Typical cause: two `respond()` calls answering the same batch at once. Exactly one wins;
    the other gets this error and writes nothing.
    """


class InputResponseError(SessionError):
    """An input response was rejected; the session stays parked exactly as it was.

    Attributes:
        request_id: The offending response's `requestId`.
    """

    def __init__(self, message: str, *, request_id: str) -> None:
        super().__init__(message)
        self.request_id = request_id


class UnknownRequestError(InputResponseError):
    """The `requestId` does not name an open request of the session's parked batch."""


class RequestAlreadyAnsweredError(InputResponseError, SessionConflictError):
    """The `requestId` was already answered (earlier, or twice in the same call).

    It is also a `SessionConflictError`: when two `respond()` calls race, the loser gets a
    `SessionConflictError` if it read the session before the winner wrote, and this error if
    it read it after; `except SessionConflictError` catches both.
    """


class InvalidAnswerError(InputResponseError):
    """The answer does not fit its request: option not offered, value fails the schema, ..."""


class ToolError(EveError):
    """Raise it in a tool body or a resolver to fail the call with a message the model sees.

    The call gets one error tool result `Error executing tool <name>: <message>`; the turn goes on.
    """


class RunError(EveError):
    """A turn could not continue."""


class PairingError(RunError):
    """A model request would contain a tool call without exactly one result, or an orphan result.

    Raised before the request is sent, never after.

    Attributes:
        call_ids: The offending tool call ids.
    """

    def __init__(self, message: str, *, call_ids: Sequence[str]) -> None:
        super().__init__(message)
        self.call_ids = list(call_ids)


class ModelError(RunError):
    """The model failed to produce a response (provider error, malformed response, ...)."""
