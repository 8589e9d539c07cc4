"""How the SQLite store encodes what it keeps: JSON text, compressed with a preset dictionary when that is smaller.

A session's record, and each write's events and messages, are small JSON documents that repeat
the same keys and shapes (`{"type":"step.started","data":{"sequence":...`). Deflate alone gains
little on a few hundred bytes; with a preset dictionary of those shapes
(`codec-dictionary-1.jsonl`: eve-py's records, events and messages with their values blanked)
a write shrinks several times over. An encoded value is either the JSON text itself (it starts
with `{` or `[`, so a row stays readable with the `sqlite3` shell when compression gains
nothing) or the byte `0x01` followed by raw deflate data made with dictionary 1. The dictionary
is part of the stored format: a later one gets a new leading byte, and this one stays readable.
"""

from __future__ import annotations

import zlib
from importlib import resources

__all__ = ("decode", "encode")

_DEFLATE_1 = 0x01
_DICTIONARY_1 = resources.files(__package__).joinpath("codec-dictionary-1.jsonl").read_bytes()
_LEVEL = 6


def encode(text: str) -> bytes:
    """`text` (JSON) as the store keeps it: deflated with dictionary 1, or as UTF-8 when that is not smaller.

    Raises:
        UnicodeEncodeError: `text` holds a lone surrogate (no JSON encoder here makes one).
    """
    raw = text.encode("utf-8")
    compressor = zlib.compressobj(_LEVEL, zlib.DEFLATED, -15, 9, zlib.Z_DEFAULT_STRATEGY, _DICTIONARY_1)
    packed = compressor.compress(raw) + compressor.flush()
    return bytes((_DEFLATE_1,)) + packed if len(packed) + 1 < len(raw) else raw


def decode(blob: bytes | str) -> str:
    """The JSON text `encode` made `blob` from.

    Raises:
        ValueError: `blob` is not something `encode` made (an unknown leading byte, or corrupt data).
    """
    if isinstance(blob, str):
        return blob
    if not blob or blob[0] in b"{[":
        return blob.decode("utf-8")
    if blob[0] != _DEFLATE_1:
        raise ValueError(f"unknown encoding {blob[0]:#04x} in the session store")
    try:
        return zlib.decompressobj(-15, _DICTIONARY_1).decompress(blob[1:]).decode("utf-8")
    except zlib.error as exc:
        raise ValueError(f"corrupt compressed data in the session store: {exc}") from exc
