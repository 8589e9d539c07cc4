"""The eve-py error tree: every exception the library raises derives from `EveError`.

```
EveError
├── UsageError                  a mistake in the app's code, found at definition or compile time
│   ├── ToolDefinitionError     define_tool / define_client_tool got a shape it cannot accept
│   ├── ToolResolutionError     the runtime normalizer rejected a tool at load time
│   ├── CompileError            `eve-py build` / compile_app found problems (.diagnostics)
│   ├── ModelConfigurationError a model could not be chosen or built (unknown "provider/model")
│   └── EvalConfigurationError  an eval file, evals_config.py or `eve-py eval`'s options are wrong
├── SessionError                a session operation could not be applied; nothing was changed
│   ├── SessionNotFoundError    no session with that id in the store
│   ├── SessionStateError       the session is not in a state that allows the operation
│   │   └── SessionNotWaitingError  respond() on a session that has no open input request
│   ├── SessionConflictError    another writer changed the session first (lost a race)
│   ├── InvalidMessageError     send() got a message with no text, or text that is not storable
│   ├── StoreSchemaError        the store's file is of another eve-py, not a database, or unreadable
│   └── InputResponseError      an answer was rejected; the session stays parked, unchanged
│       ├── UnknownRequestError         requestId not in the parked batch
│       ├── RequestAlreadyAnsweredError requestId answered before (or twice in one call);
│       │                               also a SessionConflictError: another respond() won
│       ├── RequestExpiredError         the request's deadline passed: it resolved as expired
│       ├── NotAnApproverError          the answering principal may not answer this approval
│       └── InvalidAnswerError          option not offered, value fails the schema, ...
│           └── EditNotAllowedError     an approval edits the input of a tool that is not editable
├── ToolError                   raised by a tool body or resolver: the call fails with this message,
│                               which the model sees as the call's error result
├── ApiError                    the HTTP API refused a request (eve_py.server, eve_py.client)
│   ├── AuthenticationError     the bearer token is missing or wrong (401)
│   ├── LinkInvalidError        an answer link is not genuine, or asks for what it does not grant (403)
│   └── LinkExpiredError        an answer link's time is up (410)
├── StoreUnavailableError       the session store's database cannot be reached now (down, restarting)
├── EvalError                   an eval did not pass (eve_py.evals)
│   └── EvalAssertionError      an eval's check failed (also an AssertionError)
└── RunError                    a turn could not go on
    ├── PairingError            a model request would break the one-call-one-result rule
    └── ModelError              the model failed (provider error, bad response)
        ├── ModelHTTPError      the provider answered with an HTTP error (4xx, or 429/5xx after retries)
        └── ModelConnectionError the provider could not be reached (after retries)
```

`Diagnostic` is the one name here that is not an exception: what a `CompileError` carries.

Session errors are raised *before* anything is written, so catching one and retrying with
a corrected input is always safe.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

# One name a line would take this module past its 400 lines.
# fmt: off
__all__ = (
    "ApiError", "AuthenticationError", "CompileError", "Diagnostic", "EditNotAllowedError", "EvalAssertionError",
    "EvalConfigurationError", "EvalError", "EveError", "InputResponseError", "InvalidAnswerError",
    "InvalidMessageError", "LinkExpiredError", "LinkInvalidError", "ModelConfigurationError", "ModelConnectionError",
    "ModelError", "ModelHTTPError", "NotAnApproverError", "PairingError", "RequestAlreadyAnsweredError",
    "RequestExpiredError", "RunError", "SessionConflictError", "SessionEndedError", "SessionError",
    "SessionNotFoundError", "SessionNotWaitingError", "SessionStateError", "StoreSchemaError",
    "StoreUnavailableError", "ToolDefinitionError", "ToolError", "ToolResolutionError", "UnknownRequestError",
    "UsageError",
)
# fmt: on


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


@dataclass(frozen=True, kw_only=True, slots=True)
class Diagnostic:
    """One compile problem.

    Codes: `E001` no `agent/` folder; `E101` tool file raised while importing (any
    `BaseException`: `SystemExit`, `KeyboardInterrupt` and `CancelledError` too); `E102` no `tool`
    attribute; `E103` export is not a `ToolDefinition`; `E104` no executor on a tool that is not
    client-resolved; `E105` client-resolved tool with an executor; `E106` invalid schema;
    `E107` invalid tool name; `E108` two files give the same tool name; `E109` client-resolved
    tool that needs approval; `E110` a field of the wrong type (description, needs_approval,
    to_model_output); `E111` tool file did not finish importing within the import timeout;
    `E201` bad `agent.py`; `E202` `agent.py` did not finish importing in time; `E301` an MCP
    server in `agent/connections/` could not be loaded or listed (`eve-py build`); `W101`
    `disable_tool()` for a name that is no framework tool.
    """

    severity: Literal["error", "warning"]
    code: str
    path: str
    """The file, relative to the app's `agent/` folder."""
    message: str
    hint: str | None = None
    """How to fix it."""

    def render(self) -> str:
        """One readable line, plus the hint on a second line when there is one."""
        text = f"{self.path}: {self.severity} {self.code}: {self.message}"
        return f"{text}\n    hint: {self.hint}" if self.hint else text


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


class EvalConfigurationError(UsageError):
    """An eval could not be set up: a bad eval file or `evals_config.py`, bad `define_eval`
    arguments, or `eve-py eval` options that select nothing.

    Attributes:
        problems: One line per problem found (every bad file is reported, not just the first).
    """

    def __init__(self, message: str, *, problems: Sequence[str] = ()) -> None:
        super().__init__(message)
        self.problems = list(problems)


class EvalError(EveError):
    """An eval did not pass."""


class EvalAssertionError(EvalError, AssertionError):
    """A check of an eval failed (`t.completed()`, `t.called_tool(...)`, ...).

    It is also an `AssertionError`, so a plain `assert` in an eval and these checks are reported
    alike. The message names the eval and the step, and shows the relevant events.

    Attributes:
        eval_id: The eval's id (its file path under `evals/`, without `_eval.py`).
        step: The 1-based number of the driver call that failed.
        label: That call, e.g. `called_tool('note', times=1)`.
        reason: What was wrong, without the events.
    """

    def __init__(self, message: str, *, eval_id: str, step: int, label: str, reason: str) -> None:
        super().__init__(message)
        self.eval_id = eval_id
        self.step = step
        self.label = label
        self.reason = reason


class SessionError(EveError):
    """A session operation was refused; the stored session was not changed.

    Attributes:
        http_message: The message as the HTTP API tells it, where the Python one names a Python
            call (`resume()`); None when both say the same.
    """

    http_message: str | None = None


class SessionNotFoundError(SessionError):
    """No session with the given id exists in the store.

    Attributes:
        session_id: The id that was looked up.
    """

    def __init__(self, session_id: str, message: str | None = None) -> None:
        super().__init__(message or f"No session with id {session_id!r} in this store.")
        self.session_id = session_id


class SessionStateError(SessionError):
    """The session's status does not allow the requested operation.

    Attributes:
        status: The session's status when the operation was refused.
    """

    def __init__(self, message: str, *, status: str, http_message: str | None = None) -> None:
        super().__init__(message)
        self.status = status
        self.http_message = http_message


class SessionNotWaitingError(SessionStateError):
    """`respond()` was called on a session that has no open input request."""


class StoreSchemaError(SessionError):
    """A store's file cannot be used as this eve-py's session store; it was left as it was.

    It holds sessions in another schema version (written by another eve-py), or it is not a
    SQLite database at all, or it cannot be opened (a folder, no permission).
    """


class SessionEndedError(SessionStateError):
    """The session was reset (retired for good): it takes no more messages or answers."""


class InvalidMessageError(SessionError):
    """`send()` got a message with no non-whitespace text; providers reject blank text blocks."""


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

    def __init__(self, message: str, *, request_id: str, http_message: str | None = None) -> None:
        super().__init__(message)
        self.request_id = request_id
        self.http_message = http_message


class UnknownRequestError(InputResponseError):
    """The `requestId` does not name an open request of the session's parked batch."""


class RequestAlreadyAnsweredError(InputResponseError, SessionConflictError):
    """The `requestId` was already answered (earlier, or twice in the same call).

    It is also a `SessionConflictError`: when two `respond()` calls race, the loser gets a
    `SessionConflictError` if it read the session before the winner wrote, and this error if
    it read it after; `except SessionConflictError` catches both.
    """


class RequestExpiredError(InputResponseError):
    """The request's deadline (`expiresAt`) passed before this answer: it resolved as `expired`.

    Attributes:
        expires_at: The deadline that passed (RFC 3339, UTC).
    """

    def __init__(self, message: str, *, request_id: str, expires_at: str = "") -> None:
        super().__init__(message, request_id=request_id)
        self.expires_at = expires_at


class NotAnApproverError(InputResponseError):
    """The principal answering an approval is not one of its tool's `approvers`; nothing was recorded."""


class InvalidAnswerError(InputResponseError):
    """The answer does not fit its request: option not offered, value fails the schema, ..."""


class EditNotAllowedError(InvalidAnswerError):
    """An approval carries `editedInput`, but its tool was not defined with `editable=True`."""


class ApiError(EveError):
    """The eve HTTP API refused a request; the body was `{"error": {"code", "message"}}`.

    The client raises the matching session error instead where there is one (a 404
    `session_not_found` is a `SessionNotFoundError`, a 409 `request_already_answered` a
    `RequestAlreadyAnsweredError`, ...); this is for the rest (400, 401, 413, 5xx).

    Attributes:
        status: The HTTP status code.
        code: The error code, e.g. `"bad_request"`.
    """

    def __init__(self, message: str, *, status: int, code: str) -> None:
        super().__init__(message)
        self.status = status
        self.code = code


class AuthenticationError(ApiError):
    """The request's bearer token is missing or wrong (HTTP 401)."""


class LinkInvalidError(ApiError):
    """An answer link is not genuine (changed, cut short, another secret's) or asks for what it does not grant (403)."""

    def __init__(self, message: str) -> None:
        super().__init__(message, status=403, code="link_invalid")


class LinkExpiredError(ApiError):
    """An answer link is genuine but its time is up (410); `expires_at` (RFC 3339, UTC) says when it ended."""

    def __init__(self, message: str, *, expires_at: str = "") -> None:
        super().__init__(message, status=410, code="link_expired")
        self.expires_at = expires_at


class StoreUnavailableError(EveError):
    """The session store's database cannot be reached now: it is down, restarting, or out of connections.

    Raised once a PostgreSQL store waited its `timeout_s` for a working connection, or lost the
    connection under an operation twice in a row. Unlike a `SessionError`, it does not promise
    that nothing was written: a write whose connection died may have been stored. Try again later
    (the HTTP API answers 503 with a `Retry-After` header); load the session again before
    repeating a write.
    """


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


class ModelHTTPError(ModelError):
    """A model provider answered with an HTTP error status.

    A 4xx other than 429 is raised at once; a 429 or 5xx only once the retry budget is spent.
    The message and `body` never contain the API key.

    Attributes:
        status: The HTTP status code, e.g. 400, 401, 429, 529.
        provider: Which provider answered: `"gateway"`, `"openai"` or `"anthropic"`.
        body: The start of the response body (at most 1,000 characters), secrets removed.
    """

    def __init__(self, message: str, *, status: int, provider: str, body: str) -> None:
        super().__init__(message)
        self.status = status
        self.provider = provider
        self.body = body


class ModelConnectionError(ModelError):
    """A model provider could not be reached (connect error, timeout, dropped connection) after retries.

    Attributes:
        provider: Which provider was called: `"gateway"`, `"openai"` or `"anthropic"`.
    """

    def __init__(self, message: str, *, provider: str) -> None:
        super().__init__(message)
        self.provider = provider
