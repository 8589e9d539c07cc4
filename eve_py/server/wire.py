"""Request bodies of the HTTP API, and the mapping from eve-py errors to `{error: {code, message}}`.

Every error response has the body `{"error": {"code": ..., "message": ...}}`, plus
`requestId` for a rejected answer and `status` (the session's) for a state error:

| status | code | raised by |
|---|---|---|
| 400 | `bad_request` | a body that is not JSON, has unknown keys or wrong types, or not exactly one of |
|     |               | `message` / `inputResponses`; a `startIndex` that is not an integer |
| 401 | `unauthorized` | a missing or wrong bearer token |
| 404 | `session_not_found` | an unknown session, or one another principal owns |
| 409 | `session_not_waiting` | `inputResponses` for a session with no open request |
| 409 | `session_not_ready` | a message while a turn is running |
| 409 | `request_already_answered` | an answer to a request answered before (or twice in one body) |
| 409 | `conflict` | another client changed the session first (concurrent answers) |
| 413 | `payload_too_large` | a body over the size limit |
| 422 | `invalid_answer` | an answer that does not fit its request (option not offered, value fails the schema) |
| 422 | `unknown_request` | a `requestId` that is not in the parked batch |
"""

from __future__ import annotations

from typing import Any, TypeVar

from pydantic import Field, ValidationError, field_validator, model_validator

from eve_py._wire import WireModel, describe_validation_error
from eve_py.errors import (
    ApiError,
    EveError,
    InputResponseError,
    InvalidMessageError,
    ModelConfigurationError,
    RequestAlreadyAnsweredError,
    SessionConflictError,
    SessionError,
    SessionNotFoundError,
    SessionNotWaitingError,
    SessionStateError,
    UnknownRequestError,
)
from eve_py.parking.requests import InputResponse

__all__ = (
    "CancelBody",
    "CreateSessionBody",
    "SessionInputBody",
    "bad_request",
    "error_body",
    "error_status",
    "parse_body",
)

_M = TypeVar("_M", bound=WireModel)


def _not_blank(message: str | None) -> str | None:
    if message is not None and not message.strip():
        raise ValueError("message must contain some text")
    return message


class CreateSessionBody(WireModel):
    """`POST /session`: an optional first message."""

    message: str | None = None

    _check_message = field_validator("message")(_not_blank)


class SessionInputBody(WireModel):
    """`POST /session/{id}`: exactly one of `message` or `inputResponses`."""

    message: str | None = None
    input_responses: list[InputResponse] | None = Field(default=None, min_length=1)

    _check_message = field_validator("message")(_not_blank)

    @model_validator(mode="after")
    def _exactly_one(self) -> SessionInputBody:
        if (self.message is None) == (self.input_responses is None):
            raise ValueError("give exactly one of message or inputResponses")
        return self


class CancelBody(WireModel):
    """`POST /session/{id}/cancel`: optionally the turn to cancel."""

    turn_id: str | None = None


def bad_request(message: str) -> ApiError:
    """A 400 `bad_request` error."""
    return ApiError(message, status=400, code="bad_request")


def parse_body(model: type[_M], raw: Any) -> _M:
    """Validate a decoded JSON body (None for an empty body).

    Raises:
        ApiError: 400 with every problem listed.
    """
    try:
        return model.model_validate({} if raw is None else raw)
    except ValidationError as exc:
        raise bad_request(f"Invalid request body: {describe_validation_error(exc, root='(body)')}") from exc


_STATUSES: tuple[tuple[type[EveError], int, str], ...] = (
    # First match wins: subclasses come before the classes they refine.
    (SessionNotFoundError, 404, "session_not_found"),
    (InvalidMessageError, 400, "invalid_message"),
    (RequestAlreadyAnsweredError, 409, "request_already_answered"),
    (UnknownRequestError, 422, "unknown_request"),
    (InputResponseError, 422, "invalid_answer"),
    (SessionNotWaitingError, 409, "session_not_waiting"),
    (SessionStateError, 409, "session_not_ready"),
    (SessionConflictError, 409, "conflict"),
    (SessionError, 409, "session_error"),
    (ModelConfigurationError, 500, "model_not_configured"),
)


def error_status(exc: EveError) -> tuple[int, str]:
    """The HTTP status and error code for an error (500 `internal_error` for the unexpected)."""
    if isinstance(exc, ApiError):
        return exc.status, exc.code
    for kind, status, code in _STATUSES:
        if isinstance(exc, kind):
            return status, code
    return 500, "internal_error"


def error_body(exc: EveError, *, message: str | None = None) -> dict[str, Any]:
    """The JSON body for an error: `{"error": {"code", "message", ...}}`."""
    _, code = error_status(exc)
    error: dict[str, Any] = {"code": code, "message": message if message is not None else str(exc)}
    if isinstance(exc, InputResponseError) and exc.request_id:
        error["requestId"] = exc.request_id
    if isinstance(exc, SessionStateError):
        error["status"] = exc.status
    return {"error": error}
