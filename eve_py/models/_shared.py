"""Pieces both provider adapters use: call ids on the wire, tool output text and images, argument parsing."""

from __future__ import annotations

import hashlib
import json
import re

from eve_py._json import JsonObject, JsonValue, strict_loads
from eve_py.protocol.content import (
    AudioContent,
    BlobResourceContents,
    ImageContent,
    TextContent,
    content_from_json,
)
from eve_py.protocol.messages import ToolResultPart

__all__ = ("MODEL_IMAGE_TYPES", "dumps", "output_text", "parse_arguments", "result_pieces", "wire_call_id")

MODEL_IMAGE_TYPES = frozenset({"image/png", "image/jpeg", "image/gif", "image/webp"})
"""The image types both Anthropic (`image` blocks) and OpenAI-compatible vision models (`image_url`) take."""


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


def result_pieces(part: ToolResultPart) -> list[str | ImageContent] | None:
    """A tool result whose output is content blocks, as what a model is sent; None for any other output.

    Text blocks are their text and an embedded text resource its URI and text; an image (or an
    embedded blob) of a type in `MODEL_IMAGE_TYPES` is an `ImageContent`; audio and any other
    blob become a one-line note naming its type and size, so no base64 reaches a prompt as text.
    """
    blocks = content_from_json(part.output)
    if blocks is None:
        return None
    pieces: list[str | ImageContent] = []
    for block in blocks:
        if isinstance(block, TextContent):
            pieces.append(block.text)
        elif isinstance(block, ImageContent) and block.mime_type in MODEL_IMAGE_TYPES:
            pieces.append(block)
        elif isinstance(block, ImageContent | AudioContent):
            pieces.append(_note(block.type, block.mime_type, block.data))
        elif isinstance(block.resource, BlobResourceContents):
            blob = block.resource
            if blob.mime_type in MODEL_IMAGE_TYPES:
                pieces.append(ImageContent(data=blob.blob, mime_type=blob.mime_type))
            else:
                pieces.append(_note("resource", blob.mime_type or "application/octet-stream", blob.blob, blob.uri))
        else:
            pieces.append(f"{block.resource.uri}\n{block.resource.text}")
    return pieces


def _note(kind: str, mime_type: str, data: str, uri: str | None = None) -> str:
    size = len(data) * 3 // 4 - data[-2:].count("=")
    named = f" {uri}" if uri else ""
    return f"[{kind}{named}: {mime_type}, {size:,} bytes, not shown to the model]"


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
