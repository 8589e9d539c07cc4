"""The hub hands a commit's events to the stream readers it wakes: taken in log order, once, or read from the store."""

from __future__ import annotations

from eve_py.protocol import Event, new_event
from eve_py.protocol.payloads import SessionWaitingData
from eve_py.server._hub import Hub


def _events(count: int) -> list[Event]:
    return [new_event(SessionWaitingData()) for _ in range(count)]


def test_published_batches_continue_the_cursor_once_each() -> None:
    hub = Hub()
    reader = hub.subscribe("ses_1")
    first, second = _events(2), _events(3)
    hub.publish("ses_1", first, 4)
    hub.publish("ses_1", second, 6)
    assert reader.take(4) == [*first, *second]
    assert reader.take(9) == []  # taken once


def test_events_the_reader_has_read_already_are_left_out() -> None:
    hub = Hub()
    reader = hub.subscribe("ses_1")
    batch = _events(3)
    hub.publish("ses_1", batch, 4)
    assert reader.take(6) == batch[2:]


def test_a_gap_a_plain_wake_or_too_many_events_send_the_reader_to_the_store() -> None:
    hub = Hub()
    reader = hub.subscribe("ses_1")
    hub.publish("ses_1", _events(1), 7)  # index 5 and 6 were committed and not published here
    assert reader.take(5) is None
    hub.publish("ses_1", _events(1), 5)
    hub.wake("ses_1")  # another process committed, or the turn settled
    assert reader.take(6) is None
    for index in range(0, 2000, 2):
        hub.publish("ses_1", _events(2), index)
    assert reader.take(0) is None
    hub.publish("ses_1", _events(1), 9)
    assert reader.take(9) is not None  # back to taking once the store was read


def test_other_sessions_readers_are_not_handed_anything() -> None:
    hub = Hub()
    mine, other = hub.subscribe("ses_1"), hub.subscribe("ses_2")
    batch = _events(2)
    hub.publish("ses_1", batch, 0)
    assert other.take(0) == []
    assert mine.take(0) == batch


def test_a_settled_turn_wakes_its_readers_without_sending_them_to_the_store() -> None:
    hub = Hub()
    reader = hub.subscribe("ses_1")
    batch = _events(2)
    hub.publish("ses_1", batch, 0)
    hub.settled("ses_1")
    assert reader.take(0) == batch


def test_a_stream_starting_where_this_process_wrote_gets_the_kept_events() -> None:
    hub = Hub()
    first, second = _events(2), _events(3)
    hub.publish("ses_1", first, 0)
    hub.publish("ses_1", second, 2)
    assert hub.recent("ses_1", 2, stored=5) == second
    assert hub.recent("ses_1", 0, stored=4) == [*first, *second]  # a commit after the log was read comes too
    assert hub.recent("ses_1", 5, stored=5) == []


def test_events_this_process_did_not_write_send_the_stream_to_the_store() -> None:
    hub = Hub()
    hub.publish("ses_1", _events(2), 3)
    assert hub.recent("ses_1", 0, stored=5) is None  # indices 0 to 2 are not kept
    assert hub.recent("ses_1", 3, stored=6) is None  # index 5 was written by another process
    assert hub.recent("ses_2", 0, stored=0) is None
    hub.publish("ses_1", _events(1), 7)  # another process wrote indices 5 and 6
    assert hub.recent("ses_1", 3, stored=8) is None
    assert hub.recent("ses_1", 7, stored=8) is not None


def test_only_the_last_events_of_the_last_sessions_are_kept() -> None:
    hub = Hub()
    for index in range(0, 1000, 10):
        hub.publish("ses_1", _events(10), index)
    assert hub.recent("ses_1", 0, stored=1000) is None
    assert len(hub.recent("ses_1", 900, stored=1000) or []) == 100
    for number in range(10_000):
        hub.publish(f"ses_{number + 2}", _events(1), 0)
    assert hub.recent("ses_1", 990, stored=1000) is None  # the least recent session went first
    assert hub.recent("ses_10001", 0, stored=1) is not None
