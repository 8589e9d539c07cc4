"""The append-only core: a write's cost does not grow with the conversation, and old files are refused."""

from __future__ import annotations

import json
import logging
import shutil
import sqlite3
import threading
from pathlib import Path

import anyio
import pytest

from eve_py import InputResponse, Runtime, StoreSchemaError, load_agent
from eve_py.agent import load_mock_model
from eve_py.protocol import dump_event
from eve_py.protocol.messages import dump_message
from eve_py.sessions import MemorySessionStore, SessionRecord, SessionStore, SQLiteSessionStore
from tests.conftest import HITL_APP

pytestmark = pytest.mark.anyio

STORE_V7 = Path(__file__).parent / "store_v7"


def refused_and_left_as_it_was(path: Path, match: str) -> None:
    """Opening the file as a store raises `StoreSchemaError` (its text matching `match`), and no byte of it changes."""
    before = path.read_bytes()
    with pytest.raises(StoreSchemaError, match=match):
        SQLiteSessionStore(path)
    assert path.read_bytes() == before


def test_a_file_of_an_older_schema_is_refused_and_left_untouched(tmp_path: Path) -> None:
    path = tmp_path / "old.db"
    with sqlite3.connect(path) as db:
        db.execute("CREATE TABLE sessions (id TEXT PRIMARY KEY, version INTEGER, record TEXT)")
        db.execute("INSERT INTO sessions VALUES ('ses_1', 3, '{\"messages\": []}')")
    refused_and_left_as_it_was(path, r"store schema 0.*reads schema 8")


async def test_the_record_stays_small_and_the_logs_only_grow(store: SessionStore) -> None:
    runtime = Runtime(load_agent(HITL_APP), model=load_mock_model(HITL_APP), store=store)
    session = await runtime.create_session()
    sizes: list[int] = []
    seen_messages: list[str] = []
    for _ in range(30):
        parked = await session.send("help me pick a template")
        pick = InputResponse(request_id=parked.input_requests[0].request_id, value={"pickedIds": ["tpl_blue"]})
        await session.respond([pick])
        record = await store.load(session.id)
        sizes.append(len(record.model_dump_json()))
        stored = await store.read_messages(session.id)
        # Append-only: what was stored before is stored unchanged, in the same place.
        assert [m.model_dump_json() for m in stored[: len(seen_messages)]] == seen_messages
        seen_messages = [m.model_dump_json() for m in stored]
    assert record.message_count == len(stored) == 30 * 6
    assert max(sizes) - min(sizes) < 64, "the record does not grow with the conversation"
    assert [m.model_dump_json() for m in await session.messages()] == seen_messages
    await store.aclose()


async def test_a_cleared_history_stays_in_the_log_but_leaves_the_conversation(tmp_path: Path) -> None:
    store = SQLiteSessionStore(tmp_path / "s.db")
    runtime = Runtime(load_agent(HITL_APP), model=load_mock_model(HITL_APP), store=store)
    session = await runtime.create_session()
    await session.send("hello")
    await session.clear()
    await session.send("hello again")

    other = Runtime(load_agent(HITL_APP), model=load_mock_model(HITL_APP), store=store)  # another process
    conversation = await (await other.get_session(session.id)).messages()
    assert [m.role for m in conversation] == ["user", "assistant"]
    assert conversation[0].content == "hello again"
    assert len(await store.read_messages(session.id)) == 4
    await store.aclose()


async def test_every_window_of_the_logs_reads_the_same_from_sqlite_chunks_as_from_memory(tmp_path: Path) -> None:
    """SQLite keeps a write's events in one chunk; any [start, stop) reads across chunks exactly."""
    sqlite = SQLiteSessionStore(tmp_path / "s.db")
    memory = MemorySessionStore()
    for store in (sqlite, memory):
        runtime = Runtime(load_agent(HITL_APP), model=load_mock_model(HITL_APP), store=store)
        session = await runtime.create_session(session_id="ses_window")
        for _ in range(3):
            parked = await session.send("help me pick a template")
            pick = InputResponse(request_id=parked.input_requests[0].request_id, value={"pickedIds": ["tpl_blue"]})
            await session.respond([pick])
    total = (await sqlite.load("ses_window")).event_count
    messages = (await sqlite.load("ses_window")).message_count
    assert total == (await memory.load("ses_window")).event_count > 40
    everything = await sqlite.read_events("ses_window")
    assert [e.type for e in everything] == [e.type for e in await memory.read_events("ses_window")]
    ids = [e.meta.id for e in everything]
    for start in range(-1, total + 2):
        for stop in (None, start, start + 1, start + 5, total, total + 3):
            window = [e.meta.id for e in await sqlite.read_events("ses_window", start, stop)]
            assert window == ids[max(start, 0) : stop if stop is None else max(stop, 0)], (start, stop)
    conversation = [m.model_dump_json() for m in await memory.read_messages("ses_window")]
    for start in range(messages + 1):
        window_messages = await sqlite.read_messages("ses_window", start, start + 4)
        assert [m.model_dump_json() for m in window_messages] == conversation[start : start + 4]
    await sqlite.aclose()


async def test_writes_of_events_only_messages_only_or_both_read_back_in_any_window(tmp_path: Path) -> None:
    """A write's events and messages share one row; a write may hold either alone (or neither)."""
    source = MemorySessionStore()
    runtime = Runtime(load_agent(HITL_APP), model=load_mock_model(HITL_APP), store=source)
    session = await runtime.create_session(session_id="ses_source")
    for _ in range(2):
        parked = await session.send("help me pick a template")
        pick = InputResponse(request_id=parked.input_requests[0].request_id, value={"pickedIds": ["tpl_blue"]})
        await session.respond([pick])
    events, messages = await source.read_events("ses_source"), await source.read_messages("ses_source")
    template = await source.load("ses_source")

    sqlite = SQLiteSessionStore(tmp_path / "s.db")
    record = await sqlite.create(template.model_copy(update={"id": "ses_mixed", "version": 0}), events[:1])
    shapes = [(2, 0), (0, 1), (0, 2), (0, 0), (3, 1), (1, 0), (0, 3), (4, 2), (1, 1)]  # (events, messages) per write
    e, m = 1, 0
    for n_events, n_messages in shapes:
        record = await sqlite.commit(record, events[e : e + n_events], messages[m : m + n_messages])
        e, m = e + n_events, m + n_messages
    written_events = [dump_event(x) for x in events[:e]]
    written_messages = [dump_message(x) for x in messages[:m]]
    for start in range(-1, e + 2):
        for stop in (None, start, start + 1, start + 3, e + 1):
            window = [dump_event(x) for x in await sqlite.read_events("ses_mixed", start, stop)]
            assert window == written_events[_bounds(start, stop)], (start, stop)
    for start in range(-1, m + 2):
        for stop in (None, start, start + 1, start + 2, m + 1):
            window_messages = [dump_message(x) for x in await sqlite.read_messages("ses_mixed", start, stop)]
            assert window_messages == written_messages[_bounds(start, stop)], (start, stop)
    await sqlite.aclose()


def _bounds(start: int, stop: int | None) -> slice:
    """The slice a store reads for `[start, stop)`: a negative bound means 0, as in the stores."""
    return slice(max(start, 0), None if stop is None else max(stop, 0))


def test_the_store_codec_shrinks_eve_py_json_and_keeps_other_text_readable() -> None:
    from eve_py.sessions._codec import decode, encode

    event = (
        '{"type":"step.started","data":{"sequence":3,"turnId":"turn_01M86N4JP1F495EKZWK7MXCGPG","stepIndex":0,'
        '"modelId":"mock"},"meta":{"id":"evt_01M86N4JP1CRAMCQE1Q7H441HS","at":"2026-11-24T11:30:26.625Z",'
        '"deliveryIds":["dlv_01M86N4JP1M8VR8WMPDE4ZA5XK"]}}'
    )
    packed = encode(event)
    assert len(packed) < len(event) / 2 and decode(packed) == event
    tiny = '{"a":1}'
    assert encode(tiny) == tiny.encode() and decode(encode(tiny)) == tiny  # nothing to gain: kept as text
    unicode_text = '{"text":"naïve café ✓ 🙂"}'
    assert decode(encode(unicode_text)) == unicode_text
    with pytest.raises(ValueError, match="unknown encoding"):
        decode(b"\x07garbage")
    with pytest.raises(ValueError, match="corrupt"):
        decode(b"\x01not deflate data")


def test_a_record_encoded_against_a_base_takes_a_fraction_and_needs_that_base() -> None:
    from eve_py.sessions._codec import decode, encode

    base = (
        '{"schemaVersion":5,"id":"ses_01M86N4JP1F495EKZWK7MXCGPG","version":7,"createdAt":"2026-11-24T11:30:26.625Z",'
        '"turn":{"turnId":"turn_01M86N4JP1CRAMCQE1Q7H441HS","sequence":3,"status":"waiting"},"eventCount":40}'
    )
    record = base.replace('"version":7', '"version":8').replace("waiting", "running").replace("40}", "41}")
    delta = encode(record, base)
    assert len(delta) < len(encode(record)) / 2 and decode(delta, base) == record
    with pytest.raises(ValueError, match="no base"):
        decode(delta)


@pytest.mark.parametrize("size", [0, 40, 300, 2_000])
def test_a_base_encoded_with_its_primer_gives_the_bytes_and_deltas_prime_gives(size: int) -> None:
    from eve_py.sessions._codec import decode, encode, encode_base, prime

    base = '{"id":"ses_01M86N4JP1F495EKZWK7MXCGPG","turn":{"status":"waiting"},"note":"' + "café ✓ " * size + '"}'
    blob, primed = encode_base(base)
    assert blob == encode(base) and decode(blob) == base
    assert (primed is None) == (size == 2_000)  # 20 KB: too long for the small window, `prime` sets it up
    for record in (base.replace("waiting", "running"), base[: len(base) // 2] + '"}', '{"a":1}', base + base):
        delta = encode(record, primed=primed or prime(base))
        assert delta == encode(record, base) and decode(delta, base) == record


async def test_a_file_of_schema_7_is_upgraded_with_every_log_entry_and_its_sessions_go_on(tmp_path: Path) -> None:
    """`store_v7/sessions.db` was written by eve-py at 0e905ab (schema 7: a table per log), and
    `store_v7/logs.json` holds what that eve-py read from it: two sessions of the HITL app, one
    after two answered turns, a cleared history and a third parked turn, the other parked."""
    path = tmp_path / "v7.db"
    shutil.copyfile(STORE_V7 / "sessions.db", path)
    written = json.loads((STORE_V7 / "logs.json").read_text())

    store = SQLiteSessionStore(path)
    for session_id, logs in written.items():
        assert [dump_event(e) for e in await store.read_events(session_id)] == logs["events"]
        assert [dump_message(m) for m in await store.read_messages(session_id)] == logs["messages"]
        for start in range(len(logs["events"]) + 1):
            window = await store.read_events(session_id, start, start + 3)
            assert [dump_event(e) for e in window] == logs["events"][start : start + 3]
        for start in range(len(logs["messages"]) + 1):
            window_messages = await store.read_messages(session_id, start, start + 2)
            assert [dump_message(m) for m in window_messages] == logs["messages"][start : start + 2]
    runtime = Runtime(load_agent(HITL_APP), model=load_mock_model(HITL_APP), store=store)
    for session_id in written:
        session = await runtime.get_session(session_id)
        pick = InputResponse(request_id=session.input_requests[0].request_id, value={"pickedIds": ["tpl_red"]})
        assert (await session.respond([pick])).message == "Recorded your pick: tpl_red."
        events = [dump_event(e) for e in await store.read_events(session_id)]
        assert events[: len(written[session_id]["events"])] == written[session_id]["events"]
        assert len(events) > len(written[session_id]["events"])
        messages = [dump_message(m) for m in await store.read_messages(session_id)]
        assert messages[: len(written[session_id]["messages"])] == written[session_id]["messages"]
        assert "Recorded your pick: tpl_red." in messages[-1]
    await store.aclose()
    with sqlite3.connect(path) as db:
        assert db.execute("PRAGMA user_version").fetchone()[0] == 8
        tables = {row[0] for row in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
        assert "events" not in tables and "messages" not in tables


async def test_two_processes_opening_a_file_of_schema_7_at_once_both_get_it_upgraded_once(tmp_path: Path) -> None:
    path = tmp_path / "v7.db"
    shutil.copyfile(STORE_V7 / "sessions.db", path)
    written = json.loads((STORE_V7 / "logs.json").read_text())
    opened: list[SQLiteSessionStore] = []

    async def open_store() -> None:
        opened.append(await SQLiteSessionStore.open(path))

    with anyio.fail_after(30):
        async with anyio.create_task_group() as tasks:
            tasks.start_soon(open_store)
            tasks.start_soon(open_store)
    for store in opened:
        assert [dump_event(e) for e in await store.read_events("ses_first")] == written["ses_first"]["events"]
        assert [dump_message(m) for m in await store.read_messages("ses_first")] == written["ses_first"]["messages"]
        await store.aclose()


def test_a_file_of_schema_7_with_a_damaged_message_chunk_is_refused_and_left_as_it_was(tmp_path: Path) -> None:
    path = tmp_path / "v7.db"
    shutil.copyfile(STORE_V7 / "sessions.db", path)
    with sqlite3.connect(path) as db:
        db.execute("UPDATE messages SET chunk = x'01ffffff' WHERE idx = (SELECT MAX(idx) FROM messages)")
    refused_and_left_as_it_was(path, r"cannot upgrade .*v7\.db to store schema 8: a stored message chunk")


async def test_a_file_of_schema_4_is_upgraded_and_its_sessions_go_on(tmp_path: Path) -> None:
    from eve_py.sessions._codec import decode, encode

    path = tmp_path / "v4.db"
    shutil.copyfile(STORE_V7 / "sessions.db", path)
    with sqlite3.connect(path) as db:  # as eve-py with schema 4 left it: whole records, no base column
        for rowid, blob, base in db.execute("SELECT rowid, record, base FROM sessions").fetchall():
            whole = decode(blob, decode(base)) if blob else decode(base)  # an empty record: the base is the record
            db.execute("UPDATE sessions SET record = ? WHERE rowid = ?", (encode(whole), rowid))
        db.execute("DROP INDEX sessions_deadline")
        db.execute("DROP TABLE secrets")
        db.execute("ALTER TABLE sessions DROP COLUMN deadline")
        db.execute("ALTER TABLE sessions DROP COLUMN base")
        db.execute("PRAGMA user_version = 4")

    upgraded = SQLiteSessionStore(path)
    runtime = Runtime(load_agent(HITL_APP), model=load_mock_model(HITL_APP), store=upgraded)
    resumed = await runtime.get_session("ses_second")
    pick = InputResponse(request_id=resumed.input_requests[0].request_id, value={"pickedIds": ["tpl_blue"]})
    assert (await resumed.respond([pick])).message == "Recorded your pick: tpl_blue."
    await upgraded.aclose()
    with sqlite3.connect(path) as db:
        assert db.execute("PRAGMA user_version").fetchone()[0] == 8


async def test_a_second_store_on_the_file_reads_every_record_the_first_wrote(tmp_path: Path) -> None:
    """Records are stored against a base the writer keeps in memory: another process must not need it."""
    path = tmp_path / "s.db"
    writer = SQLiteSessionStore(path)
    runtime = Runtime(load_agent(HITL_APP), model=load_mock_model(HITL_APP), store=writer)
    session = await runtime.create_session()
    for _ in range(3):
        parked = await session.send("help me pick a template")
        reader = SQLiteSessionStore(path)
        assert await reader.load(session.id) == await writer.load(session.id)
        pick = InputResponse(request_id=parked.input_requests[0].request_id, value={"pickedIds": ["tpl_red"]})
        await session.respond([pick])
        assert await reader.load(session.id) == await writer.load(session.id)
        await reader.aclose()
    await writer.aclose()


async def test_a_write_waiting_for_another_process_lock_leaves_the_event_loop_free(tmp_path: Path) -> None:
    """A write that is not synced runs on the loop only when it need not wait; otherwise in a worker thread."""
    path = tmp_path / "s.db"
    store, record = await _new_session(path)
    other = sqlite3.connect(path, isolation_level=None)
    other.execute("BEGIN IMMEDIATE")  # another process holds the write lock
    committed = anyio.Event()

    async def write() -> None:
        await store.commit(record, [], durable=False)
        committed.set()

    with anyio.fail_after(10):
        async with anyio.create_task_group() as tasks:
            tasks.start_soon(write)
            await anyio.wait_all_tasks_blocked()  # the loop runs on while the write waits
            assert not committed.is_set()
            other.execute("COMMIT")
    assert committed.is_set() and (await store.load(record.id)).version == record.version + 1
    other.close()
    await store.aclose()


async def test_a_write_that_is_not_durable_is_still_kept_in_order_across_a_reopen(tmp_path: Path) -> None:
    """Writes committed without a sync stay in the WAL, in order: a process that reopens the file sees them."""
    path = tmp_path / "s.db"
    store, record = await _new_session(path)
    record = await store.commit(record, [], durable=False)
    record = await store.commit(record, [], durable=True)
    record = await store.commit(record, [], durable=False)
    await store.aclose()
    reopened = SQLiteSessionStore(path)
    assert (await reopened.load(record.id)).version == record.version == 4
    await reopened.aclose()


async def _new_session(path: Path) -> tuple[SQLiteSessionStore, SessionRecord]:
    """A SQLite store at `path` holding one new session of the HITL app, and that session's record."""
    store = SQLiteSessionStore(path)
    runtime = Runtime(load_agent(HITL_APP), model=load_mock_model(HITL_APP), store=store)
    session = await runtime.create_session()
    return store, await store.load(session.id)


def test_opening_a_file_another_process_is_upgrading_waits_for_it_and_says_so(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    path = tmp_path / "v7.db"
    shutil.copyfile(STORE_V7 / "sessions.db", path)
    upgrading = sqlite3.connect(path, isolation_level=None)
    upgrading.execute("BEGIN IMMEDIATE")  # as another process's long upgrade holds it
    told = threading.Event()

    class Told(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            if "which may be upgrading it" in record.getMessage():
                told.set()

    handler = Told()
    logging.getLogger("eve_py.sessions").addHandler(handler)
    opened: list[SQLiteSessionStore] = []
    opener = threading.Thread(target=lambda: opened.append(SQLiteSessionStore(path, timeout_s=0.2)))
    try:
        opener.start()
        assert told.wait(timeout=10), "it said why it waits"
        assert not opened, "it waits while the file is locked"
        upgrading.execute("ROLLBACK")  # the other process is done
        opener.join(timeout=10)
    finally:
        logging.getLogger("eve_py.sessions").removeHandler(handler)
        upgrading.close()
    [store] = opened
    anyio.run(store.aclose)
    with sqlite3.connect(path) as db:
        assert db.execute("PRAGMA user_version").fetchone()[0] == 8
