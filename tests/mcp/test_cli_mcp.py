"""`eve-py mcp`'s refusals: it never serves its unauthenticated endpoint beyond loopback."""

from __future__ import annotations

from pathlib import Path

import pytest

from eve_py.cli.main import main


def test_a_non_loopback_host_is_refused(refund_app: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["mcp", str(refund_app), "--http", "--host", "0.0.0.0"]) == 2
    assert "refusing to serve MCP on 0.0.0.0" in capsys.readouterr().err


def test_an_app_with_errors_is_reported(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["mcp", str(tmp_path)]) in (1, 2)
    assert capsys.readouterr().err.strip()
