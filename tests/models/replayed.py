"""A provider that answers each request with the next recorded body, keeping what it was sent."""

from __future__ import annotations

import json
from typing import Any

import httpx

__all__ = ("replaying",)


def replaying(replies: list[tuple[bytes, str]], seen: list[dict[str, Any]]) -> httpx.AsyncClient:
    """A client whose transport answers request N with `replies[N]` (body, content type), each
    request's JSON body appended to `seen`."""

    def answer(request: httpx.Request) -> httpx.Response:
        seen.append(json.loads(request.content))
        body, content_type = replies[len(seen) - 1]
        return httpx.Response(200, content=body, headers={"content-type": content_type})

    return httpx.AsyncClient(transport=httpx.MockTransport(answer))
