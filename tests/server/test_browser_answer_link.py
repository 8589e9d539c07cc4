"""The answer page of a signed link, and who answered, in real headless Chromium (as test_browser_ux.py).

A person who follows a link sees the chat's own card for that one question, with no token asked,
answers it, and is told the outcome; a used, changed or expired link says so. The chat shows each
request's time left and who answered it. axe-core finds no serious problem on any of these views.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest
from playwright.async_api import Page, expect

from eve_py import load_agent
from eve_py.harness._links import link_secret
from eve_py.parking._links import LinkClaims, sign_link
from eve_py.protocol.requests import deadline_iso
from tests.conftest import HITL_APP
from tests.server.helpers import ALICE, Served, hitl_runtime, read_stream, serve
from tests.server.test_browser import browser_page
from tests.server.test_browser_ux import serious_violations, shoot

pytestmark = pytest.mark.anyio


async def linked(served: Served, message: str, kind: str) -> tuple[str, str, str]:
    """Park a session on `message` as ALICE; its id, the request of `kind`, and a link to that request."""
    async with served.client() as alice:
        created = await alice.post("/session", json={"message": message})
        session_id = created.json()["sessionId"]
        await read_stream(alice, session_id, created.json()["startIndex"])
        requests = (await alice.get(f"/session/{session_id}")).json()["inputRequests"]
        [request] = [r for r in requests if r["kind"] == kind]
        made = await alice.post(f"/session/{session_id}/links", json={"requestId": request["requestId"]})
    return session_id, request["requestId"], str(made.json()["url"])


async def test_a_link_shows_the_approval_card_answers_it_once_and_tells_the_outcome(tmp_path: Path) -> None:
    async with serve(hitl_runtime(load_agent(HITL_APP)), tokens=[ALICE]) as served:
        session_id, _, url = await linked(served, "run the guarded echo", "tool-approval")
        async with browser_page(tmp_path / "p") as page:
            await page.goto(url)
            card = page.locator("fieldset.request")
            await expect(card.locator("legend")).to_have_text("Approve tool call: guarded_echo")
            await expect(card.get_by_role("definition")).to_have_text("hello")
            await expect(page.get_by_label("This server needs an API token")).to_have_count(0)
            await expect(card.get_by_role("button", name="Approve")).to_be_focused()
            await shoot(page, "answer-link-approval")
            await card.get_by_role("button", name="Approve").click()
            await expect(card.locator(".staged")).to_have_text("✓ approved")
            await expect(page.get_by_role("status")).to_have_text(
                "Thank you: your answer was recorded. You can close this page."
            )
            await expect(card.get_by_role("button", name="Approve")).to_be_disabled()
            await shoot(page, "answer-link-answered")

            await page.reload()  # the link answers once
            await expect(page.get_by_role("alert")).to_have_text(
                "This question was already answered (or withdrawn): there is nothing left to do here."
            )
            await expect(page.locator("fieldset.request")).to_have_count(0)
            await shoot(page, "answer-link-used")

        # The owner's chat shows who answered it.
        async with browser_page(tmp_path / "chat") as chat:
            await sign_in(chat, served, session_id)
            approval = chat.locator('fieldset.request[data-display="confirmation"]')
            await expect(approval.locator(".staged")).to_have_text("✓ approved through an answer link")
            await expect(chat.locator(".msg.assistant").last).to_contain_text("guarded-echo-ok-T4Q9")


async def test_a_linked_picker_keeps_a_refused_answer_open_then_takes_a_good_one(tmp_path: Path) -> None:
    async with serve(hitl_runtime(load_agent(HITL_APP)), tokens=[ALICE]) as served:
        _, _, url = await linked(served, "help me pick a template", "question")
        async with browser_page(tmp_path / "p") as page:
            await page.goto(url)
            picker = page.locator("fieldset.request")
            await expect(picker.locator("legend")).to_have_text("Which template should the page use?")
            await expect(picker.locator(".kind")).to_have_text("question · template picker")
            await picker.get_by_role("button", name="Submit").click()  # nothing picked: said on the card
            await expect(picker.get_by_role("alert")).to_have_text("Pick at least one option first (or press Skip).")
            await picker.get_by_role("checkbox", name="Green").check()
            await shoot(page, "answer-link-picker")
            await picker.get_by_role("button", name="Submit").click()
            await expect(picker.locator(".staged")).to_have_text("✓ answered: Green")
            await expect(picker.get_by_role("checkbox", name="Green")).to_be_disabled()


async def test_a_changed_or_expired_link_says_so(tmp_path: Path) -> None:
    async with serve(hitl_runtime(load_agent(HITL_APP)), tokens=[ALICE]) as served:
        session_id, request_id, url = await linked(served, "run the guarded echo", "tool-approval")
        secret = await link_secret(served.runtime.store)
        expired = sign_link(secret, LinkClaims(session_id, request_id, "x", int(time.time()) - 1))
        async with browser_page(tmp_path / "p") as page:
            await page.goto(url[:-3])
            await expect(page.get_by_role("alert")).to_have_text(
                "This link is not valid: it may have been cut short when it was copied. Ask for a new one."
            )
            assert await serious_violations(page) == []
            await page.goto(f"{served.api}/answer/{expired}")
            await expect(page.get_by_role("alert")).to_have_text(
                "This link has expired. Ask for a new one if the question is still open."
            )
            await shoot(page, "answer-link-expired")


async def test_the_chat_shows_time_left_who_answered_and_an_expired_request(tmp_path: Path) -> None:
    async with serve(hitl_runtime(load_agent(HITL_APP)), tokens=()) as served, browser_page(tmp_path / "p") as page:
        await page.goto(served.base + "/")
        await expect(page.locator("#agent-name")).to_have_text("agent-tools-hitl")
        soon = deadline_iso(time.time() + 2 * 3600 + 5 * 60 + 30)
        await page.evaluate("handle", requested(["r1", "r2", "r3"], {"r1": soon, "r2": soon}))
        cards = page.locator("fieldset.request")
        await expect(cards.nth(0).locator(".deadline .left")).to_have_text("2 h 5 min left to answer")
        await expect(cards.nth(0).locator(".deadline time")).to_have_attribute("datetime", soon)
        await expect(cards.nth(2).locator(".deadline")).to_have_count(0)  # no deadline, none shown
        await shoot(page, "chat-time-left")

        resolved = {
            "type": "input.resolved",
            "data": {
                "sequence": 0,
                "turnId": "turn_1",
                "stepIndex": 0,
                "resolutions": [
                    {"kind": "tool-approval", "outcome": "approved", "requestId": "r1", "answeredBy": "alice"},
                    {"kind": "tool-approval", "outcome": "expired", "requestId": "r2"},
                    {"kind": "tool-approval", "outcome": "denied", "requestId": "r3", "answeredBy": "local"},
                ],
            },
        }
        await page.evaluate("handle", resolved)
        await expect(cards.nth(0).locator(".staged")).to_have_text("✓ approved by alice")
        await expect(cards.nth(1).locator(".staged")).to_have_text("⊘ expired: not answered in time")
        await expect(cards.nth(2).locator(".staged")).to_have_text("✗ denied")
        await expect(cards.nth(0).locator(".deadline")).to_be_hidden()  # closed: no more countdown
        await shoot(page, "chat-answered-by")


def requested(ids: list[str], deadlines: dict[str, str]) -> dict[str, Any]:
    """An `input.requested` event of approvals `ids`, those in `deadlines` with their `expiresAt` extension."""
    requests = [
        {
            "requestId": request_id,
            "kind": "tool-approval",
            "action": {"kind": "tool-call", "callId": request_id, "toolName": "publish", "input": {"version": "1.4"}},
            "prompt": f"Approve tool call: publish ({request_id})",
            "display": "confirmation",
            "options": [{"id": "approve", "label": "Approve"}, {"id": "deny", "label": "Deny"}],
        }
        for request_id in ids
    ]
    extensions = {
        request_id: {"kind": "tool-approval", "display": "confirmation", "expiresAt": at}
        for request_id, at in deadlines.items()
    }
    data = {"sequence": 0, "turnId": "turn_1", "stepIndex": 0, "requests": requests, "extensions": extensions}
    return {"type": "input.requested", "data": data}


async def sign_in(page: Page, served: Served, session_id: str) -> None:
    """Open the owner's chat on the session, giving ALICE's token when it asks."""
    await page.goto(f"{served.base}/#session={session_id}")
    await page.get_by_label("This server needs an API token").fill(ALICE)
    await page.get_by_role("button", name="Use token").click()
    await expect(page.locator(".batch")).to_have_count(1)


async def test_an_open_chat_shows_an_answer_given_elsewhere_without_a_reload(tmp_path: Path) -> None:
    async with serve(hitl_runtime(load_agent(HITL_APP)), tokens=[ALICE]) as served:
        session_id, request_id, _ = await linked(served, "help me pick a template", "question")
        async with browser_page(tmp_path / "chat") as chat:
            await sign_in(chat, served, session_id)
            picker = chat.locator("fieldset.request")
            await expect(picker.locator("legend")).to_have_text("Which template should the page use?")
            # Another tab (here: an API client with the same token) answers while this page waits.
            async with served.client() as elsewhere:
                answer = {"inputResponses": [{"requestId": request_id, "value": {"pickedIds": ["tpl_green"]}}]}
                assert (await elsewhere.post(f"/session/{session_id}", json=answer)).status_code == 202
            await expect(picker.locator(".staged")).to_contain_text("✓ answered")
            await expect(chat.locator(".msg.assistant").last).to_contain_text("Recorded your pick: tpl_green.")
