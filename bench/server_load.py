"""Server load benchmark: N concurrent sessions park and are answered over HTTP, current code against a baseline.

Run by hand (not part of the test suite):

```
.venv/bin/python bench/server_load.py                  # N=200 concurrent sessions, against 8ba4647
.venv/bin/python bench/server_load.py --sessions 500
.venv/bin/python bench/server_load.py --baseline HEAD~3 --rounds 3
.venv/bin/python bench/server_load.py --no-baseline --json
.venv/bin/python bench/server_load.py --ai-sdk         # the AI SDK's POST /ai-sdk/chat against eve's wire
.venv/bin/python bench/server_load.py --ag-ui          # AG-UI's POST /ag-ui against eve's wire
```

Two servers, each a child process on 127.0.0.1 started with the same interpreter (with a bearer
token, so authentication is part of every request):

- **current**: `python -m eve_py serve fixtures/agent-tools-hitl --model mock --port 0 --store
  TMP/current.db` from this checkout (its working tree, or the commit `--current REF` names);
- **baseline**: the same from a temporary `git worktree add --detach TMP/baseline REF` (default
  `8ba4647`, the last commit before the server moved to eve 0.80.1's wire), with `cwd` and
  `PYTHONPATH` set to the worktree so that it imports that commit's `eve_py` and serves that
  commit's fixture. Which `eve_py` each server imports, and which wire its `/health` answer
  shows (old: `{ok, status: "ok", agent}`, new: `{ok, status: "ready", workflowId}`), is printed.
  The worktree is removed afterwards, also on errors.

Both servers start first and each gets five warm-up sessions, one at a time. Then the rounds
alternate, baseline round 1, current round 1, baseline round 2, current round 2, ... (`--rounds`
per side, default 2), so that a noisy machine hurts both sides alike; the server not being
driven is idle. Round 1 on each server also pays one-off costs (worker threads, allocator
arenas); round 2 shows what N more sessions cost. Each round, with one client (one
kept-alive connection) per session, like N independent frontends, speaking either wire:

1. **Park**: all N sessions at once: `POST /eve/v1/session {message: "help me pick a template"}`
   (`202 {sessionId, startIndex}`), then `GET .../stream?startIndex=N` (NDJSON) until the turn
   parks on the typed picker: up to `turn.waiting` or `session.waiting`, or the end of the
   response. The request id is `data.requests[0].requestId` of the `input.requested` event.
2. With all N parked, the server's memory is read from `/proc/PID/status` (VmRSS, VmHWM), and
   its CPU time so far from `/proc/PID/stat` (user + system).
3. **Answer**: all N at once: `POST /eve/v1/session/{id} {inputResponses: [{requestId, value:
   {pickedIds: ["tpl_blue"]}}]}` (timed until the `202`), then the stream from its `startIndex`
   until the turn completes (the `note` tool runs, the model answers): up to `session.waiting`
   (new wire) or the end of the response (old wire). The turn must have completed and its last
   `message.completed` (`data.message`, or `data.text` on the old wire) must be the expected text.

Each frontend is an `_h11_client.H11Client` (`--client h11`, the default): h11 on a TCP stream,
one kept-alive connection, each request in one write, as a browser's `fetch` does; with httpx
(`--client httpx`, the client before issue 25 step 13) the load generator spent 1-2 ms of CPU a
request and its own queue made most of the answer `POST`'s p50 (see `_h11_client`). httpx's
clients also send each request in one write (httpcore writes the headers and the body apart;
see `_OneWrite`). `--pin CPUS` runs both servers on those CPUs (`taskset -c`)
and the load generator on the others, so that the generator's own CPU time (about as much as the
server's) does not come out of the server's share; without it all share every core.

Each server parses HTTP with what its own commit's `server` extra installs (h11 for every commit
before 69f428a; httptools, which uvicorn picks when it is importable, only for a commit whose
`pyproject.toml` lists it: any other side gets a `PYTHONPATH` entry on which `httptools` cannot be
imported, so a stray install changes no run); the description of each side says which.

Four HTTP requests per session; a session's four make one **round** (rounds/s: sessions / the
round's time). Requests that fail on the connection itself (`httpx.TransportError`: a reset, a
close mid-request) are counted apart as connection resets. After the rounds, `--idle N` (default
50) sessions are answered one at a time on each side's otherwise idle server by one client, the
answer `POST` sent on a connection the client kept alive (see `_idle`). The last lines give, per
side, issue 25's figures: the worst round's answer `POST` p50/p99, rounds/s over all rounds and its
ratio to the baseline, the resets over all rounds, and the idle client's answer `POST` p50.

Besides rates and latencies, each round reports the server's
CPU time per phase and the load generator's own (it shares the machine's cores with the server);
CPU time is less sensitive than wall time to other work on the machine. Any error (a non-2xx
answer, a broken stream, a turn that does not end as expected) is counted, and the run exits
with status 1 if there was one. The ratios printed at the end are current / baseline, per round
and over all rounds.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import tomllib
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Any, Literal

import anyio
import httpcore
import httpx
from _h11_client import H11Client  # bench/ is the script's directory, first on sys.path
from _wires import ANSWER, EXPECTED, MESSAGE, TurnError, Wire, answer_body, asked, boundary, reply
from anyio.abc import Process
from anyio.streams.text import TextReceiveStream

REPO = Path(__file__).resolve().parent.parent
APP = Path("fixtures") / "agent-tools-hitl"
TOKEN = "bench-token-server-load"
__all__ = ("ANSWER", "EXPECTED", "MESSAGE", "TurnError", "Side", "main")  # the frontend rounds use these
DEFAULT_BASELINE = "8ba4647"
TIMEOUT_S = 120.0


@dataclass(frozen=True, kw_only=True)
class Side:
    """One server to measure: where its code is, and what it turned out to be."""

    name: str
    root: Path
    ref: str
    commit: str
    dirty: bool
    eve_py: str = ""
    wire: Wire = "v27"
    """The wire its frontends speak: asked for by `--wire` (or `--compare-wires`), then what the server offers."""
    api: str = "/eve/v1"
    """The route prefix of that wire."""
    parser: str = ""
    """The HTTP parser uvicorn uses for it (see `_server_env`)."""


@dataclass(frozen=True, kw_only=True)
class Result:
    """One round's numbers."""

    side: str
    round: int
    sessions: int
    requests: int
    errors: int
    total_s: float
    requests_per_s: float
    park_s: float
    answer_s: float
    answer_post_p50_ms: float
    answer_post_p99_ms: float
    answer_post_max_ms: float
    park_p50_ms: float
    park_p99_ms: float
    complete_p50_ms: float
    complete_p99_ms: float
    server_rss_before_mib: float
    server_rss_parked_mib: float
    server_rss_after_mib: float
    server_hwm_mib: float
    server_cpu_park_s: float
    server_cpu_answer_s: float
    driver_cpu_s: float
    rounds_per_s: float = float("nan")
    """Whole rounds (create, park, answer, complete) per second: sessions / total time."""
    resets: int = 0
    """Requests that failed on the connection itself (`httpx.TransportError`: a reset, a close mid-request)."""


# (label, Result field, higher is better)
RATIOS: tuple[tuple[str, str, bool], ...] = (
    ("rounds/s (park, answer, complete)", "rounds_per_s", True),
    ("requests/s", "requests_per_s", True),
    ("POST inputResponses p50", "answer_post_p50_ms", False),
    ("POST inputResponses p99", "answer_post_p99_ms", False),
    ("create + stream until parked p50", "park_p50_ms", False),
    ("answer + stream until completed p50", "complete_p50_ms", False),
    ("server CPU time, park phase", "server_cpu_park_s", False),
    ("server CPU time, answer phase", "server_cpu_answer_s", False),
    ("server RSS with all parked", "server_rss_parked_mib", False),
    ("server RSS after", "server_rss_after_mib", False),
)


# --- git ---------------------------------------------------------------------------------------


def _git(*args: str, cwd: Path = REPO) -> str:
    return subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, text=True).stdout.strip()


def _working_tree() -> Side:
    dirty = bool(_git("status", "--porcelain", "--", "eve_py", str(APP)))
    return Side(name="current", root=REPO, ref="working tree", commit=_git("rev-parse", "HEAD"), dirty=dirty)


@contextmanager
def worktree(name: str, ref: str) -> Iterator[Side]:
    """A temporary detached worktree of `ref`, removed afterwards (also on errors)."""
    commit = _git("rev-parse", "--verify", f"{ref}^{{commit}}")
    folder = Path(tempfile.mkdtemp(prefix=f"eve-server-load-{name}-"))
    tree = folder / "tree"
    try:
        _git("worktree", "add", "--detach", str(tree), commit)
        yield Side(name=name, root=tree, ref=ref, commit=commit, dirty=False)
    finally:
        removed = subprocess.run(["git", "worktree", "remove", "--force", str(tree)], cwd=REPO, capture_output=True)
        if removed.returncode and tree.exists():
            print(f"could not remove the worktree {tree}: {removed.stderr.decode().strip()}", file=sys.stderr)
        shutil.rmtree(folder, ignore_errors=True)


# --- servers -----------------------------------------------------------------------------------


_NO_HTTPTOOLS = Path(tempfile.gettempdir()) / "eve-server-load-no-httptools"
"""A directory whose `httptools` cannot be imported: uvicorn then parses HTTP with h11."""


def _server_env(side: Side) -> dict[str, str]:
    """The server's environment: the bench's token, the side's own `eve_py`, and the HTTP parser its server
    extra installs (a commit whose `pyproject.toml` does not list `httptools` runs on h11, as it did then)."""
    env = {**os.environ, "EVE_API_TOKEN": TOKEN}
    paths = [str(side.root)] if side.root != REPO else []  # ahead of the editable install's path entry
    if _parser(side) == "h11":
        _NO_HTTPTOOLS.mkdir(exist_ok=True)
        (_NO_HTTPTOOLS / "httptools.py").write_text('raise ImportError("not in this commit\'s server extra")\n')
        paths.append(str(_NO_HTTPTOOLS))
    if paths:
        env["PYTHONPATH"] = os.pathsep.join(p for p in (*paths, os.environ.get("PYTHONPATH")) if p)
    return env


def _imported_from(side: Side) -> str:
    """Where `import eve_py` resolves with the server's interpreter, environment and directory.

    Raises:
        RuntimeError: Not from the side's own tree.
    """
    code = "import eve_py; print(eve_py.__file__)"
    out = subprocess.run(
        [sys.executable, "-c", code], cwd=side.root, env=_server_env(side), check=True, capture_output=True, text=True
    )
    eve_py = out.stdout.strip()
    if not Path(eve_py).resolve().is_relative_to(side.root.resolve()):
        raise RuntimeError(f"{side.name}: eve_py imports from {eve_py}, not from {side.root}")
    return eve_py


SERVER_CPUS: str | None = None
"""With `--pin`: the CPUs the servers run on (`taskset -c` list); the load generator gets the others."""


def pin(server_cpus: str) -> None:
    """Run the servers started from now on on `server_cpus` (a `taskset -c` list) and this process on the other CPUs.

    Raises:
        ValueError: No CPU would be left for the load generator.
    """
    global SERVER_CPUS
    server = _cpu_list(server_cpus)
    rest = os.sched_getaffinity(0) - server
    if not rest:
        raise ValueError(f"--pin {server_cpus}: no CPU left for the load generator")
    os.sched_setaffinity(0, rest)
    SERVER_CPUS = server_cpus


def _cpu_list(cpus: str) -> set[int]:
    out: set[int] = set()
    for part in cpus.split(","):
        first, _, last = part.partition("-")
        out.update(range(int(first), int(last or first) + 1))
    return out


PROFILE: Path | None = None
"""With `--profile`: where the current server's `cProfile` statistics go (written when it stops)."""


async def _start_server(side: Side, store: Path) -> tuple[Process, str]:
    profile = ["-m", "cProfile", "-o", str(PROFILE)] if PROFILE is not None and side.name == "current" else []
    command = [sys.executable, *profile, "-m", "eve_py", "serve", str(side.root / APP), "--model", "mock"]
    command += ["--port", "0"]
    if SERVER_CPUS is not None:  # every thread of the server inherits the mask
        command = ["taskset", "-c", SERVER_CPUS, *command]
    process = await anyio.open_process(
        [*command, "--store", str(store), "--log-level", "warning"], cwd=side.root, env=_server_env(side), stderr=None
    )
    assert process.stdout is not None
    seen = ""
    try:
        with anyio.fail_after(60):
            async for chunk in TextReceiveStream(process.stdout):
                seen += chunk
                for line in seen.splitlines():
                    if line.startswith("listening on "):
                        return process, line.split()[2].rstrip("/")
    except BaseException:
        await _stop_server(process)
        raise
    await _stop_server(process)
    raise RuntimeError(f"{side.name}: eve-py serve did not start: {seen!r}")


async def _stop_server(process: Process) -> None:
    if process.returncode is None:
        process.terminate()
    with anyio.move_on_after(30, shield=True) as scope:
        await process.wait()
    if scope.cancelled_caught:
        process.kill()
    await process.aclose()


async def _wire(url: str, side: Side) -> tuple[Wire, str]:
    """The wire the side's frontends speak and its route prefix: `side.wire` if the server offers it
    (eve 1.0's on `/eve/v1` once eve 0.80.1's moved under `/v26`), else the newest it has, from
    `/health` bodies."""
    async with httpx.AsyncClient(base_url=url, timeout=30.0) as client:
        legacy = await client.get("/v26/eve/v1/health")
        if legacy.status_code == 200:
            return ("v27", "/eve/v1") if side.wire == "v27" else ("v26", "/v26/eve/v1")
        response = await client.get("/eve/v1/health")
    body = response.json()
    if response.status_code == 200 and body.get("status") == "ok" and "agent" in body:
        return "old", "/eve/v1"
    if response.status_code == 200 and body.get("status") == "ready" and "workflowId" in body:
        return "v26", "/eve/v1"
    raise RuntimeError(f"{side.name}: unexpected /health answer {response.status_code} {body!r}")


# --- the load driver (both wires) --------------------------------------------------------------


class _OneWrite(httpcore.AsyncNetworkStream):
    """A connection that sends each request in one write, as a browser's `fetch` does.

    httpcore writes a request's headers and its body separately, with a trip around the event
    loop in between; on a busy machine the server then gets the body milliseconds after the
    headers (seen with `strace`), which a browser never makes it wait for. The writes are kept
    until the response is read (HTTP/1.1 sends the whole request first), then sent together.
    """

    def __init__(self, stream: httpcore.AsyncNetworkStream) -> None:
        self._stream = stream
        self._pending = bytearray()

    # httpcore's stream and backend interfaces take `timeout`s: the signatures are theirs (ASYNC109).
    async def write(self, buffer: bytes, timeout: float | None = None) -> None:  # noqa: ASYNC109
        self._pending += buffer

    async def read(self, max_bytes: int, timeout: float | None = None) -> bytes:  # noqa: ASYNC109
        if self._pending:
            pending, self._pending = bytes(self._pending), bytearray()
            await self._stream.write(pending, timeout)
        return await self._stream.read(max_bytes, timeout)

    async def aclose(self) -> None:
        await self._stream.aclose()

    async def start_tls(
        self,
        ssl_context: Any,
        server_hostname: str | None = None,
        timeout: float | None = None,  # noqa: ASYNC109
    ) -> httpcore.AsyncNetworkStream:
        return _OneWrite(await self._stream.start_tls(ssl_context, server_hostname, timeout))

    def get_extra_info(self, info: str) -> Any:
        return self._stream.get_extra_info(info)


class _OneWriteBackend(httpcore.AsyncNetworkBackend):
    """httpcore's anyio backend, its connections wrapped in `_OneWrite`."""

    def __init__(self) -> None:
        self._backend = httpcore.AnyIOBackend()

    async def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,  # noqa: ASYNC109
        local_address: str | None = None,
        socket_options: Any = None,
    ) -> httpcore.AsyncNetworkStream:
        return _OneWrite(await self._backend.connect_tcp(host, port, timeout, local_address, socket_options))

    async def sleep(self, seconds: float) -> None:
        await self._backend.sleep(seconds)


CLIENT: Literal["h11", "httpx"] = "h11"
"""The frontends' HTTP client (`--client`): `_h11_client.H11Client`, or httpx with `_OneWrite`."""


Frontend = httpx.AsyncClient | H11Client


def _frontend(url: str) -> Frontend:
    """One frontend's client for the eve wire's rounds (see `CLIENT`): the bench's token, each request in one write."""
    if CLIENT == "httpx":
        return _client(url)
    return H11Client(url, {"authorization": f"Bearer {TOKEN}"})


def _client(url: str) -> httpx.AsyncClient:
    """One frontend's client: httpx with the bench's token, each request sent in one write (see `_OneWrite`)."""
    limits = httpx.Limits(max_connections=100, max_keepalive_connections=20, keepalive_expiry=5.0)  # httpx's own
    transport = httpx.AsyncHTTPTransport(limits=limits)
    transport._pool = httpcore.AsyncConnectionPool(
        max_connections=limits.max_connections,
        max_keepalive_connections=limits.max_keepalive_connections,
        keepalive_expiry=limits.keepalive_expiry,
        network_backend=_OneWriteBackend(),
    )
    return httpx.AsyncClient(
        base_url=url, headers={"authorization": f"Bearer {TOKEN}"}, timeout=60.0, transport=transport
    )


async def _post(client: Frontend, path: str, body: dict[str, Any]) -> dict[str, Any]:
    """POST a JSON body (httpx sends `content-type: application/json`); the `202` body."""
    response = await client.post(path, json=body)
    if response.status_code != 202:
        raise TurnError(f"POST {path}: {response.status_code} {response.text[:300]}")
    accepted: dict[str, Any] = response.json()
    if not isinstance(accepted.get("sessionId"), str) or not isinstance(accepted.get("startIndex"), int):
        raise TurnError(f"POST {path}: 202 without sessionId and startIndex: {accepted!r}")
    return accepted


async def _stream(client: Frontend, side: Side, session_id: str, start: int) -> list[dict[str, Any]]:
    """The session's lines from `start` up to a turn boundary (see `_wires.boundary`) or the end of the response."""
    lines: list[dict[str, Any]] = []
    path = f"{side.api}/session/{session_id}/stream"
    async with client.stream("GET", path, params={"startIndex": start}) as response:
        if response.status_code != 200:
            await response.aread()
            raise TurnError(f"GET {path}: {response.status_code} {response.text[:300]}")
        async for text in response.aiter_lines():
            if not text.strip():
                continue
            line = json.loads(text)
            lines.append(line)
            if boundary(side.wire, line):
                break
    return lines


async def _park(client: Frontend, side: Side) -> tuple[str, str]:
    """Create a session whose turn parks on the picker; (session id, request or interaction id)."""
    accepted = await _post(client, f"{side.api}/session", {"message": MESSAGE})
    session_id = accepted["sessionId"]
    return session_id, asked(side.wire, session_id, await _stream(client, side, session_id, accepted["startIndex"]))


async def _answer(client: Frontend, side: Side, session_id: str, request_id: str) -> float:
    """Answer the picker and follow the turn to its end; the time until the `202`, in ms."""
    started = time.perf_counter()
    accepted = await _post(client, f"{side.api}/session/{session_id}", answer_body(side.wire, request_id))
    post_ms = (time.perf_counter() - started) * 1000
    reply(side.wire, session_id, await _stream(client, side, session_id, accepted["startIndex"]))
    return post_ms


# --- rounds ------------------------------------------------------------------------------------


def _percentile(values: list[float], q: float) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(q * (len(ordered) - 1))))]


def _median(values: list[float]) -> float:
    return statistics.median(values) if values else float("nan")


def _cpu_s(pid: int) -> float:
    """User + system CPU time a process used so far, in seconds."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")  # utime, stime


def _memory_mib(pid: int) -> tuple[float, float]:
    """(VmRSS, VmHWM) of a process, in MiB."""
    fields = {}
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        key, _, value = line.partition(":")
        if key in ("VmRSS", "VmHWM"):
            fields[key] = int(value.split()[0]) / 1024
    return fields["VmRSS"], fields["VmHWM"]


async def _warm_up(url: str, side: Side) -> None:
    """A few sessions one at a time: imports, validators, the database file."""
    async with _frontend(url) as client:
        for _ in range(5):
            with anyio.fail_after(TIMEOUT_S):
                session_id, request_id = await _park(client, side)
                await _answer(client, side, session_id, request_id)


async def _idle(url: str, side: Side, answers: int) -> list[float]:
    """One client answering one session at a time on an idle server; each answer `POST`'s time until its `202`, in ms.

    Each session parks first; then `GET /health` leaves a kept-alive connection in the client's pool
    (the stream's, closed at the turn boundary, is gone), the server settles for a moment, and the
    answer `POST` goes out on that connection.
    """
    post_ms: list[float] = []
    async with _frontend(url) as client:
        for _ in range(answers):
            with anyio.fail_after(TIMEOUT_S):
                session_id, request_id = await _park(client, side)
                (await client.get(f"{side.api}/health")).raise_for_status()
                await anyio.sleep(0.02)
                post_ms.append(await _answer(client, side, session_id, request_id))
    return post_ms


async def _round(side: Side, process: Process, url: str, sessions: int, number: int) -> Result:
    """N sessions park at once, then all N are answered at once."""
    errors: list[str] = []
    resets: list[bool] = []
    requests = 0
    parked: dict[int, tuple[str, str]] = {}
    park_ms: list[float] = []
    post_ms: list[float] = []
    complete_ms: list[float] = []
    rss_before, _ = _memory_mib(process.pid)

    # One client (and connection pool) per session, like N independent frontends: httpx's pool
    # scans all its connections for every request, which would make one shared pool the bottleneck.
    clients = [_frontend(url) for _ in range(sessions)]
    try:

        async def park(index: int) -> None:
            nonlocal requests
            started = time.perf_counter()
            try:
                with anyio.fail_after(TIMEOUT_S):
                    parked[index] = await _park(clients[index], side)
                requests += 2
                park_ms.append((time.perf_counter() - started) * 1000)
            except Exception as exc:
                errors.append(f"{side.name} session {index} (park): {type(exc).__name__}: {exc}")
                resets.append(isinstance(exc, httpx.TransportError))

        async def answer(index: int) -> None:
            nonlocal requests
            session_id, request_id = parked[index]
            started = time.perf_counter()
            try:
                with anyio.fail_after(TIMEOUT_S):
                    post_ms.append(await _answer(clients[index], side, session_id, request_id))
                requests += 2
                complete_ms.append((time.perf_counter() - started) * 1000)
            except Exception as exc:
                errors.append(f"{side.name} session {index} (answer): {type(exc).__name__}: {exc}")
                resets.append(isinstance(exc, httpx.TransportError))

        cpu_before = _cpu_s(process.pid)
        driver_before = time.process_time()
        begin = time.perf_counter()
        async with anyio.create_task_group() as group:
            for index in range(sessions):
                group.start_soon(park, index)
        park_s = time.perf_counter() - begin
        rss_parked, _ = _memory_mib(process.pid)
        cpu_parked = _cpu_s(process.pid)

        middle = time.perf_counter()
        async with anyio.create_task_group() as group:
            for index in list(parked):
                group.start_soon(answer, index)
        answer_s = time.perf_counter() - middle
        total_s = time.perf_counter() - begin
        rss_after, hwm = _memory_mib(process.pid)
        cpu_after = _cpu_s(process.pid)
        driver_s = time.process_time() - driver_before
    finally:
        for each in clients:
            await each.aclose()

    for error in errors[:20]:
        print(f"error: {error}", file=sys.stderr)
    return Result(
        side=side.name,
        round=number,
        sessions=sessions,
        requests=requests,
        errors=len(errors),
        total_s=round(total_s, 3),
        requests_per_s=round(requests / total_s, 1),
        rounds_per_s=round(sessions / total_s, 2),
        resets=sum(resets),
        park_s=round(park_s, 3),
        answer_s=round(answer_s, 3),
        answer_post_p50_ms=round(_median(post_ms), 2),
        answer_post_p99_ms=round(_percentile(post_ms, 0.99), 2),
        answer_post_max_ms=round(max(post_ms), 2) if post_ms else float("nan"),
        park_p50_ms=round(_median(park_ms), 2),
        park_p99_ms=round(_percentile(park_ms, 0.99), 2),
        complete_p50_ms=round(_median(complete_ms), 2),
        complete_p99_ms=round(_percentile(complete_ms, 0.99), 2),
        server_rss_before_mib=round(rss_before, 1),
        server_rss_parked_mib=round(rss_parked, 1),
        server_rss_after_mib=round(rss_after, 1),
        server_hwm_mib=round(hwm, 1),
        server_cpu_park_s=round(cpu_parked - cpu_before, 2),
        server_cpu_answer_s=round(cpu_after - cpu_parked, 2),
        driver_cpu_s=round(driver_s, 2),
    )


async def run(
    sides: list[Side], sessions: int, rounds: int, idle_answers: int = 0
) -> tuple[list[Side], list[Result], dict[str, list[float]]]:
    """Start one server per side, warm them up, run the rounds alternating sides, stop the servers.

    Then, with `idle_answers`, one client answers that many sessions one at a time on each side's
    idle server (see `_idle`); the third value is those answer `POST` times per side, in ms.
    """
    started: list[tuple[Side, Process, str]] = []
    with tempfile.TemporaryDirectory(prefix="eve-server-load-") as folder:
        try:
            for side in sides:
                eve_py = _imported_from(side)
                process, url = await _start_server(side, Path(folder) / f"{side.name}.db")
                started.append((side, process, url))  # stopped below whatever happens next
                wire, api = await _wire(url, side)
                side = replace(side, eve_py=eve_py, wire=wire, api=api, parser=_parser(side))
                started[-1] = (side, process, url)
                print(_describe(side, process.pid), file=sys.stderr)
            for side, _, url in started:
                await _warm_up(url, side)
            results = [
                await _round(side, process, url, sessions, number)
                for number in range(1, rounds + 1)
                for side, process, url in started
            ]
            idle = {side.name: await _idle(url, side, idle_answers) for side, _, url in started if idle_answers}
            return [side for side, _, _ in started], results, idle
        finally:
            for _, process, _ in started:
                await _stop_server(process)


# --- output ------------------------------------------------------------------------------------


def _describe(side: Side, pid: int) -> str:
    dirty = " + uncommitted changes" if side.dirty else ""
    health = '{ok, status: "ok", agent}' if side.wire == "old" else '{ok, status: "ready", workflowId}'
    return (
        f"{side.name}: {side.ref} ({side.commit[:10]}{dirty}), pid {pid}, eve_py from {side.eve_py}, "
        f"{side.wire} wire on {side.api} (/health {health}), HTTP parsed by {side.parser}"
    )


def _parser(side: Side) -> str:
    """The HTTP parser uvicorn uses for the side (see `_server_env`)."""
    project = tomllib.loads((side.root / "pyproject.toml").read_text())["project"]
    extra = project.get("optional-dependencies", {}).get("server", [])
    return "httptools" if any(re.match(r"httptools\b", requirement) for requirement in extra) else "h11"


def _ratio(current: float, baseline: float) -> float:
    return round(current / baseline, 3) if baseline else float("nan")


def ratios(results: list[Result]) -> dict[str, dict[str, float]]:
    """current / baseline for each of `RATIOS`: per round (`"1"`, `"2"`, ...) and over all rounds (`"all"`)."""
    by_side: dict[str, list[Result]] = {}
    for result in results:
        by_side.setdefault(result.side, []).append(result)
    current, baseline = by_side.get("current", []), by_side.get("baseline", [])
    out: dict[str, dict[str, float]] = {}
    for _, field, _ in RATIOS:
        pairs = zip(current, baseline, strict=True)
        row = {str(c.round): _ratio(getattr(c, field), getattr(b, field)) for c, b in pairs}
        if field in ("requests_per_s", "rounds_per_s"):  # over all rounds: all requests (rounds) / all time
            count = "requests" if field == "requests_per_s" else "sessions"
            mine = sum(getattr(r, count) for r in current) / sum(r.total_s for r in current)
            theirs = sum(getattr(r, count) for r in baseline) / sum(r.total_s for r in baseline)
        else:  # the mean of the rounds' figures
            mine = statistics.fmean(getattr(r, field) for r in current)
            theirs = statistics.fmean(getattr(r, field) for r in baseline)
        row["all"] = _ratio(mine, theirs)
        out[field] = row
    return out


def _print_result(r: Result) -> None:
    print(f"{r.side} round {r.round}: {r.sessions} concurrent sessions, {r.requests} HTTP requests, {r.total_s:.2f} s")
    print(f"  rounds/s: {r.rounds_per_s:.2f}  (create, park, answer, complete: sessions / total time)")
    print(f"  requests/s: {r.requests_per_s:.1f}  (park phase {r.park_s:.2f} s, answer phase {r.answer_s:.2f} s)")
    print(
        f"  POST inputResponses latency: p50 {r.answer_post_p50_ms:.1f} ms, "
        f"p99 {r.answer_post_p99_ms:.1f} ms, max {r.answer_post_max_ms:.1f} ms"
    )
    print(f"  create + stream until parked: p50 {r.park_p50_ms:.1f} ms, p99 {r.park_p99_ms:.1f} ms")
    print(f"  answer + stream until completed: p50 {r.complete_p50_ms:.1f} ms, p99 {r.complete_p99_ms:.1f} ms")
    print(
        f"  server RSS: {r.server_rss_before_mib:.1f} MiB before, {r.server_rss_parked_mib:.1f} MiB with all "
        f"parked, {r.server_rss_after_mib:.1f} MiB after (peak {r.server_hwm_mib:.1f} MiB)"
    )
    print(
        f"  server CPU time: park phase {r.server_cpu_park_s:.2f} s, answer phase {r.server_cpu_answer_s:.2f} s "
        f"(load generator: {r.driver_cpu_s:.2f} s)"
    )
    print(f"  errors: {r.errors} (connection resets: {r.resets})")


def _print_ratios(table: dict[str, dict[str, float]], rounds: int) -> None:
    columns = [*(f"round {n}" for n in range(1, rounds + 1)), "all"]
    width = max(len(label) for label, _, _ in RATIOS) + 2
    print("current / baseline" + " " * (width - 18) + "".join(f"{c:>10}" for c in columns))
    for label, field, higher in RATIOS:
        row = table[field]
        cells = "".join(f"{row.get(key, float('nan')):>10.3f}" for key in [*map(str, range(1, rounds + 1)), "all"])
        print(f"{label:<{width}}{cells}   ({'higher' if higher else 'lower'} is better)")


def _print_summary(
    results: list[Result], idle: dict[str, list[float]], table: dict[str, dict[str, float]] | None
) -> None:
    """Issue 25's HTTP figures for each side: worst round's answer `POST` p50/p99, rounds/s, resets, idle p50."""
    for name in dict.fromkeys(r.side for r in results):
        mine = [r for r in results if r.side == name]
        rate = sum(r.sessions for r in mine) / sum(r.total_s for r in mine)
        ratio = f" ({table['rounds_per_s']['all']:.2f}x baseline)" if table is not None and name == "current" else ""
        cpu_ms = [(r.server_cpu_park_s + r.server_cpu_answer_s) * 1000 / r.sessions for r in mine]
        print(
            f"{name}: answer POST p50 {max(r.answer_post_p50_ms for r in mine):.1f} ms, "
            f"p99 {max(r.answer_post_p99_ms for r in mine):.1f} ms (worst of {len(mine)} rounds of "
            f"{mine[0].sessions}); rounds/s {rate:.2f}{ratio}; connection resets {sum(r.resets for r in mine)} "
            f"in {len(mine)} rounds; server CPU per round {' '.join(f'{ms:.1f}' for ms in cpu_ms)} ms"
        )
        if idle.get(name):
            ms = idle[name]
            print(
                f"{name}: one idle kept-alive client: answer POST p50 {_median(ms):.2f} ms, "
                f"p99 {_percentile(ms, 0.99):.2f} ms ({len(ms)} answers)"
            )


def main() -> int:
    """Parse arguments, run, print; exit 1 if any request failed."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--sessions", type=int, default=200, help="concurrent sessions (default 200)")
    parser.add_argument("--rounds", type=int, default=2, help="rounds of N sessions per side (default 2)")
    parser.add_argument(
        "--baseline", default=DEFAULT_BASELINE, metavar="REF", help=f"the commit to compare with ({DEFAULT_BASELINE})"
    )
    parser.add_argument("--no-baseline", action="store_true", help="measure the current code only")
    parser.add_argument(
        "--current", metavar="REF", help="measure this commit (in a temporary worktree) instead of the working tree"
    )
    parser.add_argument(
        "--idle", type=int, default=50, metavar="N", help="answers of one idle kept-alive client per side (default 50)"
    )
    parser.add_argument(
        "--pin",
        metavar="CPUS",
        help="run the servers on these CPUs (taskset -c list, e.g. 0) and the load generator on the others",
    )
    parser.add_argument(
        "--client",
        choices=["h11", "httpx"],
        default="h11",
        help="the frontends' HTTP client: h11 on a TCP stream (default; light) or httpx (1-2 ms of CPU a request)",
    )
    parser.add_argument(
        "--profile",
        type=Path,
        metavar="FILE",
        help="run the current server under cProfile (its loop's thread), statistics to FILE when it stops",
    )
    parser.add_argument(
        "--wire",
        choices=["v26", "v27"],
        default="v27",
        help="the wire both sides speak where the server offers it (default v27, eve 1.0's; v26 is eve 0.80.1's)",
    )
    parser.add_argument(
        "--compare-wires",
        action="store_true",
        help="two servers of the current code: eve 1.0's wire (current) against eve 0.80.1's (baseline)",
    )
    parser.add_argument("--json", action="store_true", help="print the results as JSON")
    parser.add_argument("--ai-sdk", action="store_true", help="POST /ai-sdk/chat against eve's wire (no baseline)")
    parser.add_argument("--ag-ui", action="store_true", help="POST /ag-ui against eve's wire (no baseline)")
    args = parser.parse_args()
    global CLIENT, PROFILE
    CLIENT = args.client
    PROFILE = args.profile.resolve() if args.profile is not None else None
    if args.pin is not None:
        pin(args.pin)
    if args.ai_sdk or args.ag_ui:  # see bench/_frontend_round.py
        import _frontend_round

        if args.ai_sdk:
            from _ai_sdk_round import AI_SDK as frontend
        else:
            from _ag_ui_round import AG_UI as frontend
        with ExitStack() as stack:
            side = stack.enter_context(worktree("current", args.current)) if args.current else _working_tree()
            results = anyio.run(_frontend_round.compare, frontend, side, args.sessions, args.rounds)
        return _frontend_round.report(frontend, results, args.rounds, args.json)

    sides: list[Side] = []
    with ExitStack() as stack:  # the worktrees go whatever happens
        try:
            current = stack.enter_context(worktree("current", args.current)) if args.current else _working_tree()
            current = replace(current, wire=args.wire)
            if args.compare_wires:
                sides.append(replace(current, name="baseline", wire="v26"))
                current = replace(current, wire="v27")
            elif not args.no_baseline:
                sides.append(replace(stack.enter_context(worktree("baseline", args.baseline)), wire=args.wire))
            sides.append(current)
        except subprocess.CalledProcessError as exc:
            print(f"{' '.join(exc.cmd)}: {exc.stderr.strip()}", file=sys.stderr)
            return 2
        sides, results, idle = anyio.run(run, sides, args.sessions, args.rounds, args.idle)
    table = None if args.no_baseline else ratios(results)
    failed = 1 if any(result.errors for result in results) else 0
    if args.json:
        document = {
            "sides": [asdict(side) for side in sides],
            "results": [asdict(r) for r in results],
            "ratios": table,
            "idle_answer_post_ms": idle,
        }
        print(json.dumps(document, indent=2, default=str))
        return failed
    for side in sides:
        print(_describe(side, 0).replace(", pid 0", ""))
    print()
    for result in sorted(results, key=lambda r: (r.side != "baseline", r.round)):
        _print_result(result)
    if table is not None:
        print()
        _print_ratios(table, args.rounds)
    print()
    _print_summary(results, idle, table)
    return failed


if __name__ == "__main__":
    raise SystemExit(main())
