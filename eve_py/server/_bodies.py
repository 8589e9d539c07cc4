"""Request bodies of the HTTP API (eve 0.80.1's), and the mapping from eve-py errors to eve's error body.

Every error response has eve's body `{"ok": false, "error": "<text>", "code": "<code>"}`, plus
`requestId` for a rejected answer and `status` (the session's) for a state error:

| status | code | raised by |
|---|---|---|
| 400 | `bad_request` | a body that is not a JSON object, has wrong types, is nested too deep or holds a lone |
|     |               | surrogate; not exactly one of `message` / `inputResponses`; a bad `startIndex` |
| 400 | `invalid_message` | a message with no text |
| 400 | (plain text) | a `Host` that is not a loopback name or an allowed host (`Invalid host header`) |
| 401 | `unauthorized` | a missing or wrong bearer token |
| 403 | `forbidden_origin` | without API tokens: an `Origin` that is not the server's own |
| 404 | `session_not_found` | an unknown session's stream or state, or one another principal owns |
| 404 | `not_found` | an unknown route |
| 409 | `session_not_active` | a message or answer for an unknown (or reset) session |
| 409 | `session_not_waiting` | `inputResponses` for a session with no open request |
| 409 | `session_not_ready` | a message while a turn is running (eve's client retries it) |
| 409 | `delivery_in_progress` | a request whose `idempotencyKey` another request is still delivering |
| 409 | `request_already_answered` | an answer to a request answered before (or twice in one body) |
| 409 | `conflict` | another client changed the session first (concurrent answers) |
| 413 | `payload_too_large` | a body over the size limit |
| 415 | `unsupported_media_type` | a body sent as anything but `application/json`, or a message part that is not text |
| 422 | `invalid_answer` | an answer that does not fit its request (option not offered, value fails the schema) |
| 422 | `unknown_request` | a `requestId` that is not in the parked batch |
| 403 | `not_an_approver` | an answer to an approval from a principal not among its tool's `approvers` |
| 409 | `request_expired` | an answer to a request whose deadline (`expiresAt`) passed: it resolved as `expired` |
| 422 | `edit_not_allowed` | an approval with `editedInput` for a tool not defined with `editable=True` |
| 501 | `unsupported` | a control eve-py does not implement (`compact`) |
| 503 | `store_unavailable` | the session store's database cannot be reached (down or restarting); with `Retry-After` |
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from typing import Any, Literal, TypeVar

from pydantic import ConfigDict, Field, JsonValue, ValidationError, field_validator, model_validator
from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from eve_py._camel import CamelModel, describe_validation_error
from eve_py._json import JsonObject, strict_loads
from eve_py.errors import (
    ApiError,
    AuthenticationError,
    EditNotAllowedError,
    EveError,
    InputResponseError,
    InvalidMessageError,
    ModelConfigurationError,
    NotAnApproverError,
    RequestAlreadyAnsweredError,
    RequestExpiredError,
    SessionConflictError,
    SessionError,
    SessionNotFoundError,
    SessionNotWaitingError,
    SessionStateError,
    StoreUnavailableError,
    UnknownRequestError,
)
from eve_py.protocol.requests import InputResponse

__all__ = (
    "Answer",
    "CancelBody",
    "CreateSessionBody",
    "EndBody",
    "MessagePart",
    "ResetBody",
    "SessionInputBody",
    "bad_request",
    "decode_json",
    "error_body",
    "error_headers",
    "error_response",
    "error_status",
    "json_errors",
    "parse_body",
    "too_large",
)

_M = TypeVar("_M", bound=CamelModel)
_S = TypeVar("_S")

_log = logging.getLogger("eve_py.server")


class MessagePart(CamelModel):
    """One part of a message: eve-py reads text parts (`{"type": "text", "text": "..."}`)."""

    model_config = ConfigDict(extra="allow")

    type: str
    text: str | None = None


ClientContext = str | list[str] | JsonObject


class _TurnBody(CamelModel):
    message: str | list[MessagePart] | None = None
    client_context: ClientContext | None = None
    output_schema: JsonObject | None = None

    @field_validator("message")
    @classmethod
    def _parts(cls, message: str | list[MessagePart] | None) -> str | list[MessagePart] | None:
        if isinstance(message, list):
            if not message:
                raise ValueError("a message needs at least one part")
            for part in message:
                if part.type != "text":
                    raise ApiError(
                        f"Message parts of type {part.type!r} are not supported by eve-py; send text parts.",
                        status=415,
                        code="unsupported_media_type",
                    )
                if not part.text:
                    raise ValueError("Text parts require a non-empty 'text' string.")
        return message

    @field_validator("message")
    @classmethod
    def _not_blank(cls, message: str | list[MessagePart] | None) -> str | list[MessagePart] | None:
        texts = [message] if isinstance(message, str) else [p.text or "" for p in message or []]
        if message is not None and not "".join(texts).strip():
            raise ValueError("message must contain some text")
        return message

    def message_parts(self) -> list[str] | None:
        """The message as text parts (one for a string), or None without a message."""
        if self.message is None:
            return None
        if isinstance(self.message, str):
            return [self.message]
        return [part.text or "" for part in self.message]


class CreateSessionBody(_TurnBody):
    """`POST /session`: an optional first message (with its turn's `clientContext`/`outputSchema`)."""

    operation_id: str | None = None
    stubs: JsonValue | None = None

    @model_validator(mode="after")
    def _turn_fields_need_a_message(self) -> CreateSessionBody:
        if self.message is None and (self.client_context is not None or self.output_schema is not None):
            raise ValueError("clientContext and outputSchema need a message on the create request")
        if self.stubs is not None:
            raise ValueError("tool stubs are not supported by eve-py")
        return self


class Answer(CamelModel):
    """eve 1.0's answer to one interaction: `{interactionId, optionId?, text?}`.

    eve-py's extensions, which eve 1.0's schema has no field for: `value` (a typed answer checked
    against the request's schema), `action` (accept, decline or cancel a form or elicitation) and
    `editedInput` (an approval's edit, for tools defined with `editable=True`).
    """

    interaction_id: str = Field(min_length=1)
    option_id: str | None = Field(default=None, min_length=1)
    text: str | None = None
    value: JsonValue | None = None
    action: Literal["accept", "decline", "cancel"] | None = None
    edited_input: JsonObject | None = None

    def input_response(self) -> InputResponse:
        """The same answer in eve-py's own terms (`requestId` for `interactionId`)."""
        return InputResponse(
            request_id=self.interaction_id,
            option_id=self.option_id,
            text=self.text,
            value=self.value,
            action=self.action,
            edited_input=self.edited_input,
        )


class SessionInputBody(_TurnBody):
    """`POST /session/{id}`: exactly one of `message`, `answers` (eve 1.0) or `inputResponses` (eve 0.80.1).

    `idempotencyKey` (1-256 characters) and `inbox` (the opaque token an eve 1.0 server may put in
    a receipt, which its client echoes) are eve 1.0's; eve-py issues no `inbox` and ignores one.
    """

    input_responses: list[InputResponse] | None = Field(default=None, min_length=1)
    answers: list[Answer] | None = Field(default=None, min_length=1)
    turn_policy: Literal["steer", "queue"] | None = None
    idempotency_key: str | None = Field(default=None, min_length=1, max_length=256)
    inbox: str | None = None

    @model_validator(mode="after")
    def _exactly_one(self) -> SessionInputBody:
        given = [self.message is not None, self.input_responses is not None, self.answers is not None]
        if not any(given):
            raise ValueError("Expected a non-empty 'message' or a non-empty 'answers' array.")
        if sum(given) > 1:
            raise ValueError("A follow-up accepts exactly one of 'message', 'answers' or 'inputResponses'.")
        return self

    def responses(self) -> list[InputResponse] | None:
        """The answers, in eve-py's terms, or None for a message."""
        if self.answers is not None:
            return [answer.input_response() for answer in self.answers]
        return self.input_responses


class EndBody(CamelModel):
    """`POST /session/{id}/end` (and eve 0.80.1's `/reset`): optionally why."""

    reason: str | None = Field(default=None, min_length=1)


class CancelBody(CamelModel):
    """`POST /session/{id}/cancel`: optionally the turn to cancel.

    eve 1.0 sends `{"turnId": null}` as a guard meaning "no turn observed": it cancels nothing that
    runs. `guarded` tells that apart from a body without the field.
    """

    turn_id: str | None = Field(default=None, min_length=1)

    @property
    def guarded(self) -> bool:
        """Whether the body named a turn (`turnId`, null included)."""
        return "turn_id" in self.model_fields_set


ResetBody = EndBody


def bad_request(message: str) -> ApiError:
    """A 400 `bad_request` error."""
    return ApiError(message, status=400, code="bad_request")


def parse_body(model: type[_M], raw: Any) -> _M:
    """Validate a decoded JSON body (None for an empty body).

    Raises:
        ApiError: 400 with every problem listed; 415 for a message part that is not text (raised
            by the validator itself, which pydantic lets through).
    """
    if raw is not None and not isinstance(raw, dict):
        raise bad_request("Expected a JSON object.")
    try:
        return model.model_validate({} if raw is None else raw)
    except ValidationError as exc:
        raise bad_request(f"Invalid request body: {describe_validation_error(exc, root='(body)')}") from exc


_STATUSES: tuple[tuple[type[EveError], int, str], ...] = (
    # First match wins: subclasses come before the classes they refine.
    (SessionNotFoundError, 404, "session_not_found"),
    (InvalidMessageError, 400, "invalid_message"),
    (RequestAlreadyAnsweredError, 409, "request_already_answered"),
    (RequestExpiredError, 409, "request_expired"),
    (NotAnApproverError, 403, "not_an_approver"),
    (UnknownRequestError, 422, "unknown_request"),
    (EditNotAllowedError, 422, "edit_not_allowed"),
    (InputResponseError, 422, "invalid_answer"),
    (SessionNotWaitingError, 409, "session_not_waiting"),
    (SessionStateError, 409, "session_not_ready"),
    (SessionConflictError, 409, "conflict"),
    (SessionError, 409, "session_error"),
    (ModelConfigurationError, 500, "model_not_configured"),
    (StoreUnavailableError, 503, "store_unavailable"),
)


def error_status(exc: EveError) -> tuple[int, str]:
    """The HTTP status and error code for an error (500 `internal_error` for the unexpected)."""
    if isinstance(exc, ApiError):
        return exc.status, exc.code
    for kind, status, code in _STATUSES:
        if isinstance(exc, kind):
            return status, code
    return 500, "internal_error"


RETRY_AFTER_S = 5
"""What a 503 `store_unavailable` asks a client to wait before trying again (a database restart takes seconds)."""


def error_body(exc: EveError, *, message: str | None = None) -> dict[str, Any]:
    """eve's JSON body for an error: `{"ok": false, "error": "<text>", "code": "<code>", ...}`."""
    _, code = error_status(exc)
    if message is None and isinstance(exc, StoreUnavailableError):
        # Its own message names the database's host, user and name: for the server's log only.
        message = f"The session store cannot be reached now; try again in {RETRY_AFTER_S} s."
    if message is None:
        message = (exc.http_message if isinstance(exc, SessionError) else None) or str(exc)
    body: dict[str, Any] = {"ok": False, "error": message, "code": code}
    if isinstance(exc, InputResponseError) and exc.request_id:
        body["requestId"] = exc.request_id
    if isinstance(exc, SessionStateError):
        body["status"] = exc.status
    return body


def error_headers(exc: EveError) -> dict[str, str] | None:
    """The headers of an error's response: `WWW-Authenticate` with a 401, `Retry-After` with a 503."""
    if isinstance(exc, AuthenticationError):
        return {"www-authenticate": 'Bearer realm="eve"'}
    if isinstance(exc, StoreUnavailableError):
        return {"retry-after": str(RETRY_AFTER_S)}
    return None


def error_response(exc: EveError, headers: dict[str, str] | None = None) -> Response:
    """eve's error response for `exc` (its status, body and headers), with `headers` added.

    A store outage is logged here in full: the client is told less (the database's host, user
    and name stay in the server's log).
    """
    status, _ = error_status(exc)
    if isinstance(exc, StoreUnavailableError):
        _log.warning("%s", exc)
    return JSONResponse(error_body(exc), status_code=status, headers=(error_headers(exc) or {}) | (headers or {}))


def json_errors(
    handler: Callable[[_S, Request], Awaitable[Response]],
) -> Callable[[_S, Request], Awaitable[Response]]:
    """Turn the eve-py errors a route method raises into eve's `{ok: false, error, code}` responses."""

    async def wrapped(self: _S, request: Request) -> Response:
        try:
            return await handler(self, request)
        except EveError as exc:
            return error_response(exc)

    wrapped.__name__ = handler.__name__
    wrapped.__doc__ = handler.__doc__
    return wrapped


def decode_json(raw: bytes) -> Any:
    """Strict JSON (no NaN or Infinity), bounded nesting, no lone surrogates (`strict_loads`).

    Raises:
        ApiError: 400 saying which rule the body breaks.
    """
    try:
        return strict_loads(raw)
    except ValueError as exc:  # invalid UTF-8 (UnicodeDecodeError) is a ValueError too
        raise bad_request(f"Invalid JSON body: {exc}") from None


def too_large(limit: int) -> EveError:
    """A 413 `payload_too_large` error."""
    return ApiError(f"The body is larger than {limit} bytes.", status=413, code="payload_too_large")
