"""Check a person's answer against its request, and turn accepted answers into tool results.

An answer is checked completely before anything is written; an answer that does not fit
raises `InvalidAnswerError` and the session stays parked, unchanged.

- A question or client tool with a `schema`: `value` (or `text` holding JSON) that is valid
  against it, formats included (`date`, `date-time`, `time`, `email`, `uri`, ...: jsonschema's
  `FormatChecker` with the `format-nongpl` extra's checkers but `iri`); the tool result is the value. When the
  request offers options and its schema has exactly one required field holding a string or an
  array of strings (a typed picker such as `{pickedIds: [...]}`), a bare `optionId` answers it
  (`{pickedIds: [optionId]}`), and the picked ids must be offered options unless free text is
  allowed.
- A question or client tool without one: `optionId` (one that was offered) and/or `text`
  (free text when allowed, otherwise matched to an option's id, label or 1-based number); the
  result is `{status: "answered", optionId?, text?}`.
- Any question: `action` `decline`/`cancel`, or no answer in a settled batch, gives
  `{status: "ignored"}`.
- A tool approval: `optionId` `approve`/`deny` (or `action` accept/decline/cancel), `text`
  being a denial's reason; the result is the executor's output, or one error result. An
  editable tool's approval may carry `editedInput`, valid for the tool's input schema: the
  executor then runs with it.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Sequence

import jsonschema
import jsonschema.exceptions
import jsonschema.protocols

from eve_py._json import JsonSchema, JsonValue, strict_loads
from eve_py.errors import EditNotAllowedError, InvalidAnswerError
from eve_py.parking._compiled import compiled_check
from eve_py.protocol.pending import RecordedOutcome
from eve_py.protocol.requests import InputRequest, InputResponse

__all__ = (
    "DENIED_MESSAGE",
    "IGNORED_RESULT",
    "approval_decision",
    "check_response",
    "client_result",
    "denied_output",
    "elicitation_outcome",
    "first_schema_error",
    "match_option",
    "pick_field",
    "schema_validator",
    "text_answer",
)

DENIED_MESSAGE = "Tool execution was denied."
IGNORED_RESULT: dict[str, JsonValue] = {"status": "ignored"}


_FORMAT_HINTS = {
    "date": "YYYY-MM-DD, e.g. 2025-05-01",
    "date-time": "RFC 3339 with a time zone, e.g. 2025-05-01T09:30:00Z",
    "time": "RFC 3339 with a time zone, e.g. 09:30:00+02:00",
    "email": "e.g. ada@example.com",
    "uri": "an absolute URI with a scheme, e.g. https://example.com/page",
    "uuid": "e.g. 123e4567-e89b-12d3-a456-426614174000",
}
"""What a valid value looks like, for the formats people answer most."""


@functools.lru_cache(maxsize=256)
def _validator(canonical: str) -> jsonschema.protocols.Validator:
    schema = json.loads(canonical)
    return jsonschema.Draft202012Validator(schema, format_checker=jsonschema.Draft202012Validator.FORMAT_CHECKER)


def schema_validator(schema: JsonSchema) -> jsonschema.protocols.Validator:
    """The validator of answers to `schema` (JSON Schema 2020-12, formats checked).

    Built once per distinct schema and cached: a parked request is read back from the store on
    every answer, so the cache is keyed by the schema's canonical JSON, not by the dict.
    """
    return _validator(_canonical(schema))


_CANONICAL: dict[int, tuple[JsonSchema, str]] = {}
"""Recent schemas' canonical JSON by the dict's id (the dict kept alive, so the id stays its own)."""


def _canonical(schema: JsonSchema) -> str:
    """`schema` as canonical JSON; a schema seen lately (a tool's, a kept record's) is not encoded again.

    Schemas are never changed in place once eve-py holds them (tools are compiled, records are
    read, both then only read), so the dict's identity names its content.
    """
    kept = _CANONICAL.get(id(schema))
    if kept is not None and kept[0] is schema:
        return kept[1]
    canonical = json.dumps(schema, sort_keys=True, separators=(",", ":"))
    if len(_CANONICAL) >= 256:
        _CANONICAL.clear()
    _CANONICAL[id(schema)] = (schema, canonical)
    return canonical


def first_schema_error(
    schema: JsonSchema, value: JsonValue
) -> tuple[str, jsonschema.exceptions.ValidationError] | None:
    """The first of `value`'s errors against `schema` (in a stable order), and where it is: `a/0/b`, or `(root)`.

    A valid value of a schema `compiled_check` may judge is passed by it, in about a microsecond;
    anything else is found by `jsonschema` (the errors, the formats).
    """
    canonical = _canonical(schema)
    check = compiled_check(canonical)
    if check is not None and check(value):
        return None
    errors = sorted(_validator(canonical).iter_errors(value), key=str)
    if not errors:
        return None
    return "/".join(str(p) for p in errors[0].absolute_path) or "(root)", errors[0]


def _describe(error: jsonschema.exceptions.ValidationError) -> str:
    """`error`'s message; for a format, the value, the format and what a valid value looks like."""
    if error.validator != "format":
        return error.message
    fmt = str(error.validator_value)
    hint = _FORMAT_HINTS.get(fmt)
    return f'{error.instance!r} is not a valid {fmt} (format "{fmt}"{": " + hint if hint else ""})'


def match_option(request: InputRequest, text: str) -> str | None:
    """Match text to an option: its id (any case), its label (any case), then its 1-based number."""
    options = request.options or []
    wanted = text.strip().casefold()
    for option in options:
        if option.id.casefold() == wanted:
            return option.id
    for option in options:
        if option.label.casefold() == wanted:
            return option.id
    if wanted.isdigit() and 1 <= int(wanted) <= len(options):
        return options[int(wanted) - 1].id
    return None


def _invalid(request: InputRequest, message: str) -> InvalidAnswerError:
    return InvalidAnswerError(
        f"Answer to request {request.request_id!r} rejected: {message}", request_id=request.request_id
    )


def pick_field(request: InputRequest) -> tuple[str, bool] | None:
    """For a select with a schema holding exactly one required string (or string-array) field: that
    field's name and whether it is an array. An option id answers such a request."""
    schema = request.response_schema
    if not request.options or schema is None or schema.get("type") != "object":
        return None
    required = schema.get("required", [])
    properties = schema.get("properties", {})
    if len(required) != 1 or required[0] not in properties:
        return None
    spec = properties[required[0]]
    if spec.get("type") == "string":
        return required[0], False
    if spec.get("type") == "array" and spec.get("items", {}).get("type") == "string":
        return required[0], True
    return None


def check_response(request: InputRequest, response: InputResponse) -> InputResponse:
    """Validate one answer and return it normalized (a matched option id filled in).

    Raises:
        InvalidAnswerError: The answer does not fit the request.
    """
    if request.kind == "tool-approval":
        return _check_approval(request, response)
    if response.action in ("decline", "cancel"):
        return response
    if response.option_id is None and response.text is None and response.value is None:
        raise _invalid(request, "it is empty; give optionId, text or value (or action 'decline')")
    option_ids = request.option_ids()
    option_id = response.option_id
    if option_id is not None and option_id not in option_ids:
        offered = ", ".join(repr(o) for o in option_ids) or "none"
        raise _invalid(request, f"option {option_id!r} is not offered (offered: {offered})")

    if request.response_schema is not None:
        value = response.value
        picks = pick_field(request)
        if value is None and option_id is None and response.text is not None and picks is not None:
            # eve 1.0's client answers a picker by `text` too: an option's id, label or number picks it.
            option_id = match_option(request, response.text)
            response = response if option_id is None else response.model_copy(update={"option_id": option_id})
        if value is None and option_id is not None and picks is not None:
            # A select client (eve's own sends only optionId) picked an option: that is the value.
            field, many = picks
            value = {field: [option_id] if many else option_id}
        if value is None and response.text is not None:
            try:
                value = strict_loads(response.text)
            except ValueError as exc:
                matches = "matches no option and " if picks is not None else ""
                raise _invalid(
                    request, f"it needs a value matching the request's schema; text {matches}is not JSON ({exc})"
                ) from None
        if value is None:
            raise _invalid(request, "it needs a value matching the request's schema")
        found = first_schema_error(request.response_schema, value)
        if found is not None:
            where, error = found
            raise _invalid(request, f"value fails the schema at {where}: {_describe(error)}")
        if picks is not None and not request.allow_freeform and isinstance(value, dict):
            picked = value.get(picks[0])
            unknown = [p for p in (picked if isinstance(picked, list) else [picked]) if p not in option_ids]
            if unknown:
                offered = ", ".join(repr(o) for o in option_ids)
                raise _invalid(
                    request, f"{picks[0]} names options that are not offered: {unknown} (offered: {offered})"
                )
        keep_text = response.value is not None
        return response.model_copy(update={"value": value, "text": response.text if keep_text else None})

    if response.value is not None and request.kind == "question":
        raise _invalid(request, "this question takes optionId or text, not value (it declares no schema)")
    if option_id is None and response.text is not None and option_ids and not request.allow_freeform:
        matched = match_option(request, response.text)
        if matched is None:
            offered = ", ".join(f"{o.id!r} ({o.label})" for o in request.options or [])
            raise _invalid(
                request, f"{response.text!r} matches no option and free text is not allowed; pick one of {offered}"
            )
        return response.model_copy(update={"option_id": matched, "text": None})
    return response


def text_answer(requests: Sequence[InputRequest], text: str) -> InputResponse | None:
    """The answer a message's `text` gives the first of the open `requests`, or None when it gives none.

    eve 1.0's rule for a message sent while prompts are open: it answers the first open prompt
    (a question or an approval) when it fits it, as a typed answer would (an option's id, label
    or number, `yes`/`no` for an approval, any text where free text is allowed, JSON for a
    schema); a client tool's or a resolver's request takes no message. The answer is the
    checked one (`check_response`).
    """
    if not requests or requests[0].kind not in ("question", "tool-approval"):
        return None
    first = requests[0]
    try:
        return check_response(first, InputResponse(request_id=first.request_id, text=text))
    except InvalidAnswerError:
        return None


def _check_approval(request: InputRequest, response: InputResponse) -> InputResponse:
    checked = _approval_option(request, response)
    if checked.edited_input is not None:
        _check_edit(request, checked)
    return checked


def _approval_option(request: InputRequest, response: InputResponse) -> InputResponse:
    if response.value is not None:
        raise _invalid(request, "an approval takes optionId 'approve' or 'deny' (and an optional reason as text)")
    option_id = response.option_id
    if option_id is None and response.action is not None:
        option_id = "approve" if response.action == "accept" else "deny"
    if option_id is None and response.text is not None:
        option_id = match_option(request, response.text) or {
            "y": "approve",
            "yes": "approve",
            "n": "deny",
            "no": "deny",
        }.get(response.text.strip().casefold())
        if option_id is not None:
            return response.model_copy(update={"option_id": option_id, "text": None})
    if option_id not in ("approve", "deny"):
        raise _invalid(request, "an approval takes optionId 'approve' or 'deny'")
    return response.model_copy(update={"option_id": option_id})


def _check_edit(request: InputRequest, response: InputResponse) -> None:
    """An approval's `editedInput`: only for an editable tool, only with approve, valid for its input schema.

    Raises:
        EditNotAllowedError: The tool is not editable.
        InvalidAnswerError: The edit goes with a denial, names a parameter the model does not
            set (one a resolver fills, or none at all), or fails the schema (formats included).
    """
    schema = request.edit_schema
    if schema is None:
        raise EditNotAllowedError(
            f"Answer to request {request.request_id!r} rejected: the tool {request.action.tool_name!r} is not "
            "editable (define it with editable=True to let a person change its input when approving)",
            request_id=request.request_id,
        )
    if response.option_id != "approve":
        raise _invalid(request, "editedInput goes with optionId 'approve'; a denial runs nothing")
    edited = response.edited_input or {}
    settable = schema.get("properties", {})
    unknown = sorted(key for key in edited if key not in settable)
    if unknown:
        raise _invalid(
            request,
            f"editedInput sets {', '.join(map(repr, unknown))}, which the model does not set (the tool's "
            f"parameters: {', '.join(map(repr, settable)) or 'none'}; a resolver-filled one cannot be edited)",
        )
    found = first_schema_error(schema, edited)
    if found is not None:
        where, error = found
        raise _invalid(request, f"editedInput fails the tool's input schema at {where}: {_describe(error)}")


def client_result(request: InputRequest, answer: InputResponse | None) -> JsonValue:
    """The one tool result of a client-resolved call, from its (checked) answer or its absence."""
    if answer is None or answer.action in ("decline", "cancel"):
        return dict(IGNORED_RESULT)
    if request.response_schema is not None or answer.value is not None:
        return answer.value
    result: dict[str, JsonValue] = {"status": "answered"}
    if answer.option_id is not None:
        result["optionId"] = answer.option_id
    if answer.text is not None:
        result["text"] = answer.text
    return result


def approval_decision(answer: InputResponse | None) -> tuple[bool, str | None]:
    """(approved, reason) for a checked approval answer; no answer counts as denied."""
    if answer is None:
        return False, "Ignored because the user continued without responding."
    return answer.option_id == "approve", answer.text


def denied_output(reason: str | None) -> str:
    """The model-facing output of a denied call: `Tool execution was denied.` plus the reason."""
    return f"{DENIED_MESSAGE} Reason: {reason}" if reason else DENIED_MESSAGE


def elicitation_outcome(answer: InputResponse | None, digest: str) -> RecordedOutcome:
    """The recorded outcome of a resolver's question: accept (with the value), decline, or cancel.

    A question left unanswered in a settled batch counts as cancelled.
    """
    if answer is None or answer.action == "cancel":
        return RecordedOutcome(action="cancel", q=digest)
    if answer.action == "decline":
        return RecordedOutcome(action="decline", q=digest)
    return RecordedOutcome(action="accept", data=answer.value, q=digest)
