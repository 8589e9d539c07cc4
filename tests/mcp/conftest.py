"""Fixtures for the MCP tests: the refund-desk port, and the SDK's own story client.

The SDK's story client (`examples/stories/refund_desk/client.py`) is not part of this
repository: it is taken at run time from the installed SDK version's source distribution on
the package index (`pip download --no-binary :all: mcp==VERSION`), unpacked once under the
virtual environment (`.venv/mcp-sdk-examples/`), and imported unchanged.
"""

from __future__ import annotations

import subprocess
import sys
import tarfile
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from importlib.metadata import version
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
REFUND_MCP_APP = REPO / "fixtures" / "refund-desk-mcp"


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def _unpack_examples(target: Path) -> str | None:
    """Download the SDK's sdist and unpack its `examples/stories`; the reason on failure."""
    sdk_version = version("mcp")
    download = target.parent / "sdist"
    command = [sys.executable, "-m", "pip", "download", "-q", "--no-binary", ":all:", "--no-deps"]
    command += ["-d", str(download), f"mcp=={sdk_version}"]
    done = subprocess.run(command, capture_output=True, text=True, timeout=120)
    archives = sorted(download.glob(f"mcp-{sdk_version}.tar.gz"))
    if done.returncode != 0 or not archives:
        return f"cannot download the mcp {sdk_version} sdist: {done.stderr.strip()[-400:]}"
    prefix = f"mcp-{sdk_version}/examples/"
    with tarfile.open(archives[0]) as archive:
        members = [m for m in archive.getmembers() if m.name.startswith(prefix + "stories/")]
        if not members:
            return f"the mcp {sdk_version} sdist has no examples/stories"
        for member in members:
            member.name = member.name.removeprefix(prefix)
        archive.extractall(target, members=members, filter="data")
    return None


@pytest.fixture(scope="session")
def sdk_examples() -> Path:
    """The folder holding the SDK's `stories` package (put it on `sys.path` to import a story)."""
    target = Path(sys.prefix) / "mcp-sdk-examples" / version("mcp") / "examples"
    if not (target / "stories" / "refund_desk" / "client.py").is_file():
        reason = _unpack_examples(target)
        if reason is not None:
            pytest.skip(reason)
    return target


@pytest.fixture
def refund_app() -> Path:
    return REFUND_MCP_APP


def _read_address(process: subprocess.Popen[str], found: threading.Event, lines: list[str]) -> None:
    """Read the server's stderr to its end (so it never blocks on a full pipe), noting its address."""
    assert process.stderr is not None
    for line in process.stderr:
        lines.append(line)
        if "listening on " in line:
            found.set()
    found.set()  # the server exited: the waiter sees no address


@contextmanager
def serving_http(app: Path, *args: str) -> Iterator[str]:
    """`eve-py mcp APP --http --port 0 ARGS...` running in a process of its own; its URL."""
    command = [sys.executable, "-m", "eve_py", "mcp", str(app), "--http", "--port", "0", *args]
    with subprocess.Popen(command, stderr=subprocess.PIPE, stdout=subprocess.DEVNULL, text=True) as process:
        found, lines = threading.Event(), list[str]()
        reader = threading.Thread(target=_read_address, args=(process, found, lines), daemon=True)
        reader.start()
        try:
            assert found.wait(60), "eve-py mcp --http did not start listening within 60 s"
            address = [line for line in lines if "listening on " in line]
            assert address, f"eve-py mcp --http exited: {''.join(lines)}"
            yield address[0].split("listening on ", 1)[1].split()[0]
        finally:
            process.terminate()
            process.wait(30)
            reader.join(30)


@pytest.fixture(scope="session")
def desk_url() -> Iterator[str]:
    """`eve-py mcp fixtures/refund-desk-mcp --http --port 0`, running for the whole session; its URL."""
    with serving_http(REFUND_MCP_APP) as url:
        yield url
