"""The browser chat shows a running tool's progress and log lines while the call runs, each once.

Headless Chromium through Playwright, as `test_browser_ux.py`: the tool reports, then waits
until the page shows the report (a report that came only with the result would keep it waiting);
axe-core finds no serious problem in the view; a page opened later replays the stored copies once.
"""

from __future__ import annotations

from pathlib import Path

import anyio
import pytest
from playwright.async_api import expect

from tests.server.helpers import serve
from tests.server.test_browser import browser_page, send
from tests.server.test_browser_ux import shoot
from tests.server.test_live_reports import Gated

pytestmark = pytest.mark.anyio


async def test_the_page_shows_progress_and_log_lines_while_the_call_runs_then_its_result(tmp_path: Path) -> None:
    gated = Gated()
    async with serve(gated.runtime(), tokens=()) as served, browser_page(tmp_path / "profile") as page:
        await page.goto(served.base + "/")
        async with page.expect_response(lambda response: "/stream?" in response.url and "live=1" in response.url):
            await send(page, "index the docs")
        gated.ready.set()  # the page follows the session live: the tool may report

        card = page.get_by_role("group", name="index: progress and log")
        bar = card.get_by_role("progressbar", name="index progress")
        await expect(bar).to_have_attribute("value", "1")
        await expect(bar).to_have_attribute("max", "3")
        await expect(card).to_contain_text("1 of 3: listing")
        log = card.get_by_role("list", name="index log")
        await expect(log.get_by_role("listitem")).to_have_text(['[info] indexer: {"folder":"docs"}'])
        await expect(card).to_contain_text("index is running")
        await expect(page.locator(".tool")).to_have_count(0)  # no result yet: the call is still running
        await shoot(page, "progress-running")

        gated.gate.set()
        await expect(page.locator(".tool").filter(has_text="index returned")).to_be_visible()
        await expect(card).to_contain_text("3 of 3: done")
        await expect(card).to_contain_text("index ran")
        await expect(card).to_have_class("activity done")
        await expect(log.get_by_role("listitem")).to_have_count(1)  # its stored copy was not shown again
        await expect(page.locator(".activity")).to_have_count(1)
        await shoot(page, "progress-done")
        session_url = page.url

        # A page opened later replays the stored reports: the same card, each line once.
        await page.goto("about:blank")
        await page.goto(session_url)
        with anyio.fail_after(10):
            await expect(page.locator(".tool").filter(has_text="index returned")).to_be_visible()
        await expect(page.locator(".activity")).to_have_count(1)
        await expect(page.get_by_role("group", name="index: progress and log")).to_contain_text("3 of 3: done")
        await expect(page.locator(".activity-log li")).to_have_count(1)
