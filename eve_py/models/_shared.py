"""Pieces both provider adapters use: call ids on the wire, tool output text, argument parsing."""

from __future__ import annotations

import hashlib
import json
import re

from eve_py._json import JsonObject, JsonValue, strict_loads
from eve_py.protocol.messages import ToolResultPart

__all__ = ("dumps", "output_text", "parse_arguments", "wire_call_id")


def dumps(value: JsonValue) -> str:
    """Compact JSON text (UTF-8 kept as is)."""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def wire_call_id(call_id: str, *, pattern: re.Pattern[str], max_length: int, prefix: str) -> str:
    """A tool call id the provider accepts, the same for the call and its result.

    Ids that already fit (every id the same provider issued) pass unchanged. Others, e.g.
    `mock-call-0-0#2` from `MockModel` or an id from another provider, become `prefix` plus a
    digest of the original, so a conversation can move between providers and stay paired.
    """
    if len(call_id) <= max_length and pattern.fullmatch(call_id):
        return call_id
    digest = hashlib.sha256(call_id.encode()).hexdigest()
    return f"{prefix}{digest[: max(8, max_length - len(prefix))]}"


def output_text(part: ToolResultPart) -> str:
    """A tool result's output as the text a provider is sent: strings as they are, else JSON."""
    return part.output if isinstance(part.output, str) else dumps(part.output)


def parse_arguments(text: str) -> tuple[JsonObject, str | None]:
    """Parse a tool call's argument text.

    Returns:
        `(input, None)` for a JSON object (empty text counts as `{}`), or `({}, reason)` when
        the text is not a standard JSON object (NaN, Infinity and lone surrogates are not JSON,
        nor is nesting too deep to read); the harness then gives the call an error result.
    """
    if not text.strip():
        return {}, None
    try:
        value = strict_loads(text)
    except ValueError as exc:
        return {}, f"invalid JSON: {exc}"
    if not isinstance(value, dict):
        return {}, f"expected a JSON object, got {type(value).__name__}"
    return value, None
