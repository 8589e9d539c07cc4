"""Rich tool results: text, images, audio and embedded resources, in MCP's content-block shapes.

A tool returns one of these, or a list of them, to give its caller more than JSON:

```python
import base64
from pathlib import Path

from eve_py.protocol.content import EmbeddedResource, ImageContent, TextContent, TextResourceContents


def chart(city: str) -> list[TextContent | ImageContent | EmbeddedResource]:
    png = base64.b64encode(Path(f"charts/{city}.png").read_bytes()).decode()
    return [
        TextContent(text=f"Rainfall in {city}:"),
        ImageContent(data=png, mime_type="image/png"),
        EmbeddedResource(resource=TextResourceContents(uri=f"data://{city}.csv", mime_type="text/csv", text="...")),
    ]
```

Served over MCP (`eve-py mcp`) the blocks are the call's `content`, as they are. On eve's
wire and in the conversation a tool result holds their JSON (camelCase: `mimeType`), so the
wire shape is MCP's content-block shape, and `content_from_json` reads them back: an output that
is a non-empty list of exactly these shapes is content (as eve reads an MCP connection's
result). The model adapters send it as text and images (`eve_py.models`), the browser chat
shows it.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Annotated, Literal

from pydantic import Field, TypeAdapter, ValidationError

from eve_py._camel import CamelModel
from eve_py._json import JsonValue

__all__ = (
    "AudioContent",
    "BlobResourceContents",
    "ContentBlock",
    "EmbeddedResource",
    "ImageContent",
    "TextContent",
    "TextResourceContents",
    "content_blocks",
    "content_from_json",
)


class TextContent(CamelModel):
    """Text."""

    type: Literal["text"] = "text"
    text: str


class ImageContent(CamelModel):
    """An image: base64-encoded `data` of `mime_type` (`image/png`, `image/jpeg`, ...)."""

    type: Literal["image"] = "image"
    data: str
    mime_type: str


class AudioContent(CamelModel):
    """Audio: base64-encoded `data` of `mime_type` (`audio/wav`, `audio/mpeg`, ...)."""

    type: Literal["audio"] = "audio"
    data: str
    mime_type: str


class TextResourceContents(CamelModel):
    """A resource's text contents, named by `uri`."""

    uri: str
    mime_type: str | None = None
    text: str


class BlobResourceContents(CamelModel):
    """A resource's binary contents (base64 `blob`), named by `uri`."""

    uri: str
    mime_type: str | None = None
    blob: str


class EmbeddedResource(CamelModel):
    """A resource's contents, embedded in the result."""

    type: Literal["resource"] = "resource"
    resource: TextResourceContents | BlobResourceContents


ContentBlock = TextContent | ImageContent | AudioContent | EmbeddedResource
"""One block of a rich tool result."""

_BLOCKS = (TextContent, ImageContent, AudioContent, EmbeddedResource)


def content_blocks(value: object) -> list[ContentBlock] | None:
    """`value` as content blocks when a tool returned one block or a non-empty list of them, else None."""
    if isinstance(value, _BLOCKS):
        return [value]
    if isinstance(value, Sequence) and not isinstance(value, str) and value:
        if all(isinstance(block, _BLOCKS) for block in value):
            return list(value)
    return None


_BLOCK_LIST: TypeAdapter[list[ContentBlock]] = TypeAdapter(list[Annotated[ContentBlock, Field(discriminator="type")]])
_TYPES = frozenset({"text", "image", "audio", "resource"})


def content_from_json(output: JsonValue) -> list[ContentBlock] | None:
    """The content blocks a stored tool output holds, else None.

    An output is content when it is a non-empty list whose every item is exactly one block's
    JSON (camelCase, no other keys): what a tool that returned blocks is stored as. Any other
    output (an object, text, a list of other things) is JSON data.
    """
    if not isinstance(output, list) or not output:
        return None
    if not all(isinstance(item, dict) and item.get("type") in _TYPES for item in output):
        return None
    try:
        return _BLOCK_LIST.validate_python(output)
    except ValidationError:
        return None
