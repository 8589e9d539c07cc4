"""`Recent`: the values of the most recently used keys, a bounded map shared by threads."""

from __future__ import annotations

import threading
from collections import OrderedDict
from typing import Generic, TypeVar

__all__ = ("Recent",)

K = TypeVar("K")
V = TypeVar("V")


class Recent(Generic[K, V]):
    """The values of the `size` most recently used keys; the least recently used goes first.

    Safe to use from several threads (a store's event loop and its worker thread).

    Args:
        size: How many keys to keep.
    """

    def __init__(self, size: int) -> None:
        self._size = size
        self._items: OrderedDict[K, V] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, key: K) -> V | None:
        """The value kept for `key` (now the most recently used), or None."""
        with self._lock:
            value = self._items.get(key)
            if value is not None:
                self._items.move_to_end(key)
            return value

    def put(self, key: K, value: V) -> None:
        """Keep `value` for `key`, dropping the least recently used key when over `size`."""
        with self._lock:
            self._items[key] = value
            self._items.move_to_end(key)
            if len(self._items) > self._size:
                self._items.popitem(last=False)

    def take(self, key: K) -> V | None:
        """Remove the value kept for `key` and return it (None if there is none)."""
        with self._lock:
            return self._items.pop(key, None)
