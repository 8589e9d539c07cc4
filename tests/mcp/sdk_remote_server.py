"""An MCP server written with the SDK's own `MCPServer`, for eve-py's connection tests.

`python server.py` serves it over stdio; `python server.py http PORT` over streamable HTTP on
127.0.0.1:PORT/mcp. Its tools report which process (and, over HTTP, which client connection) served them, crash
the process, ask the client's model (sampling) and roots, with the SDK's resolvers (mid-call
on the legacy era, `input_required` rounds on the 2026 era), and return content blocks that carry
annotations and `_meta`.
"""

import os
import sys
from typing import Annotated

from mcp.server.mcpserver import Context, ListRoots, MCPServer, Resolve, Sample
from mcp.types import Annotations, CreateMessageResult, ImageContent, ListRootsResult, SamplingMessage, TextContent

mcp = MCPServer("sdk-remote")


@mcp.tool()
def whoami(ctx: Context) -> str:
    """Which process serves this call, and (over HTTP) from which client port the request came."""
    request = getattr(ctx.request_context, "request", None)
    client = getattr(request, "client", None)
    return f"pid={os.getpid()} peer={client.port if client is not None else 'stdio'}"


@mcp.tool()
def crash() -> str:
    """Ends the server's process mid-call."""
    os._exit(3)


def ask_poem(topic: str) -> Sample:
    message = SamplingMessage(role="user", content=TextContent(type="text", text=f"Write a poem about {topic}"))
    return Sample([message], max_tokens=60, system_prompt="You are a poet.")


@mcp.tool()
def poem(topic: str, written: Annotated[CreateMessageResult, Resolve(ask_poem)]) -> str:
    """A poem the client's model writes."""
    content = written.content
    return content.text if isinstance(content, TextContent) else "?"


def ask_roots() -> ListRoots:
    return ListRoots()


@mcp.tool()
def where(roots: Annotated[ListRootsResult, Resolve(ask_roots)]) -> str:
    """The client's roots."""
    return " ".join(str(root.uri) for root in roots.roots)


PIXEL = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=="
"""A 1x1 PNG, base64."""


@mcp.tool()
def snapshot() -> list[TextContent | ImageContent]:
    """Blocks with the optional fields servers set: annotations and `_meta`."""
    hint = Annotations(audience=["user"], priority=0.5)
    return [
        TextContent(type="text", text="the chart", annotations=hint),
        ImageContent(type="image", data=PIXEL, mime_type="image/png", annotations=hint, _meta={"source": "test"}),
    ]


if __name__ == "__main__":
    if len(sys.argv) > 2 and sys.argv[1] == "http":
        mcp.run(transport="streamable-http", host="127.0.0.1", port=int(sys.argv[2]))
    else:
        mcp.run()
