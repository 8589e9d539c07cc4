"""How the SQLite store encodes what it keeps: JSON text, compressed with a preset dictionary when that is smaller.

A session's record, and each write's events and messages, are small JSON documents that repeat
the same keys and shapes (`{"type":"step.started","data":{"sequence":...`). Deflate alone gains
little on a few hundred bytes; with a preset dictionary of those shapes
(`codec-dictionary-1.jsonl`: eve-py's records, events and messages with their values blanked)
a write shrinks several times over. An encoded value is one of:

- the JSON text itself (it starts with `{` or `[`, so a row stays readable with the `sqlite3`
  shell when compression gains nothing);
- the byte `0x01` followed by raw deflate data made with dictionary 1;
- the byte `0x02` followed by raw deflate data made with dictionary 1 followed by a *base*: an
  earlier text the reader holds too (the session's base record). A record rewritten a few
  times per turn differs from its base by a few fields, so this *delta* takes tens of bytes
  where the record alone takes hundreds: its ids, timestamps and parked step are in the base.

The dictionary is part of the stored format: a later one gets a new leading byte, and this one
stays readable.
"""

from __future__ import annotations

import zlib
from importlib import resources
from typing import TYPE_CHECKING

__all__ = ("Primed", "decode", "encode", "encode_base", "prime")

if TYPE_CHECKING:
    Primed = zlib._Compress
else:
    Primed = type(zlib.compressobj())
"""A compressor that has taken dictionary 1 and a base (`prime`): copied for each delta against that base."""

_DEFLATE_1 = 0x01
_DELTA_1 = 0x02
_DICTIONARY_1 = resources.files(__package__).joinpath("codec-dictionary-1.jsonl").read_bytes()
_LEVEL = 6
"""zlib's default. Level 9 searches chains 32 times as long (4,096 entries) through a dictionary full
of the same shapes, for 4 bytes fewer in a cycle's 1.3 KB of chunks and 5 % more of the store's
instructions (docs/performance.md, issue 25 step 20). Any level reads back the same."""
_PRIMED_1 = zlib.compressobj(_LEVEL, zlib.DEFLATED, -14, 5, zlib.Z_DEFAULT_STRATEGY, _DICTIONARY_1)
"""A compressor that has taken dictionary 1. Copying it skips setting up the dictionary for every
value (about half of a value's time); its small window (16 KiB, dictionary 1 fits) and hash table
make the copy cheap, and a reader needs neither (raw deflate with a 32 KiB window reads it)."""


_SMALL_WINDOW = (1 << 14) - 262
"""The most dictionary a 16 KiB window holds whole (zlib keeps 262 bytes of it for look-ahead)."""


def _fits_small_window(base_bytes: int) -> bool:
    """Whether dictionary 1 and a base of `base_bytes` fit a 16 KiB window, cheaper to set up and copy."""
    return len(_DICTIONARY_1) + base_bytes <= _SMALL_WINDOW


def _framed(lead: int, packed: bytes, raw: bytes) -> bytes:
    """The stored value: `lead` and the deflated `packed` when that is smaller than the UTF-8 `raw`, else `raw`."""
    return bytes((lead,)) + packed if len(packed) + 1 < len(raw) else raw


def prime(base: str) -> Primed:
    """A compressor that has taken dictionary 1 followed by `base`: what `encode(text, base)` starts from.

    Setting a dictionary up costs about as much as deflating a record; a caller that encodes
    several texts against one base keeps this and passes it to `encode` (which copies it).

    Raises:
        UnicodeEncodeError: `base` holds a lone surrogate.
    """
    raw = base.encode()
    # A longer base needs the full 32 KiB window.
    wbits, mem_level = (-14, 5) if _fits_small_window(len(raw)) else (-15, 8)
    return zlib.compressobj(_LEVEL, zlib.DEFLATED, wbits, mem_level, zlib.Z_DEFAULT_STRATEGY, _DICTIONARY_1 + raw)


def encode_base(text: str) -> tuple[bytes, Primed | None]:
    """`encode(text)`, and `prime(text)` made by the same deflate (None for a text too long for that).

    Deflating `text` after dictionary 1 leaves the compressor holding both, as `prime` sets them up;
    a copy of it, flushed so that `text`'s blocks end on a byte, is a primed compressor whose deltas
    come out byte for byte as `prime`'s, without hashing dictionary 1 again (about a third of what
    a new base costs). A text longer than a 16 KiB window holds beside the dictionary gets None:
    `prime` sets up the full window for it.

    Raises:
        UnicodeEncodeError: `text` holds a lone surrogate.
    """
    raw = text.encode("utf-8")
    compressor = _PRIMED_1.copy()
    packed = compressor.compress(raw)
    primed = None
    if _fits_small_window(len(raw)):
        primed = compressor.copy()
        primed.flush(zlib.Z_SYNC_FLUSH)
    packed += compressor.flush()
    return _framed(_DEFLATE_1, packed, raw), primed


def encode(text: str, base: str | None = None, *, primed: Primed | None = None) -> bytes:
    """`text` (JSON) as the store keeps it: deflated with dictionary 1 (and `base`), or as UTF-8 if not smaller.

    Args:
        text: The JSON to encode.
        base: A text `decode` will be given again: `text` is encoded as its difference from it.
        primed: `prime(base)`, kept by the caller (then `base` itself is not needed).

    Raises:
        UnicodeEncodeError: `text` or `base` holds a lone surrogate (no JSON encoder here makes one).
    """
    raw = text.encode("utf-8")
    if primed is None and base is not None:
        primed = prime(base)
    lead, compressor = (_DEFLATE_1, _PRIMED_1.copy()) if primed is None else (_DELTA_1, primed.copy())
    return _framed(lead, compressor.compress(raw) + compressor.flush(), raw)


def decode(blob: bytes | str, base: str | None = None) -> str:
    """The JSON text `encode` made `blob` from.

    Args:
        blob: What `encode` returned.
        base: The `base` `encode` was given, if any.

    Raises:
        ValueError: `blob` is not something `encode` made (an unknown leading byte, or corrupt
            data), or it is a delta and `base` is missing.
    """
    if isinstance(blob, str):
        return blob
    if not blob or blob[0] in b"{[":
        return blob.decode("utf-8")
    if blob[0] == _DEFLATE_1:
        dictionary = _DICTIONARY_1
    elif blob[0] == _DELTA_1:
        if base is None:
            raise ValueError("a delta in the session store has no base")
        dictionary = _DICTIONARY_1 + base.encode()
    else:
        raise ValueError(f"unknown encoding {blob[0]:#04x} in the session store")
    try:
        return zlib.decompressobj(-15, dictionary).decompress(blob[1:]).decode("utf-8")
    except zlib.error as exc:
        raise ValueError(f"corrupt compressed data in the session store: {exc}") from exc
