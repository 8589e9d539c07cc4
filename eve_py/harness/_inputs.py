"""What a person sends, checked before anything is written: a turn's input and the answers to a batch.

A message, its client context and output schema, and every answer are refused here when a store
could not keep them as given (NaN, Infinity, a lone UTF-16 surrogate) or they are malformed, so a
refused input leaves the session exactly as it was.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from pydantic import ValidationError

from eve_py._camel import describe_validation_error
from eve_py._json import JsonSchema, JsonValue, canonical_dumps, json_problem
from eve_py.errors import InvalidAnswerError, InvalidMessageError
from eve_py.protocol import new_id
from eve_py.protocol.requests import InputResponse
from eve_py.protocol.turns import ClientTool, TurnInput
from eve_py.tools import ResolvedTool
from eve_py.tools._client import check_client_tools

__all__ = ("as_response", "check_turn_input", "context_text", "turn_input")


def context_text(context: str | Sequence[str] | Mapping[str, JsonValue] | None) -> str | None:
    """Client context as the model is shown it: a string as is, strings one per line, an object as JSON."""
    if context is None or isinstance(context, str):
        return context
    if isinstance(context, Mapping):
        return canonical_dumps(dict(context))
    return "\n".join(context)


def check_turn_input(fields: Mapping[str, object]) -> None:
    """Refuse what a turn would keep but could not store or send: NaN, Infinity, lone surrogates.

    Raises:
        InvalidMessageError: Says which field and why.
    """
    problem = json_problem(dict(fields))
    if problem is not None:
        raise InvalidMessageError(f"The turn's input cannot be stored: {problem}.")


def turn_input(
    message: str | Sequence[str],
    client_context: str | Sequence[str] | Mapping[str, JsonValue] | None,
    output_schema: JsonSchema | None,
    delivery_id: str | None,
    client_tools: Sequence[ClientTool] | None,
    app_tools: Mapping[str, ResolvedTool],
) -> TurnInput:
    """What `Session.send` was sent, checked, as the turn keeps it (see `Session.send` for each field).

    Raises:
        InvalidMessageError: No non-whitespace text, or NaN, Infinity or a lone surrogate somewhere.
        ToolDefinitionError: A client tool is invalid or has an app tool's name.
    """
    parts = [message] if isinstance(message, str) else list(message)
    if not "".join(parts).strip():
        raise InvalidMessageError("A message must contain some text (providers reject blank messages).")
    check_turn_input({"message": parts, "clientContext": client_context, "outputSchema": output_schema})
    if client_tools:
        check_client_tools(client_tools, app_tools)
        check_turn_input({"clientTools": [tool.to_wire() for tool in client_tools]})
    return TurnInput(
        parts=parts,
        delivery_id=delivery_id or new_id("dlv"),
        client_context=context_text(client_context),
        output_schema=output_schema,
        client_tools=list(client_tools) if client_tools else None,
    )


def as_response(raw: InputResponse | Mapping[str, Any]) -> InputResponse:
    """An `InputResponse`, from itself or its JSON form (`{"requestId": ..., ...}`).

    Raises:
        InvalidAnswerError: It is malformed, or not standard JSON (NaN, Infinity, a lone surrogate).
    """
    if isinstance(raw, InputResponse):
        response = raw
    else:
        try:
            response = InputResponse.model_validate(raw)
        except ValidationError as exc:
            request_id = raw.get("requestId", raw.get("request_id", "")) if isinstance(raw, Mapping) else ""
            raise InvalidAnswerError(
                _printable(
                    f"Malformed input response ({describe_validation_error(exc)}); "
                    "expected {requestId, optionId?, text?, value?, action?}"
                ),
                request_id=_printable(str(request_id)),
            ) from exc
    # NaN would be stored as null, a lone surrogate could not be stored at all: refused up front.
    fields = {"requestId": response.request_id, "optionId": response.option_id, "text": response.text}
    problem = json_problem({**fields, "value": response.value})
    if problem is not None:
        shown = _printable(response.request_id)
        raise InvalidAnswerError(f"Answer to request {shown!r} rejected: {problem}.", request_id=shown)
    return response


def _printable(text: str) -> str:
    """`text` with lone surrogates as `\\udxxx` escapes, so an error naming it can be logged and sent."""
    return text.encode("utf-8", "backslashreplace").decode("utf-8")
