"""The floor under issue 25's targets: the cycle's least work in plain Python, against LangGraph, same run.

Run by hand (not part of the test suite; needs the `bench` extra):

```
.venv/bin/python bench/floor.py                    # fresh and 10-turn, 3 alternating rounds
.venv/bin/python bench/floor.py --cycles 200 --rounds 5
```

Issue 25 asks eve-py's park + resume cycle on SQLite (`synchronous=FULL`) to take at most a
fifth of LangGraph's (a sixth in a 10-turn session). This script asks what any Python program
doing the same cycle must spend, so that the targets can be read against it. The **floor** is
`bench/peers.py`'s cycle with everything but the work the flow cannot do without taken away:

- no framework: no events, no leases, no tracing, no approval policy, no session objects;
- the model is three function calls on the conversation (ask, note, answer), as cheap as
  `MockModel`'s script can be;
- the tool call's input and the person's answer are each checked against their JSON Schema
  by a precompiled `jsonschema-rs` validator (the checks a HITL runtime owes its users);
- two SQLite transactions on a WAL file with `synchronous=FULL`, each one fsync: the park,
  acknowledged by `send` (a session row and the conversation so far), and the completion,
  acknowledged by `respond` (the row updated, the rest of the conversation appended). Fewer
  syncs would acknowledge a message or an answer before it is durable.

Four hand-written subjects: `floor on the loop` runs SQLite on the event loop's thread (it
blocks the loop on fsync, which issue 25 rules out for eve-py: the lowest figure there is);
`floor, writer thread` hands each transaction to a worker thread, one at a time, and awaits it
(the shape issue 25 asks for, one hop per durable write); `floor, eve-py's writes` and `floor,
fewest writes` (`Written`) store what eve-py stores, by hand. None deflates what it stores, as
eve-py's SQLite store does to keep a cycle under 2 KB on disk. LangGraph is `bench/peers.py`'s (`SqliteSaver` on a WAL
connection with `synchronous=FULL`), and eve-py is measured too, all in alternating rounds.
eve-py on `MemorySessionStore` (no storage at all) shows the engine's share. The figures
printed are LangGraph's time per cycle / each subject's (wall time), with each round's wall
and process CPU ms per cycle: the floor's ratio is about the most a Python implementation of
the flow could reach on this machine.
"""

from __future__ import annotations

import argparse
import json
import secrets
import sqlite3
import statistics
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from contextlib import AsyncExitStack
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import anyio
import anyio.to_thread
import jsonschema_rs

sys.path.insert(0, str(Path(__file__).resolve().parent))
import peers  # noqa: E402

from eve_py.sessions import MemorySessionStore  # noqa: E402

OPTIONS = [
    {"id": "tpl_blue", "label": "Blue", "description": "Calm, lots of white space"},
    {"id": "tpl_red", "label": "Red", "description": "Bold headings"},
    {"id": "tpl_green", "label": "Green", "description": "Friendly and rounded"},
]
ASK_INPUT = {
    "type": "object",
    "properties": {
        "prompt": {"type": "string"},
        "options": {
            "type": "array",
            "items": {
                "type": "object",
                "properties": {
                    "id": {"type": "string"},
                    "label": {"type": "string"},
                    "description": {"type": "string"},
                },
                "required": ["id", "label"],
                "additionalProperties": False,
            },
        },
        "ui": {"type": "object", "properties": {"kind": {"type": "string"}}, "required": ["kind"]},
    },
    "required": ["prompt"],
    "additionalProperties": False,
}
PICKED = {
    "type": "object",
    "properties": {"pickedIds": {"type": "array", "items": {"type": "string"}}},
    "required": ["pickedIds"],
    "additionalProperties": False,
}
SCHEMA = """
CREATE TABLE IF NOT EXISTS sessions (id TEXT PRIMARY KEY, status TEXT NOT NULL, record TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS messages (
    session TEXT NOT NULL, n INTEGER NOT NULL, body TEXT NOT NULL, PRIMARY KEY (session, n)
) WITHOUT ROWID;
"""


def model(conversation: list[dict[str, Any]], n: int) -> dict[str, Any]:
    """The scripted model: ask, then note the pick, then answer (reading the turn since the last user message)."""
    last_user = max(i for i, m in enumerate(conversation) if m["role"] == "user")
    results = [m for m in conversation[last_user:] if m["role"] == "tool"]
    if not results:
        args = {"prompt": "Which template should the page use?", "options": OPTIONS, "ui": {"kind": "template"}}
        return {"role": "assistant", "toolCalls": [{"id": f"q{n}", "name": "ask_question", "input": args}]}
    if len(results) == 1:
        picked = ", ".join(results[0]["output"]["pickedIds"])
        call = {"id": f"n{n}", "name": "note", "input": {"text": f"picked {picked}"}}
        return {"role": "assistant", "toolCalls": [call]}
    return {"role": "assistant", "text": f"Recorded your pick: {results[0]['output']['pickedIds'][0]}."}


class Floor:
    """The cycle's least work: two durable transactions, two schema checks, three model calls."""

    def __init__(self, path: Path, *, writer_thread: bool) -> None:
        self.db = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
        self.db.execute("PRAGMA journal_mode=WAL")
        self.db.execute("PRAGMA synchronous=FULL")
        self.db.executescript(SCHEMA)
        self.ask_input = jsonschema_rs.validator_for(ASK_INPUT)
        self.picked = jsonschema_rs.validator_for(PICKED)
        self.writer = anyio.CapacityLimiter(1) if writer_thread else None
        self.turns = 0
        self.state: dict[str, tuple[list[dict[str, Any]], dict[str, Any]]] = {}

    def close(self) -> None:
        self.db.close()

    async def _durably(self, statements: list[tuple[str, tuple[Any, ...]]]) -> None:
        def run() -> None:
            self.db.execute("BEGIN IMMEDIATE")
            for sql, params in statements:
                self.db.execute(sql, params)
            self.db.execute("COMMIT")

        if self.writer is None:
            run()
        else:
            await anyio.to_thread.run_sync(run, limiter=self.writer)

    def _ask(self, conversation: list[dict[str, Any]]) -> tuple[dict[str, Any], dict[str, Any]]:
        """The model's first step of a turn (appended to `conversation`): its reply and its checked tool call."""
        self.turns += 1
        reply = model(conversation, self.turns)
        call: dict[str, Any] = reply["toolCalls"][0]
        if not self.ask_input.is_valid(call["input"]):
            raise ValueError("the model's tool input does not match its schema")
        conversation.append(reply)
        return reply, call

    async def send(self, session: str, text: str) -> dict[str, Any]:
        conversation, _ = self.state.get(session, ([], {}))
        conversation = [*conversation, {"role": "user", "text": text}]
        reply, call = self._ask(conversation)
        request = {"requestId": call["id"], "toolCallId": call["id"], "input": call["input"]}
        record = {"status": "waiting", "pending": [request], "messages": len(conversation)}
        first = len(conversation) - 2
        await self._durably(
            [
                ("INSERT OR REPLACE INTO sessions VALUES (?, 'waiting', ?)", (session, json.dumps(record))),
                ("INSERT INTO messages VALUES (?, ?, ?)", (session, first, json.dumps(conversation[first:]))),
            ]
        )
        self.state[session] = (conversation, record)
        return request

    async def respond(self, session: str, request_id: str, answer: dict[str, Any]) -> str:
        conversation, record = self.state[session]
        if record["pending"][0]["requestId"] != request_id:
            raise KeyError(request_id)
        if not self.picked.is_valid(answer):
            raise ValueError("the answer does not match the tool's output schema")
        first = len(conversation)
        conversation.append({"role": "tool", "toolCallId": request_id, "output": answer})
        note = model(conversation, self.turns)
        conversation.append(note)
        conversation.append({"role": "tool", "toolCallId": note["toolCalls"][0]["id"], "output": {"recorded": True}})
        final = model(conversation, self.turns)
        conversation.append(final)
        record = {"status": "completed", "pending": [], "messages": len(conversation)}
        await self._durably(
            [
                ("UPDATE sessions SET status = 'completed', record = ? WHERE id = ?", (json.dumps(record), session)),
                ("INSERT INTO messages VALUES (?, ?, ?)", (session, first, json.dumps(conversation[first:]))),
            ]
        )
        self.state[session] = (conversation, record)
        return str(final["text"])

    async def cycle(self, session: str | None = None) -> None:
        session = secrets.token_hex(8) if session is None else session
        request = await self.send(session, peers.MESSAGE)
        assert (await self.respond(session, request["requestId"], peers.ANSWER)).startswith("Recorded")

    async def grown(self, turns: int) -> str:
        session = secrets.token_hex(8)
        for _ in range(turns):
            await self.cycle(session)
        return session


WRITTEN_SCHEMA = """
CREATE TABLE IF NOT EXISTS records (id TEXT PRIMARY KEY, version INTEGER NOT NULL, record TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS log (
    session TEXT NOT NULL, n INTEGER NOT NULL, events TEXT NOT NULL, messages TEXT, PRIMARY KEY (session, n)
) WITHOUT ROWID;
"""


class Written(Floor):
    """The floor writing what eve-py writes: six transactions a fresh cycle, seventeen events, the record each time.

    The same turn as `Floor`, with eve-py's writes done by hand: the session's creation, the
    turn's start (the lease, before the model is called), the park (durable), the accepted
    answer (before the tool runs), the step with the tool's result (before the model is called
    again) and the completion (durable); each replaces the session's record (a compare-and-set
    on its version; the record's JSON about as long as eve-py's at that point, the parked
    request in it while it waits) and appends its events (eve-py's seventeen, each with an id,
    a time and the turn's ids, as JSON lines) and messages in one log row. Writes that need no
    sync commit on the loop's own connection (`synchronous=NORMAL`); durable ones go to the
    writer thread's (`FULL`), whose sync covers them too.

    `fewest=True` keeps only the writes the issue's guarantees and `docs/deploy.md`'s crash
    rules need: the creation rides with the turn's start (which takes the lease before the
    model is called), and the step with the tool's result rides with the completion (after a
    crash, that model step and its executors that needed no approval run again): four writes a
    fresh cycle, as in a running session (whose creation is long written).
    """

    def __init__(self, path: Path, *, fewest: bool = False) -> None:
        super().__init__(path, writer_thread=True)
        self.fewest = fewest
        self.held: tuple[list[str], list[Any]] = ([], [])
        self.db.executescript(WRITTEN_SCHEMA)
        self.quick = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
        self.quick.execute("PRAGMA synchronous=NORMAL")
        self.events = 0
        self.records: dict[str, tuple[int, int, dict[str, Any]]] = {}

    def close(self) -> None:
        self.quick.close()
        super().close()

    def _event(self, kind: str, turn: str, data: dict[str, Any]) -> str:
        self.events += 1
        at = datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")
        meta = {"id": f"evt_{self.events:026d}", "at": at, "deliveryIds": [f"dlv_{turn[5:]}"]}
        return json.dumps({"type": kind, "data": {"sequence": 0, "turnId": turn, **data}, "meta": meta})

    async def _write(
        self, session: str, record: dict[str, Any], events: list[str], messages: list[Any], *, durable: bool
    ) -> None:
        if self.fewest and not durable and (session not in self.records or "lease" not in record):
            self.held = (self.held[0] + events, self.held[1] + messages)  # rides with the next write
            if session not in self.records:
                self.records[session] = (0, 0, record)
            return
        events, messages, self.held = self.held[0] + events, self.held[1] + messages, ([], [])
        version, n, _ = self.records.get(session, (0, 0, {}))
        body = json.dumps(record | {"version": version + 1, "updatedAt": time.time()})
        statements: list[tuple[str, tuple[Any, ...]]] = [
            ("INSERT INTO records VALUES (?, 1, ?)", (session, body))
            if version == 0
            else (
                "UPDATE records SET version = ?, record = ? WHERE id = ? AND version = ?",
                (version + 1, body, session, version),
            ),
            (
                "INSERT INTO log VALUES (?, ?, ?, ?)",
                (session, n, "\n".join(events), json.dumps(messages) if messages else None),
            ),
        ]
        if durable:
            await self._durably(statements)
        else:
            self.quick.execute("BEGIN IMMEDIATE")
            for sql, params in statements:
                self.quick.execute(sql, params)
            self.quick.execute("COMMIT")
        self.records[session] = (version + 1, n + 1, record)

    async def send(self, session: str, text: str) -> dict[str, Any]:
        turn = f"turn_{secrets.token_hex(13)}"
        if session not in self.records:
            created = {"id": session, "createdAt": time.time(), "turn": None, "pending": None, "lease": None}
            started = self._event("session.started", turn, {"runtime": {"agentId": "agent", "eveVersion": "0.80.1"}})
            await self._write(session, created, [started], [], durable=False)
        conversation, _ = self.state.get(session, ([], {}))
        conversation = [*conversation, {"role": "user", "text": text}]
        lease = {"owner": "wkr_1", "expiresAt": time.time() + 120, "takeover": False}
        record = self.records[session][2] | {"turn": {"turnId": turn, "status": "running"}, "lease": lease}
        events = [self._event("turn.started", turn, {}), self._event("message.received", turn, {"text": text})]
        await self._write(session, record, events, conversation[-1:], durable=False)
        reply, call = self._ask(conversation)
        request = {"requestId": call["id"], "kind": "question", "action": call, "prompt": call["input"]["prompt"]}
        request |= {"options": OPTIONS, "schema": PICKED}
        pending = {"turnId": turn, "assistant": reply, "requests": [request], "answers": {}}
        events = [
            self._event("step.started", turn, {"stepIndex": 0, "modelId": "mock"}),
            self._event("step.completed", turn, {"stepIndex": 0, "finishReason": "tool-calls"}),
            self._event("input.requested", turn, {"requests": [request]}),
            self._event("turn.waiting", turn, {"on": "input"}),
        ]
        await self._write(session, record | {"pending": pending, "lease": None}, events, [], durable=True)
        self.state[session] = (conversation, {"turn": turn, "pending": [request]})
        return request

    async def respond(self, session: str, request_id: str, answer: dict[str, Any]) -> str:
        conversation, state = self.state[session]
        turn, record = state["turn"], self.records[session][2]
        if state["pending"][0]["requestId"] != request_id:
            raise KeyError(request_id)
        if not self.picked.is_valid(answer):
            raise ValueError("the answer does not match the tool's output schema")
        lease = {"owner": "wkr_1", "expiresAt": time.time() + 120, "takeover": False}
        record = record | {"lease": lease, "pending": record["pending"] | {"answers": {request_id: answer}}}
        resolved = self._event("input.resolved", turn, {"requestId": request_id, "value": answer})
        await self._write(session, record, [resolved], [], durable=False)
        first = len(conversation)
        conversation.append({"role": "tool", "toolCallId": request_id, "output": answer})
        note = model(conversation, self.turns)
        conversation.append(note)
        conversation.append({"role": "tool", "toolCallId": note["toolCalls"][0]["id"], "output": {"recorded": True}})
        events = [
            self._event("step.started", turn, {"stepIndex": 1, "modelId": "mock"}),
            self._event("actions.requested", turn, {"actions": note["toolCalls"]}),
            self._event("step.completed", turn, {"stepIndex": 1, "finishReason": "tool-calls"}),
            self._event("action.result", turn, {"callId": note["toolCalls"][0]["id"], "output": {"recorded": True}}),
        ]
        record = {key: value for key, value in record.items() if key != "lease"} | {"pending": None}
        await self._write(session, record, events, conversation[first:], durable=False)
        final = model(conversation, self.turns)
        conversation.append(final)
        events = [
            self._event("step.started", turn, {"stepIndex": 2, "modelId": "mock"}),
            self._event("message.completed", turn, {"message": final}),
            self._event("step.completed", turn, {"stepIndex": 2, "finishReason": "stop"}),
            self._event("turn.completed", turn, {}),
            self._event("session.waiting", turn, {}),
        ]
        await self._write(session, record | {"turn": None, "lease": None}, events, [final], durable=True)
        assert not self.held[0]
        self.state[session] = (conversation, {"turn": None, "pending": []})
        return str(final["text"])


async def measure(args: argparse.Namespace, folder: Path) -> dict[str, dict[str, list[tuple[float, float]]]]:
    """(wall, process CPU) ms per cycle of each subject per round, in each scenario."""
    results: dict[str, dict[str, list[tuple[float, float]]]] = {}
    async with AsyncExitStack() as stack:
        eve, langgraph = await peers.sqlite_pair(stack, folder, concurrent=False)
        memory = peers.Eve(MemorySessionStore())
        subjects: dict[str, Any] = {"eve-py": eve, "eve-py, memory store": memory, "LangGraph": langgraph}
        for name, floor in (
            ("floor on the loop", Floor(folder / "loop.db", writer_thread=False)),
            ("floor, writer thread", Floor(folder / "thread.db", writer_thread=True)),
            ("floor, eve-py's writes", Written(folder / "written.db")),
            ("floor, fewest writes", Written(folder / "fewest.db", fewest=True)),
        ):
            stack.callback(floor.close)
            subjects[name] = floor
        for scenario in args.scenarios:
            times: dict[str, list[tuple[float, float]]] = {name: [] for name in subjects}
            for subject in subjects.values():
                await peers.timed_serial(subject.cycle, [None] * 10)  # warm-up
            for _ in range(args.rounds):
                for name, subject in subjects.items():
                    cycle: Callable[[str | None], Awaitable[None]] = subject.cycle
                    if scenario == "ten":
                        ids: list[str | None] = [await subject.grown(10) for _ in range(max(3, args.cycles // 10))]
                    else:
                        ids = [None] * args.cycles
                    started = time.process_time()
                    wall = await peers.timed_serial(cycle, ids) * 1000
                    times[name].append((wall, (time.process_time() - started) * 1000 / len(ids)))
            results[scenario] = times
    return results


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--scenarios", default="fresh,ten", help="comma-separated (fresh,ten)")
    parser.add_argument("--cycles", type=int, default=100, help="cycles per subject per round (default 100)")
    parser.add_argument("--rounds", type=int, default=3, help="alternating rounds (default 3)")
    args = parser.parse_args()
    args.scenarios = args.scenarios.split(",")
    started = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="eve-floor-") as folder:
        results = anyio.run(measure, args, Path(folder))
    print(f"SQLite {sqlite3.sqlite_version}, synchronous=FULL, {args.rounds} rounds of {args.cycles} cycles")
    print("LangGraph's time per cycle / each subject's (median of per-round ratios)")
    for scenario, times in results.items():
        target = peers.TARGETS["sqlite", scenario]
        print(f"  {scenario} (issue 25's target for eve-py: >= {target:g}x)")
        for name, ms in times.items():
            ratio = statistics.median(lg[0] / own[0] for lg, own in zip(times["LangGraph"], ms, strict=True))
            walls, cpus = (", ".join(f"{v[i]:.2f}" for v in ms) for i in (0, 1))
            print(f"    {name:<22} {ratio:6.2f}x   ms/cycle {walls}   process CPU {cpus}")
    print(f"({time.monotonic() - started:.0f} s)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
