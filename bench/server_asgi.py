"""The server app's own CPU per round, without uvicorn: `server_load.py`'s round driven through ASGI in-process.

Run by hand (not part of the test suite):

```
.venv/bin/python bench/server_asgi.py                          # SQLite, 200 sessions at once, 3 rounds
.venv/bin/python bench/server_asgi.py --store memory --rounds 5
.venv/bin/python bench/server_asgi.py --layers                 # + cProfile of the last round, by eve-py module
.venv/bin/python bench/server_asgi.py --freeze                 # gc.freeze() once the app has started
taskset -c 0 .venv/bin/python bench/server_asgi.py --sessions 1 --rounds 200   # one at a time, pinned
```

`create_app` on the fixture app (its mock model, a bearer token), run in its lifespan in this
process, and N sessions at once each doing `server_load.py`'s round through ASGI calls, on eve
1.0's wire (`--wire v27`, the default) or eve 0.80.1's (`--wire v26`): `POST /session`, `GET
.../stream` from its `startIndex` until the turn parks, `POST` the picker's answer, the stream
again until the turn completes (each stream ends as a client's does: the client leaves at the
turn boundary, `http.disconnect`). No sockets, no HTTP parsing: what is
measured is Starlette, the server's routes, hub and stream readers, the engine and the store.
Each round prints the **process CPU per round** (`time.process_time`: the loop's thread and the
store's writer and worker threads, this driver's own small share included) and the garbage
collector's time in it by generation (`gc.callbacks`). With `--freeze`, everything alive once the
app's lifespan has started is collected once and frozen (`gc.freeze()`) before the warm-up.

`--layers` profiles the last round with `cProfile` (the loop's thread) and charges each call
made outside eve-py (pydantic, anyio, asyncio, json, ...) to the eve-py module or the library
(Starlette) that made it, so that a module's share includes what it asks of its libraries;
`driver` is this script's own. cProfile inflates Python-heavy code, so read shares, not times.
"""

from __future__ import annotations

import argparse
import cProfile
import gc
import json
import pstats
import re
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

import anyio
from _wires import MESSAGE, Wire, answer_body, asked, boundary, reply  # bench/ is first on sys.path

REPO = Path(__file__).resolve().parent.parent
APP = REPO / "fixtures" / "agent-tools-hitl"
TOKEN = "bench-token-server-asgi"
WIRE: Wire = "v27"
"""The eve wire the rounds speak (`--wire`): eve 1.0's on `/eve/v1`, or eve 0.80.1's on `/v26/eve/v1`."""


class _Call:
    """One request through ASGI: the body in one message, then `http.disconnect` once the client leaves."""

    def __init__(self, method: str, path: str, body: bytes = b"", query: bytes = b"") -> None:
        headers = [(b"host", b"127.0.0.1"), (b"authorization", f"Bearer {TOKEN}".encode())]
        if body:
            headers += [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]
        self.scope = {
            "type": "http",
            "asgi": {"version": "3.0", "spec_version": "2.3"},
            "http_version": "1.1",
            "method": method,
            "scheme": "http",
            "path": path,
            "raw_path": path.encode(),
            "query_string": query,
            "root_path": "",
            "headers": headers,
            "client": ("127.0.0.1", 50000),
            "server": ("127.0.0.1", 8000),
            "state": {},
        }
        self.body = body
        self.status = 0
        self.chunks: list[bytes] = []
        self.arrived = anyio.Event()
        self.gone = anyio.Event()
        self._body_sent = False

    async def receive(self) -> dict[str, Any]:
        if not self._body_sent:
            self._body_sent = True
            return {"type": "http.request", "body": self.body, "more_body": False}
        await self.gone.wait()
        return {"type": "http.disconnect"}

    async def send(self, message: dict[str, Any]) -> None:
        if message["type"] == "http.response.start":
            self.status = message["status"]
            return
        self.chunks.append(message.get("body", b""))
        self.arrived.set()
        if not message.get("more_body"):
            self.gone.set()


async def _post(app: Any, path: str, body: dict[str, Any]) -> dict[str, Any]:
    call = _Call("POST", path, json.dumps(body).encode())
    await app(call.scope, call.receive, call.send)
    if call.status != 202:
        raise RuntimeError(f"POST {path}: {call.status} {b''.join(call.chunks)[:300]!r}")
    accepted: dict[str, Any] = json.loads(b"".join(call.chunks))
    return accepted


def _api() -> str:
    return "/eve/v1" if WIRE == "v27" else "/v26/eve/v1"


async def _stream(app: Any, session_id: str, start: int) -> list[dict[str, Any]]:
    """The lines from `start` up to the turn boundary (`_wires.boundary`); then the client leaves."""
    call = _Call("GET", f"{_api()}/session/{session_id}/stream", query=f"startIndex={start}".encode())
    lines: list[dict[str, Any]] = []
    async with anyio.create_task_group() as group:
        group.start_soon(app, call.scope, call.receive, call.send)
        pending = b""
        while not call.gone.is_set():
            await call.arrived.wait()
            call.arrived = anyio.Event()
            pending += b"".join(call.chunks)
            call.chunks.clear()
            *complete, pending = pending.split(b"\n")
            arrived = [json.loads(line) for line in complete if line.strip()]
            lines += arrived
            if any(boundary(WIRE, line) for line in arrived):
                break
        call.gone.set()
    return lines


async def _round(app: Any) -> None:
    accepted = await _post(app, f"{_api()}/session", {"message": MESSAGE})
    session_id = accepted["sessionId"]
    request_id = asked(WIRE, session_id, await _stream(app, session_id, accepted["startIndex"]))
    accepted = await _post(app, f"{_api()}/session/{session_id}", answer_body(WIRE, request_id))
    reply(WIRE, session_id, await _stream(app, session_id, accepted["startIndex"]))


class _Collections:
    """The collector's time by generation since the last `take`, from `gc.callbacks`."""

    def __init__(self) -> None:
        self._started = 0.0
        self.counts = [0, 0, 0]
        self.seconds = [0.0, 0.0, 0.0]
        gc.callbacks.append(self._note)

    def _note(self, phase: str, info: dict[str, int]) -> None:
        if phase == "start":
            self._started = time.thread_time()
        else:
            self.counts[info["generation"]] += 1
            self.seconds[info["generation"]] += time.thread_time() - self._started

    def take(self, sessions: int) -> str:
        pairs = enumerate(zip(self.counts, self.seconds, strict=True))
        shown = ", ".join(f"gen {g}: {c} ({s * 1000 / sessions:.2f} ms)" for g, (c, s) in pairs)
        self.counts, self.seconds = [0, 0, 0], [0.0, 0.0, 0.0]
        return shown


async def run(
    store_kind: str, sessions: int, rounds: int, profile: cProfile.Profile | None, freeze: bool = False
) -> None:
    """Warm up, then `rounds` rounds of `sessions` at once, each printed."""
    from eve_py import load_agent
    from eve_py.harness._runtime import Runtime
    from eve_py.models import load_mock_model
    from eve_py.server import create_app
    from eve_py.sessions._opening import build_store

    with tempfile.TemporaryDirectory(prefix="eve-server-asgi-") as folder:
        store = build_store("memory" if store_kind == "memory" else str(Path(folder) / "sessions.db"))
        runtime = Runtime(load_agent(APP), model=load_mock_model(APP), store=store)
        app = create_app(runtime, tokens=[TOKEN])
        collections = _Collections()
        async with app.router.lifespan_context(app):
            if freeze:
                gc.collect()
                gc.freeze()
                print(f"frozen: {gc.get_freeze_count()} objects")
            for _ in range(5):
                await _round(app)
            collections.take(1)
            for number in range(1, rounds + 1):
                if profile is not None and number == rounds:
                    profile.enable()
                cpu, began = time.process_time(), time.perf_counter()
                async with anyio.create_task_group() as group:
                    for _ in range(sessions):
                        group.start_soon(_round, app)
                cpu_ms = (time.process_time() - cpu) * 1000 / sessions
                rate = sessions / (time.perf_counter() - began)
                if profile is not None and number == rounds:
                    profile.disable()
                print(
                    f"round {number}: {cpu_ms:.2f} ms CPU per round, {rate:.0f} rounds/s; collector: "
                    f"{collections.take(sessions)}"
                )
        await runtime.aclose()
        await store.aclose()


def _owner(where: str) -> str | None:
    """Which eve-py module (server modules one by one), library or driver a profiled function belongs to."""
    found = re.search(r"eve_py/(server/\w+|[a-z_]\w*)", where)
    if found:
        return "eve_py/" + found.group(1)
    if "/starlette/" in where:
        return "starlette"
    if "fixtures" in where:  # the app's mock model
        return "eve_py/testing"
    if where == str(Path(__file__).resolve()):
        return "driver"
    return None


def layers(profile: cProfile.Profile, sessions: int) -> None:
    """Print each owner's share of the profiled round, its library calls charged to it through the callers."""
    stats: dict[Any, Any] = pstats.Stats(profile).stats  # type: ignore[attr-defined]
    shares: Counter[str] = Counter()

    def charge(function: Any, seconds: float, depth: int = 0) -> None:
        callers = stats[function][4]
        calls = sum(entry[1] for entry in callers.values())
        if depth > 40 or not calls:
            shares["(event loop)"] += seconds
            return
        for caller, entry in callers.items():
            part = seconds * entry[1] / calls
            owner = _owner(caller[0])
            if owner is not None:
                shares[owner] += part
            else:
                charge(caller, part, depth + 1)

    total = 0.0
    for function, (_, _, own, _, _) in stats.items():
        total += own
        owner = _owner(function[0])
        if owner is not None:
            shares[owner] += own
        else:
            charge(function, own)
    print(f"\nthe last round under cProfile: {total * 1000 / sessions:.1f} ms a round (inflated); shares:")
    for owner, seconds in shares.most_common(25):
        print(f"  {100 * seconds / total:5.1f} %  {owner}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--store", choices=["sqlite", "memory"], default="sqlite")
    parser.add_argument("--sessions", type=int, default=200, help="sessions at once per round (default 200)")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--layers", action="store_true", help="profile the last round, shares by eve-py module")
    parser.add_argument("--freeze", action="store_true", help="gc.freeze() once the app has started")
    parser.add_argument("--wire", choices=["v26", "v27"], default="v27", help="the eve wire spoken (default v27)")
    args = parser.parse_args()
    global WIRE
    WIRE = args.wire
    sys.path.insert(0, str(REPO))
    profile = cProfile.Profile() if args.layers else None
    anyio.run(run, args.store, args.sessions, args.rounds, profile, args.freeze)
    if profile is not None:
        layers(profile, args.sessions)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
