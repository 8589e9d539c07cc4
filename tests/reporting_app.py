"""The HITL fixture app with a guarded echo that reports progress and a log entry while it runs.

The echo (it needs approval) reports, then waits until the client driving it writes the file
`gate` in the app's folder, which the client does once it has seen the reports: reports that
came only with the call's result would leave the echo waiting until its bound (30 s) fails it.
"""

from __future__ import annotations

import shutil
from pathlib import Path

from tests.conftest import HITL_APP

__all__ = ("reporting_app",)

REPORTING_ECHO = """
from pathlib import Path

import anyio

from eve_py import ToolContext, define_tool

GATE = Path(__file__).resolve().parents[2] / "gate"


async def guarded_echo(text: str, ctx: ToolContext) -> dict[str, str]:
    await ctx.report_progress(1, 2, "echoing")
    await ctx.log("info", {"chars": len(text)}, logger="echo")
    with anyio.fail_after(30):
        while not GATE.exists():  # written by the client once it has seen the reports above
            await anyio.sleep(0.02)
    await ctx.report_progress(2, 2, "done")
    return {"token": "guarded-echo-ok-T4Q9", "echo": text}


tool = define_tool(description="Echo a text back with a guard token.", execute=guarded_echo, needs_approval=True)
"""


def reporting_app(folder: Path) -> Path:
    """A copy of the HITL app in `folder` whose guarded echo reports live; its gate file is `<app>/gate`."""
    app = folder / HITL_APP.name
    shutil.copytree(HITL_APP, app, ignore=shutil.ignore_patterns("__pycache__"))
    (app / "agent" / "tools" / "guarded_echo.py").write_text(REPORTING_ECHO, encoding="utf-8")
    return app
