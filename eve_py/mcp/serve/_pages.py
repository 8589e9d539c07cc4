"""Pages of a list method (`tools/list`, and any other list an MCP server serves) with opaque cursors.

A cursor names the list it was cut from and where the next page starts: the base64url of
`[list, offset, fingerprint]`, where the fingerprint digests the names of the whole list. A
cursor the client made up, cut from another list, or from this list before it changed (another
server version behind the same URL) is refused with `-32602 Invalid cursor`, as the
specification asks, rather than silently giving a wrong page.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import json
from collections.abc import Callable, Sequence
from typing import Generic, TypeVar

import mcp_types as types
from mcp.shared.exceptions import MCPError

__all__ = ("DEFAULT_PAGE_SIZE", "Pages")

DEFAULT_PAGE_SIZE = 100
"""How many items a page of a list method holds unless the server says otherwise."""

_T = TypeVar("_T")


class Pages(Generic[_T]):
    """One list cut into pages of `size` items; each page's cursor leads to the next.

    Args:
        listing: The list's name (`tools`, `resources`, ...): a cursor of one list is no cursor of another.
        items: The whole list, in the order it is served (fixed for the server's lifetime).
        name_of: An item's name, for the fingerprint.
        size: Items per page, at least 1.
    """

    def __init__(self, listing: str, items: Sequence[_T], name_of: Callable[[_T], str], *, size: int) -> None:
        if size < 1:
            raise ValueError(f"a page holds at least one item, not {size}")
        self.listing = listing
        self.items = tuple(items)
        self.size = size
        names = "\n".join(name_of(item) for item in self.items).encode("utf-8", "surrogatepass")
        self._fingerprint = hashlib.sha256(names).hexdigest()[:16]

    def _cursor(self, offset: int) -> str:
        raw = json.dumps([self.listing, offset, self._fingerprint], separators=(",", ":")).encode()
        return base64.urlsafe_b64encode(raw).decode().rstrip("=")

    def _offset(self, cursor: str) -> int:
        try:
            raw = base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4))
            listing, offset, fingerprint = json.loads(raw)
        except (binascii.Error, ValueError, TypeError):
            offset = None
        else:
            if (listing, fingerprint) != (self.listing, self._fingerprint):
                offset = None
        if type(offset) is not int or not 0 < offset < len(self.items):
            raise MCPError(code=types.INVALID_PARAMS, message="Invalid cursor", data={"cursor": cursor})
        return offset

    def page(self, cursor: str | None) -> tuple[list[_T], str | None]:
        """The page `cursor` leads to (the first without one) and the cursor of the next, if any.

        Raises:
            MCPError: `-32602 Invalid cursor`: not a cursor of this list as it is now.
        """
        start = 0 if cursor is None else self._offset(cursor)
        stop = start + self.size
        return list(self.items[start:stop]), self._cursor(stop) if stop < len(self.items) else None
