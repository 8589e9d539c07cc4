"""Ask a person in a terminal for the answer to one input request, re-asking until it fits.

Rendering by `display`: numbered options for `select`, y/n for `confirmation`, one prompt per
field (or one JSON prompt) for a `schema`, a plain prompt for `text`. Every answer is checked
with the same rules `respond()` uses before it is sent, so a typo costs one re-ask, never a
rejected batch.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from typing import Any

from eve_py._json import JsonSchema, JsonValue
from eve_py.errors import InvalidAnswerError
from eve_py.parking.answers import check_response, match_option
from eve_py.parking.requests import InputRequest, InputResponse

__all__ = ("Ask", "Say", "ask_request")

Ask = Callable[[str], Awaitable[str]]
"""Reads one line after showing a prompt; raises EOFError when input ends."""
Say = Callable[[str], None]
"""Shows one line to the person."""

_SKIP = "/skip"


async def ask_request(request: InputRequest, ask: Ask, say: Say) -> InputResponse:
    """Show `request` and read answers until one is valid.

    Raises:
        EOFError: Input ended before a valid answer.
    """
    say("")
    say(f"? {request.prompt}")
    shown = {k: v for k, v in request.action.input.items() if k not in ("prompt", "options", "allowFreeform")}
    if shown:
        say(f"  ({request.action.tool_name} {json.dumps(shown, ensure_ascii=False)})")
    for index, option in enumerate(request.options or [], start=1):
        detail = f" - {option.description}" if option.description else ""
        say(f"  {index}. {option.label} [{option.id}]{detail}")
    while True:
        try:
            response = await _read(request, ask)
        except ValueError as exc:
            say(f"  ! {exc}")
            continue
        try:
            return check_response(request, response)
        except InvalidAnswerError as exc:
            say(f"  ! {str(exc).split(': ', 1)[-1]}")


async def _read(request: InputRequest, ask: Ask) -> InputResponse:
    request_id = request.request_id
    if request.display == "confirmation":
        answer = (await ask(f"  Approve {request.action.tool_name}? [y/n] ")).strip().lower()
        if answer in ("y", "yes", "approve"):
            return InputResponse(request_id=request_id, option_id="approve")
        if answer in ("n", "no", "deny"):
            reason = (await ask("  Reason (optional): ")).strip()
            return InputResponse(request_id=request_id, option_id="deny", text=reason or None)
        return InputResponse(request_id=request_id, text=answer)
    schema = request.response_schema
    if schema is not None:
        return await _read_value(request, schema, ask)
    hint = "number, id or label" if request.options else "your answer"
    if request.options and request.allow_freeform:
        hint += ", or free text"
    text = (await ask(f"  Answer ({hint}; {_SKIP} to skip): ")).strip()
    if text == _SKIP:
        return InputResponse(request_id=request_id, action="decline")
    return InputResponse(request_id=request_id, text=text)


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


async def _read_value(request: InputRequest, schema: JsonSchema, ask: Ask) -> InputResponse:
    """Read a structured value: field by field for flat object schemas, else as JSON."""
    request_id = request.request_id
    properties: dict[str, Any] = schema.get("properties", {}) if schema.get("type") == "object" else {}
    flat = properties and all(_field_kind(spec) is not None for spec in properties.values())
    if not flat:
        raw = (await ask(f"  Answer as JSON matching {json.dumps(schema)} ({_SKIP} to skip): ")).strip()
        if raw == _SKIP:
            return InputResponse(request_id=request_id, action="decline")
        try:
            return InputResponse(request_id=request_id, value=json.loads(raw))
        except json.JSONDecodeError:
            return InputResponse(request_id=request_id, text=raw)
    required = set(schema.get("required", []))
    value: dict[str, JsonValue] = {}
    for name, spec in properties.items():
        kind = _field_kind(spec)
        label = spec.get("description") or spec.get("title") or name
        optional = "" if name in required else ", optional"
        if kind == "list":
            choices = "numbers or ids, comma-separated" if request.options else "comma-separated"
            raw = (await ask(f"  {name} - {label} ({choices}{optional}; {_SKIP} to skip): ")).strip()
        else:
            enum = f" one of {spec['enum']}" if "enum" in spec else ""
            raw = (await ask(f"  {name} - {label} ({kind}{enum}{optional}; {_SKIP} to skip): ")).strip()
        if raw == _SKIP:
            return InputResponse(request_id=request_id, action="decline")
        if raw == "" and name not in required:
            continue
        value[name] = _convert(request, kind, raw)
    return InputResponse(request_id=request_id, value=value)


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
        return [_option_id(request, token.strip()) for token in raw.split(",") if token.strip()]
    if kind == "boolean":
        return {"y": True, "yes": True, "true": True, "n": False, "no": False, "false": False}.get(raw.lower(), raw)
    if kind in ("integer", "number"):
        try:
            number = float(raw)
        except ValueError:
            return raw
        return int(number) if kind == "integer" and number.is_integer() else number
    return _option_id(request, raw) if request.options else raw
