"""Ask a person in a terminal for the answer to one input request, re-asking until it fits.

Rendering by `display`: numbered options for `select` (a typed picker takes numbers, ids or
labels, several comma-separated), y/n for `confirmation`, one prompt per field for a flat
`schema` (each field checked as it is typed, formats included, so a bad field is asked again
on its own) or one JSON prompt for any other schema, a plain prompt for `text`. Every answer is
checked with the same rules `respond()` uses before it is sent, so a typo costs one re-ask,
never a rejected batch.

Commands at any prompt: `/skip` (leave this question unanswered), `/help` (what to type here),
`/quit` (raises `QuitChat`; the caller keeps what was answered).
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Awaitable, Callable
from typing import Any

from eve_py._json import JsonSchema, JsonValue
from eve_py.cli._deadlines import time_left
from eve_py.errors import InvalidAnswerError
from eve_py.parking._answers import check_response, match_option, pick_field
from eve_py.protocol.requests import InputRequest, InputResponse

__all__ = ("Ask", "QuitChat", "Say", "ask_request", "describe_answer")

Ask = Callable[[str], Awaitable[str]]
"""Reads one line after showing a prompt; raises EOFError when input ends."""
Say = Callable[[str], None]
"""Shows one line to the person."""

_SKIP = "/skip"
_QUIT = ("/quit", "/exit")
_HELP = "/help"

_FORMAT_HINTS = {
    "date": "YYYY-MM-DD",
    "date-time": "YYYY-MM-DDTHH:MM:SSZ",
    "time": "HH:MM:SS+00:00",
    "email": "name@example.com",
    "uri": "https://...",
}
"""What to type for a string field's `format`, shown in its prompt."""


class QuitChat(Exception):  # noqa: N818 - a request to leave, not an error
    """The person typed `/quit` at a question."""


class _Skip(Exception):  # noqa: N818
    """The person typed `/skip`."""


def _several(count: int) -> str:
    """An example of several picks among `count` options (`1,3`, or `1,2` when there are two)."""
    return f"1,{min(count, 3)}"


def _help(request: InputRequest) -> list[str]:
    if request.kind == "tool-approval":
        first = f"type y to let {request.action.tool_name} run, or n to stop it (you may then give a reason)"
        if request.edit_schema is not None:
            first += "; e changes its input first (Enter keeps a value), then lets it run"
    elif pick_field(request) is not None or request.options:
        count = len(request.options or [])
        first = f"type a number from 1 to {count}, or an option's id or label"
        picks = pick_field(request)
        if picks is not None and picks[1] and count > 1:
            first += f"; several picks are separated by commas, e.g. {_several(count)}"
    elif request.response_schema is not None:
        first = "type each field's value; an optional field may be left empty"
    else:
        first = "type your answer"
    return [
        f"  {first}",
        f"  {_SKIP} leaves this question unanswered; {_QUIT[0]} leaves the chat (your answers so far are kept)",
    ]


async def _line(ask: Ask, prompt: str, request: InputRequest, say: Say) -> str:
    """Read one line, handling the commands; /help shows the request's help and asks again."""
    while True:
        raw = (await ask(prompt)).strip()
        if raw == _HELP:
            for line in _help(request):
                say(line)
            continue
        if raw in _QUIT:
            raise QuitChat
        if raw == _SKIP and request.kind != "tool-approval":
            raise _Skip
        return raw


async def ask_request(request: InputRequest, ask: Ask, say: Say, *, now: float | None = None) -> InputResponse:
    """Show `request` and read answers until one is valid.

    A request with a deadline shows the time left to answer it beside its prompt.

    Args:
        request: The request to ask.
        ask: Reads the person's lines.
        say: Shows a line.
        now: The Unix time the time left is counted from (default: the clock's).

    Raises:
        EOFError: Input ended before a valid answer.
        QuitChat: The person typed `/quit`.
    """
    say("")
    left = time_left(request, time.time() if now is None else now)
    say(f"? {request.prompt}" + (f" - {left}" if left else ""))
    shown = {k: v for k, v in request.action.input.items() if k not in ("prompt", "options", "allowFreeform", "ui")}
    if request.kind == "tool-approval" and shown:
        say(f"  {request.action.tool_name} will run with: {_plain(shown)}")
    elif shown:
        say(f"  ({request.action.tool_name}: {_plain(shown)})")
    listed = [] if request.kind == "tool-approval" else request.options or []  # an approval is y/n
    for index, option in enumerate(listed, start=1):
        detail = f" - {option.description}" if option.description else ""
        say(f"  {index}. {option.label}{detail}")
    while True:
        try:
            response = await _read(request, ask, say)
        except _Skip:
            response = InputResponse(request_id=request.request_id, action="decline")
        except ValueError as exc:
            say(f"  ! {exc}")
            continue
        try:
            return check_response(request, response)
        except InvalidAnswerError as exc:
            say(f"  ! {_for_person(request, str(exc).split(': ', 1)[-1])}")


async def _read(request: InputRequest, ask: Ask, say: Say) -> InputResponse:
    request_id = request.request_id
    if request.display == "confirmation" or request.kind == "tool-approval":
        editable = request.edit_schema is not None
        choices = "y/n/e" if editable else "y/n"
        answer = (await _line(ask, f"  Let {request.action.tool_name} run? [{choices}] ", request, say)).lower()
        if answer in ("y", "yes", "approve"):
            return InputResponse(request_id=request_id, option_id="approve")
        if answer in ("n", "no", "deny"):
            reason = await _line(ask, "  Reason (optional, Enter to skip): ", request, say)
            return InputResponse(request_id=request_id, option_id="deny", text=reason or None)
        if editable and answer in ("e", "edit"):
            edited = await _read_edit(request, ask, say)
            return InputResponse(request_id=request_id, option_id="approve", edited_input=edited)
        raise ValueError(
            "type y to approve, n to deny or e to change its input" if editable else "type y to approve or n to deny"
        )
    picks = pick_field(request)
    if picks is not None:
        field, many = picks
        count = len(request.options or [])
        hint = f"1-{count}, several: {_several(count)}" if many and count > 1 else f"1-{count}"
        raw = await _line(ask, f"  Pick ({hint}): ", request, say)
        ids = _picks(request, raw)
        if not ids:
            raise ValueError(f"pick at least one option (a number from 1 to {count}), or {_SKIP}")
        if not many and len(ids) > 1:
            raise ValueError("pick one option only")
        return InputResponse(request_id=request_id, value={field: list(ids) if many else ids[0]})
    schema = request.response_schema
    if schema is not None:
        return await _read_value(request, schema, ask, say)
    if request.options:
        hint = f"1-{len(request.options)}" + (", or your own words" if request.allow_freeform else "")
        text = await _line(ask, f"  Answer ({hint}): ", request, say)
    else:
        text = await _line(ask, "  Answer: ", request, say)
    return InputResponse(request_id=request_id, text=text)


def _picks(request: InputRequest, raw: str) -> list[str]:
    """The option ids a comma-separated answer names, in order.

    Raises:
        ValueError: A token names no option (and free text is not allowed), or an option twice.
    """
    ids: list[str] = []
    for token in (part.strip() for part in raw.split(",")):
        if not token:
            continue
        option_id = _option_id(request, token)
        if option_id in ids:
            raise ValueError(f"{_label(request, option_id)!r} is picked twice; name each option once")
        ids.append(option_id)
    return ids


def _label(request: InputRequest, option_id: str) -> str:
    return next((o.label for o in request.options or [] if o.id == option_id), option_id)


def _option_id(request: InputRequest, token: str) -> str:
    """The id of the option `token` names (its id, label or 1-based number, as `respond()` matches).

    Raises:
        ValueError: The request has options and `token` names none of them.
    """
    matched = match_option(request, token)
    if matched is not None:
        return matched
    options = request.options or []
    if options and not request.allow_freeform:
        raise ValueError(f"{token!r} is not one of the options; answer with a number from 1 to {len(options)}")
    return token


async def _read_edit(request: InputRequest, ask: Ask, say: Say) -> dict[str, JsonValue]:
    """An approval's edited input, field by field: Enter keeps the model's value, JSON sets a non-flat one."""
    schema = request.edit_schema or {}
    edited: dict[str, JsonValue] = dict(request.action.input)
    for name, spec in schema.get("properties", {}).items():
        kind = _field_kind(spec)
        current = edited.get(name)
        shown = "" if name not in edited else (_plain(current) if kind is not None else json.dumps(current))
        raw = await _line(ask, f"  {_title(name, spec)} [{shown}]: ", request, say)
        if raw == "":
            continue
        if "enum" in spec:
            edited[name] = _enum_choice(spec["enum"], raw)
        elif kind is not None:
            edited[name] = _convert(request, kind, raw)
        else:
            try:
                edited[name] = json.loads(raw)
            except json.JSONDecodeError:
                raise ValueError(f"{_title(name, spec)} takes a JSON value here") from None
    return edited


def _title(name: str, spec: dict[str, Any]) -> str:
    title = spec.get("title")
    return str(title) if title else name.replace("_", " ")


async def _read_value(request: InputRequest, schema: JsonSchema, ask: Ask, say: Say) -> InputResponse:
    """Read a structured value: field by field for flat object schemas (each field checked on its own), else JSON."""
    request_id = request.request_id
    properties: dict[str, Any] = schema.get("properties", {}) if schema.get("type") == "object" else {}
    flat = properties and all(_field_kind(spec) is not None for spec in properties.values())
    if not flat:
        say(f"  (a JSON value matching {json.dumps(schema, separators=(',', ':'))})")
        raw = await _line(ask, "  Answer as JSON: ", request, say)
        try:
            return InputResponse(request_id=request_id, value=json.loads(raw))
        except json.JSONDecodeError:
            return InputResponse(request_id=request_id, text=raw)
    required = set(schema.get("required", []))
    value: dict[str, JsonValue] = {}
    for name, spec in properties.items():
        while True:
            got = await _read_field(request, name, spec, name in required, ask, say)
            if got is _EMPTY:  # left empty: optional, so not sent
                break
            problem = _field_problem(request, name, spec, got)
            if problem is None:
                value[name] = got
                break
            say(f"  ! {problem}")
    return InputResponse(request_id=request_id, value=value)


_EMPTY: JsonValue = {"_eve_empty_field": True}
"""An optional field left empty (compared by identity)."""


async def _read_field(
    request: InputRequest, name: str, spec: dict[str, Any], required: bool, ask: Ask, say: Say
) -> JsonValue:
    kind = _field_kind(spec)
    if spec.get("description"):
        say(f"  {_title(name, spec)}: {spec['description']}")
    details = []
    if "enum" in spec:
        details.append(" ".join(f"{n}={choice}" for n, choice in enumerate(spec["enum"], start=1)))
    elif kind == "boolean":
        details.append("y/n")
    elif kind == "list":
        details.append("comma-separated")
    elif kind in ("integer", "number"):
        details.append("a whole number" if kind == "integer" else "a number")
    elif spec.get("format") in _FORMAT_HINTS:
        details.append(_FORMAT_HINTS[spec["format"]])
    if not required:
        details.append("optional")
    suffix = f" ({', '.join(details)})" if details else ""
    while True:
        raw = await _line(ask, f"  {_title(name, spec)}{suffix}: ", request, say)
        if raw == "" and not required:
            return _EMPTY
        if raw == "":
            say(f"  ! {_title(name, spec)} is required")
            continue
        if "enum" in spec:
            return _enum_choice(spec["enum"], raw)
        try:
            return _convert(request, kind, raw)
        except ValueError as exc:
            say(f"  ! {exc}")


_EDIT_PROBLEM = re.compile(r"^editedInput fails the tool's input schema at (?P<field>[^:]+): ")


def _for_person(request: InputRequest, problem: str) -> str:
    """An answer's problem in the terminal's words: an edit's field by its prompt's label, not the wire's name."""
    properties = (request.edit_schema or {}).get("properties", {})

    def label(match: re.Match[str]) -> str:
        field = match["field"]
        spec = properties.get(field)
        return f"{_title(field, spec) if isinstance(spec, dict) else field}: "

    return _EDIT_PROBLEM.sub(label, problem)


def _field_problem(request: InputRequest, name: str, spec: dict[str, Any], value: JsonValue) -> str | None:
    """Why `value` does not fit field `name` (its own schema, formats included), or None."""
    alone = request.model_copy(
        update={"response_schema": {"type": "object", "properties": {name: spec}, "required": [name]}, "options": None}
    )
    try:
        check_response(alone, InputResponse(request_id=request.request_id, value={name: value}))
    except InvalidAnswerError as exc:
        detail = str(exc).split(": ", 1)[-1]
        return detail.split(f"at {name}: ", 1)[-1]
    return None


def _enum_choice(choices: list[JsonValue], raw: str) -> JsonValue:
    """The enum value `raw` names: by its 1-based number or its text (any case); else `raw` (the check says why)."""
    if raw.isdigit() and 1 <= int(raw) <= len(choices):
        return choices[int(raw) - 1]
    return next((choice for choice in choices if str(choice).casefold() == raw.casefold()), raw)


def _field_kind(spec: dict[str, Any]) -> str | None:
    kind = spec.get("type")
    if kind in ("string", "integer", "number", "boolean"):
        return str(kind)
    if "enum" in spec:
        return "string"
    if kind == "array" and spec.get("items", {}).get("type") == "string":
        return "list"
    return None


def _convert(request: InputRequest, kind: str | None, raw: str) -> JsonValue:
    """Best-effort conversion; whatever does not convert is passed on and fails the schema check."""
    if kind == "list":
        return [token.strip() for token in raw.split(",") if token.strip()]
    if kind == "boolean":
        return {"y": True, "yes": True, "true": True, "n": False, "no": False, "false": False}.get(raw.lower(), raw)
    if kind in ("integer", "number"):
        try:
            number = float(raw)
        except ValueError:
            return raw
        return int(number) if kind == "integer" and number.is_integer() else number
    return raw


def _plain(value: JsonValue) -> str:
    """A JSON value in words: yes/no, lists joined by commas, objects as `key: value` pairs."""
    if value is None:
        return "-"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, list):
        return ", ".join(_plain(item) for item in value) or "none"
    if isinstance(value, dict):
        return "; ".join(f"{key}: {_plain(item)}" for key, item in value.items())
    return str(value)


def describe_answer(request: InputRequest, response: InputResponse) -> str:
    """What an answer chose, in the words the question showed (labels, not ids)."""
    if response.action in ("decline", "cancel"):
        return "skipped"
    if request.kind == "tool-approval":
        verdict = "approved" if response.option_id == "approve" else "denied"
        if response.edited_input is not None:
            return f"approved with your changes: {_plain(response.edited_input)}"
        return f"{verdict}: {response.text}" if response.text else verdict
    picks = pick_field(request)
    value = response.value
    if picks is not None and isinstance(value, dict) and picks[0] in value:
        picked = value[picks[0]]
        ids = picked if isinstance(picked, list) else [picked]
        return ", ".join(_label(request, str(option_id)) for option_id in ids)
    if value is not None:
        return _plain(value)
    if response.option_id is not None:
        return _label(request, response.option_id)
    return repr(response.text or "")
