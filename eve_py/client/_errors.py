"""The exception for an error response: eve's body `{ok: false, error, code}` read back into eve-py's errors."""

from __future__ import annotations

import json

import httpx

from eve_py.errors import (
    ApiError,
    AuthenticationError,
    EditNotAllowedError,
    EveError,
    InputResponseError,
    InvalidAnswerError,
    NotAnApproverError,
    RequestAlreadyAnsweredError,
    RequestExpiredError,
    SessionConflictError,
    SessionEndedError,
    SessionNotFoundError,
    SessionNotWaitingError,
    SessionStateError,
    UnknownRequestError,
)

__all__ = ("error_for",)


def _body(response: httpx.Response) -> tuple[str, str, dict[str, object]]:
    """(code, message, body) of an error response; eve-py 0.1's `{error: {code, message}}` is read too."""
    try:
        body = response.json()
    except json.JSONDecodeError:
        body = None
    if isinstance(body, dict):
        error = body.get("error")
        if isinstance(error, str):
            return str(body.get("code") or "http_error"), error, body
        if isinstance(error, dict) and isinstance(error.get("message"), str):
            return str(error.get("code") or "http_error"), str(error["message"]), error
    return "http_error", response.text[:500] or response.reason_phrase, {}


_ANSWER_ERRORS: dict[str, type[InputResponseError]] = {
    "request_already_answered": RequestAlreadyAnsweredError,
    "not_an_approver": NotAnApproverError,
    "request_expired": RequestExpiredError,
    "unknown_request": UnknownRequestError,
    "edit_not_allowed": EditNotAllowedError,
    "invalid_answer": InvalidAnswerError,
}
"""The refused answers, by the server's error code (each carries the offending `requestId`)."""


def error_for(response: httpx.Response) -> EveError:
    """The matching session error for an error response, else `ApiError` (`AuthenticationError` for 401)."""
    code, message, body = _body(response)
    request_id = str(body.get("requestId", ""))
    status = str(body.get("status", ""))
    if code == "session_not_found":
        parts = response.request.url.path.split("/session/", 1)
        return SessionNotFoundError(parts[1].split("/")[0] if len(parts) > 1 else "")
    if code == "session_not_active":
        return SessionEndedError(message, status="ended")
    answer_error = _ANSWER_ERRORS.get(code)
    if answer_error is not None:
        return answer_error(message, request_id=request_id)
    if code == "session_not_waiting":
        return SessionNotWaitingError(message, status=status)
    if code == "session_not_ready":
        return SessionStateError(message, status=status)
    if code == "conflict":
        return SessionConflictError(message)
    if response.status_code == 401:
        return AuthenticationError(message, status=401, code=code)
    return ApiError(message, status=response.status_code, code=code)
