"""Event ids, other ids and timestamps (`eve_py.protocol.envelope`), and how `new_event` builds an event."""

from __future__ import annotations

import os
import random
import re
import time
import warnings
from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta

import pytest

from eve_py.protocol import (
    dump_event,
    envelope,
    load_event,
    new_event,
    new_event_id,
    new_id,
    now_iso,
)
from eve_py.protocol.payloads import StepStartedData
from eve_py.sessions._codec import encode

CROCKFORD = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"
EVENT_ID = re.compile(r"^evt_[0-9A-HJKMNP-TV-Z]{26}$")
ISO = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$")
MS = 1_000_000


def reference_ulid(ms: int, random_part: int) -> str:
    """The ULID of a 48-bit ms and an 80-bit random part, the slow and obvious way: 128 bits, 26 letters."""
    value = ms << 80 | random_part
    return "".join(CROCKFORD[(value >> (5 * i)) & 31] for i in reversed(range(26)))


def crockford_value(text: str) -> int:
    value = 0
    for letter in text:
        value = value * 32 + CROCKFORD.index(letter)
    return value


@pytest.fixture
def set_clock(monkeypatch: pytest.MonkeyPatch) -> Iterator[Callable[[int], None]]:
    """Sets the envelope's clock (ns) for the test; event ids start again from a fresh random part after it."""
    now = [0]
    monkeypatch.setattr(envelope, "_clock", lambda: now[0])

    def set_ns(ns: int) -> None:
        now[0] = ns

    yield set_ns
    monkeypatch.undo()
    envelope._reseed()  # forget the test's timestamps and random part


def test_reference_encoding_matches_known_ulids() -> None:
    assert reference_ulid(0, 0) == "0" * 26
    assert reference_ulid(2**48 - 1, 2**80 - 1) == "7" + "Z" * 25  # the largest ULID
    assert reference_ulid(1, 0) == "0000000001" + "0" * 16
    assert reference_ulid(0, 31) == "0" * 25 + "Z"


def test_event_ids_have_the_ulid_format() -> None:
    for _ in range(1000):
        event_id = new_event_id()
        assert EVENT_ID.match(event_id), event_id
        assert event_id[4] <= "7"  # 48 bits of time: the first letter holds only 3


def test_event_ids_increase_and_never_repeat_within_a_process() -> None:
    ids = [new_event_id() for _ in range(100_000)]
    assert len(set(ids)) == len(ids)
    # The alphabet is in ASCII order, so string order is creation order, even within one ms.
    assert all(a < b for a, b in zip(ids, ids[1:], strict=False))


def test_an_event_ids_timestamp_is_the_current_ms() -> None:
    before = time.time_ns() // MS
    event_id = new_event_id()
    after = time.time_ns() // MS
    assert before <= crockford_value(event_id[4:14]) <= after


def test_event_ids_match_the_reference_encoding_at_edge_values(set_clock: Callable[[int], None]) -> None:
    cases = [
        (0, 0),
        (0, 2**80 - 1),
        (2**48 - 1, 2**80 - 1),  # the last id wraps the random part to 0 (modulo 2**80)
        (2**48 - 1, 0),
        (1_764_000_000_000, 2**20 - 3),  # the counter carries into the 60 high bits
        (1_764_000_000_000, 2**10 - 2),  # and from the low pair into the next one
        (1_764_000_000_000, (2**60 - 1) << 20 | (2**20 - 2)),  # a carry through every high bit
        (1_764_000_000_000, 2**79 - 2),  # the top of what a process draws
    ]
    for ms, base in cases:
        set_clock(ms * MS + 999_999)
        envelope._reseed(base)
        for step in range(6):
            expected = "evt_" + reference_ulid(ms, (base + step) % 2**80)
            assert new_event_id() == expected, (ms, base, step)


def test_event_ids_match_the_reference_encoding_for_random_values(set_clock: Callable[[int], None]) -> None:
    rng = random.Random(20261124)
    for _ in range(2000):
        ms, base = rng.getrandbits(48), rng.getrandbits(80)
        set_clock(ms * MS + rng.randrange(MS))
        envelope._reseed(base)
        for step in range(3):
            assert new_event_id() == "evt_" + reference_ulid(ms, (base + step) % 2**80)


def test_event_ids_follow_the_clock_forward_and_keep_increasing_when_it_steps_back(
    set_clock: Callable[[int], None],
) -> None:
    start = 1_764_000_000_000
    envelope._reseed(12345)
    made = []
    for ms in [start, start, start + 1, start + 1024, start + 1025, start + 2**20]:
        set_clock(ms * MS)
        made.append(new_event_id())
        assert made[-1][4:14] == reference_ulid(ms, 0)[:10]
    set_clock((start + 5) * MS)  # the wall clock steps back (NTP)
    back = new_event_id()
    assert back[4:14] == made[-1][4:14] and back > made[-1]
    assert made == sorted(made) and [crockford_value(i[14:]) for i in [*made, back]] == list(range(12345, 12352))


def test_consecutive_event_ids_share_all_but_their_last_letters() -> None:
    first, second = new_event_id(), new_event_id()
    assert crockford_value(second[14:]) == crockford_value(first[14:]) + 1
    # In the same ms (nearly always) only the counter's last letters differ, unless it just carried.
    if first[4:14] == second[4:14] and crockford_value(second[22:]) != 0:
        assert first[:26] == second[:26]


def test_a_forked_child_draws_its_own_random_part() -> None:
    if not hasattr(os, "fork"):
        pytest.skip("no os.fork on this platform")
    read_end, write_end = os.pipe()
    before = new_event_id()
    with warnings.catch_warnings():
        # 3.12+ warns about forking a process with threads; the child only makes an id and exits.
        warnings.simplefilter("ignore", DeprecationWarning)
        pid = os.fork()
    if pid == 0:
        try:
            os.write(write_end, new_event_id().encode())
        finally:
            os._exit(0)
    os.close(write_end)
    child = os.read(read_end, 64).decode()
    os.close(read_end)
    os.waitpid(pid, 0)
    after = new_event_id()
    assert EVENT_ID.match(child)
    # Without a new draw the child would make exactly the parent's next id.
    assert child[14:26] != before[14:26] and child != after
    assert crockford_value(after[14:]) == crockford_value(before[14:]) + 1  # the parent goes on counting


def test_other_ids_are_fully_random_ulids() -> None:
    ids = [new_id("ses") for _ in range(1000)]
    assert all(re.match(r"^ses_[0-9A-HJKMNP-TV-Z]{26}$", i) for i in ids)
    assert len(set(ids)) == len(ids)
    # Not a counter: consecutive ids share no run of high random letters (a 2**-60 chance each).
    assert all(a[14:26] != b[14:26] for a, b in zip(ids, ids[1:], strict=False))
    before = time.time_ns() // MS
    made = new_id("dlv")
    assert before <= crockford_value(made[4:14]) <= time.time_ns() // MS


def test_other_ids_match_the_reference_encoding(
    set_clock: Callable[[int], None], monkeypatch: pytest.MonkeyPatch
) -> None:
    rng = random.Random(7)
    values = [0, 2**80 - 1, 1, 2**79, *(rng.getrandbits(80) for _ in range(500))]
    for value in values:
        ms = rng.getrandbits(48)
        set_clock(ms * MS + rng.randrange(MS))
        monkeypatch.setattr(os, "urandom", lambda n, value=value: value.to_bytes(n, "big"))
        assert new_id("turn") == "turn_" + reference_ulid(ms, value)


def reference_iso(ns: int) -> str:
    at = datetime(1970, 1, 1, tzinfo=UTC) + timedelta(microseconds=ns // 1000)
    return at.isoformat(timespec="milliseconds").replace("+00:00", "Z")


def test_now_iso_is_the_current_time_in_ms() -> None:
    before = reference_iso(time.time_ns())
    at = now_iso()
    after = reference_iso(time.time_ns())
    assert ISO.match(at) and before <= at <= after


def test_now_iso_matches_datetime_formatting(set_clock: Callable[[int], None]) -> None:
    rng = random.Random(3)
    moments = [0, 999_999, MS, 999_999_999, 10**9, 1_764_000_000_123_456_789, 253_402_300_799_999_999_999]
    moments += [rng.randrange(253_402_300_800 * 10**9) for _ in range(2000)]
    for ns in moments:
        set_clock(ns)
        assert now_iso() == reference_iso(ns), ns
    # Within one ms the cached text is reused; a clock that steps back gets its own time, not the cache's.
    set_clock(1_764_000_000_123_000_000)
    assert now_iso() == "2025-11-24T16:00:00.123Z"
    set_clock(1_764_000_000_123_999_999)
    assert now_iso() == "2025-11-24T16:00:00.123Z"
    set_clock(1_764_000_000_122_999_999)
    assert now_iso() == "2025-11-24T16:00:00.122Z"


def test_new_event_stamps_an_event_that_round_trips() -> None:
    data = StepStartedData(sequence=3, turn_id="turn_1", step_index=0, model_id="mock")
    for delivery_ids in (None, ["dlv_1"]):
        event = new_event(data, delivery_ids=delivery_ids)
        assert event.type == "step.started" and event.data == data and event.meta.delivery_ids == delivery_ids
        assert load_event(dump_event(event)) == event
        assert EVENT_ID.match(event.meta.id) and ISO.match(event.meta.at)


def test_consecutive_event_ids_compress_in_a_write() -> None:
    data = StepStartedData(sequence=3, turn_id="turn_01M86N4JP1F495EKZWK7MXCGPG", step_index=0, model_id="mock")
    events = [new_event(data) for _ in range(5)]
    random_ids = [
        event.model_copy(update={"meta": event.meta.model_copy(update={"id": new_id("evt")})}) for event in events
    ]
    monotonic = len(encode("\n".join(dump_event(event) for event in events)))
    random_size = len(encode("\n".join(dump_event(event) for event in random_ids)))
    # A random id costs ~17 bytes compressed; a monotonic one a back-reference and a letter or two.
    assert monotonic < random_size - 5 * 5
