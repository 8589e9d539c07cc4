"""A frontend's answer as eve-py's `InputResponse`: a value for a question or client tool, or an approval's decision.

AG-UI's resume payloads (`eve_py.server._ag_ui_events`) and the AI SDK's tool outputs and
approval responses (`eve_py.server._ai_sdk_history`) both end here, so an answer means the
same whichever frontend sent it. `Session.respond` checks it against its request afterwards.
"""

from __future__ import annotations

from eve_py._json import JsonObject, JsonValue
from eve_py.errors import InvalidAnswerError
from eve_py.protocol.requests import InputRequest, InputResponse

__all__ = ("approval_answer", "value_answer")


def value_answer(request_id: str, request: InputRequest | None, payload: JsonValue) -> InputResponse:
    """The answer to a question or client tool: an offered option's id, free text, or a structured value.

    A string naming an offered option answers with that option; a string for a request without
    a schema is free text; anything else is the value its schema checks. With no request (not
    open), the payload is kept as a value, so `Session.respond` names the error.
    """
    if request is not None and isinstance(payload, str):
        if payload in request.option_ids():
            return InputResponse(request_id=request_id, option_id=payload)
        if request.response_schema is None:
            return InputResponse(request_id=request_id, text=payload)
    return InputResponse(request_id=request_id, value=payload)


def approval_answer(
    request_id: str, approved: bool, reason: str | None = None, edited: JsonObject | None = None
) -> InputResponse:
    """The answer to an approval: approve (optionally with an edited input) or deny (with a reason).

    Raises:
        InvalidAnswerError: An edited input with a denial.
    """
    if approved:
        return InputResponse(request_id=request_id, option_id="approve", edited_input=edited)
    if edited is not None:
        raise InvalidAnswerError(
            f"Approval {request_id!r}: an edited input goes only with an approval.", request_id=request_id
        )
    return InputResponse(request_id=request_id, option_id="deny", text=reason)
