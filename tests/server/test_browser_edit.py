"""Edit on approve in the browser chat (headless Chromium through Playwright, as test_browser.py).

An approval of an editable tool (`define_tool(..., editable=True)`: its request's extension carries
`editSchema`) gets an Edit button; the form it opens is generated from that schema, prefilled with
the call's input, and "Approve with changes" sends `{optionId: "approve", editedInput}`. A refused
edit (by the browser's own checks, or by the server with 422) is shown on the card and the form
stays open.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import pytest
from playwright.async_api import Page, expect
from pydantic import Field

from eve_py import Runtime, define_tool, load_agent
from eve_py._json import JsonValue
from eve_py.agent import Agent
from eve_py.testing import MockModel, MockModelRequest, MockResponse, MockToolCall
from tests.conftest import HITL_APP
from tests.server.helpers import hitl_runtime, serve
from tests.server.test_browser import browser_page, send

pytestmark = pytest.mark.anyio

EDITED_REPLY = "Sent 'Weekly news' to news@example.org (you changed it before approving)."


async def open_page(page: Page, base: str) -> None:
    await page.goto(base + "/")
    await expect(page.locator("#agent-name")).not_to_be_empty()


async def test_edit_the_newsletter_address_then_approve_with_changes(tmp_path: Path) -> None:
    async with serve(hitl_runtime(load_agent(HITL_APP)), tokens=()) as served, browser_page(tmp_path / "p") as page:
        await open_page(page, served.base)
        await send(page, "send the newsletter")
        card = page.locator('fieldset.request[data-display="confirmation"]')
        await expect(card.locator("legend")).to_have_text("Approve tool call: send_newsletter")
        await expect(card.get_by_role("button")).to_have_text(["Approve", "Edit", "Deny"])
        await expect(card.get_by_role("button", name="Approve", exact=True)).to_be_focused()

        # Edit: a form generated from the tool's input schema, prefilled with the call's input.
        await card.get_by_role("button", name="Edit").click()
        to = card.get_by_label("To (required)")
        subject = card.get_by_label("Subject (required)")
        await expect(to).to_be_focused()
        await expect(to).to_have_attribute("type", "email")
        await expect(to).to_have_value("team@example.com")
        await expect(to).to_have_accessible_description("Who gets it.")
        await expect(subject).to_have_value("Weekly news")
        await expect(subject).to_have_attribute("minlength", "1")
        await expect(card.get_by_role("form", name="Edit send_newsletter's input")).to_be_visible()
        await expect(card.get_by_role("button", name="Approve", exact=True)).to_be_hidden()
        await expect(card.get_by_role("definition")).to_have_count(0)  # the input rows give way to the form

        # Cancel edit (Escape too) goes back to the plain card, dropping the change.
        await to.fill("someone@example.net")
        await card.get_by_role("button", name="Cancel edit").click()
        await expect(card.get_by_role("button", name="Approve", exact=True)).to_be_visible()
        await expect(card.get_by_role("definition").first).to_have_text("team@example.com")
        await expect(card.get_by_role("button", name="Edit")).to_be_focused()
        await page.keyboard.press("Enter")  # the keyboard opens it again
        await expect(to).to_be_focused()
        await expect(to).to_have_value("team@example.com")
        await page.keyboard.press("Escape")
        await expect(card.get_by_role("button", name="Edit")).to_be_focused()
        await expect(to).to_have_count(0)

        await card.get_by_role("button", name="Edit").click()
        await to.fill("news@example.org")
        await card.get_by_role("button", name="Approve with changes").click()
        await expect(page.locator(".msg.assistant").last).to_have_text(EDITED_REPLY)
        await expect(card.locator(".staged")).to_have_text("✓ approved with changes: To: news@example.org")
        await expect(card).to_have_attribute("data-outcome", "approved")
        await expect(to).to_be_disabled()
        await expect(page.locator("#status")).to_have_attribute("data-status", "completed")

        # The replay of a reload says the same.
        await page.reload()
        await expect(page.locator(".msg.assistant").last).to_have_text(EDITED_REPLY)
        await expect(card.locator(".staged")).to_have_text("✓ approved with changes: To: news@example.org")

        # Approved as is: the card says so as before.
        await send(page, "send the newsletter")
        again = page.locator(".batch").nth(1).locator("fieldset.request")
        await expect(again.locator("legend")).to_have_text("Approve tool call: send_newsletter")
        await again.get_by_role("button", name="Approve", exact=True).click()
        await expect(page.locator(".msg.assistant").last).to_have_text("Sent 'Weekly news' to team@example.com.")
        await expect(again.locator(".staged")).to_have_text("✓ approved")


async def test_a_bad_address_is_refused_on_the_card_and_the_form_stays_open(tmp_path: Path) -> None:
    async with serve(hitl_runtime(load_agent(HITL_APP)), tokens=()) as served, browser_page(tmp_path / "p") as page:
        await open_page(page, served.base)
        await send(page, "send the newsletter")
        card = page.locator('fieldset.request[data-display="confirmation"]')
        await card.get_by_role("button", name="Edit").click()
        to = card.get_by_label("To (required)")
        await to.fill("nope")
        await to.press("Enter")  # Enter in a field is "Approve with changes"
        await expect(card.get_by_role("alert")).to_contain_text("To: ")  # the browser's own check, nothing sent
        await expect(to).to_have_attribute("aria-invalid", "true")
        await expect(to).to_be_focused()
        await expect(card.get_by_role("button", name="Approve with changes")).to_be_visible()
        await expect(page.locator("#status")).to_have_attribute("data-status", "waiting")

        # A change not approved yet is never dropped by a new message.
        await send(page, "help me pick a template")
        await expect(card.get_by_role("alert")).to_have_text(
            "Press “Approve with changes” to send your changes (or Cancel edit)."
        )
        await expect(page.locator(".msg.user")).to_have_count(1)

        await to.fill("news@example.org")
        await expect(card.get_by_role("alert")).to_be_hidden()
        await card.get_by_role("button", name="Approve with changes").click()
        await expect(page.locator(".msg.assistant").last).to_have_text(EDITED_REPLY)
        await expect(card.locator(".staged")).to_have_text("✓ approved with changes: To: news@example.org")


def _block(address: Annotated[str, Field(description="An IPv4 address.", json_schema_extra={"format": "ipv4"})]) -> str:
    """Block an address."""
    return f"blocked {address}"


def _tag(address: str, tags: list[str]) -> str:
    """Tag an address."""
    return f"tagged {address}: {', '.join(tags)}"


def _firewall_model(request: MockModelRequest) -> str | MockResponse:
    done = request.tool_results_since_last_user_message
    if done:
        return " | ".join(f"{result.name}: {json.dumps(result.output, sort_keys=True)}" for result in done)
    if "tag" in (request.last_user_message or ""):
        return MockResponse(tool_calls=[MockToolCall("tag_address", {"address": "10.0.0.1", "tags": ["lab"]})])
    if "ask" in (request.last_user_message or ""):
        options: list[JsonValue] = [{"id": "yes", "label": "Yes"}, {"id": "no", "label": "No"}]
        return MockResponse(
            tool_calls=[
                MockToolCall("block_address", {"address": "10.0.0.1"}),
                MockToolCall("ask_question", {"prompt": "Log it?", "options": options}),
            ]
        )
    return MockResponse(tool_calls=[MockToolCall("block_address", {"address": "10.0.0.1"})])


def firewall_runtime() -> Runtime:
    """An editable tool whose input has a format the browser does not check (`ipv4`): the server does."""
    block_address = define_tool(
        description="Block an IPv4 address.", execute=_block, needs_approval=True, editable=True
    )
    tag_address = define_tool(description="Tag an address.", execute=_tag, needs_approval=True, editable=True)
    tools = {"block_address": block_address, "tag_address": tag_address}
    return Runtime(Agent.from_definitions(tools, name="firewall"), model=MockModel(_firewall_model))


async def test_the_servers_refusal_is_shown_on_the_card_and_the_form_stays_open(tmp_path: Path) -> None:
    async with serve(firewall_runtime(), tokens=()) as served, browser_page(tmp_path / "p") as page:
        await open_page(page, served.base)
        await send(page, "block it")
        card = page.locator('fieldset.request[data-display="confirmation"]')
        await card.get_by_role("button", name="Edit").click()
        address = card.get_by_label("Address (required)")
        await expect(address).to_have_value("10.0.0.1")
        await address.fill("300.1.2.3")
        await card.get_by_role("button", name="Approve with changes").click()
        alert = card.get_by_role("alert")
        await expect(alert).to_have_text(
            "Not sent: Answer to request 'mock-call-0-0' rejected: editedInput fails the tool's input schema at "
            "address: '300.1.2.3' is not a valid ipv4 (format \"ipv4\")"
        )
        await expect(address).to_have_attribute("aria-invalid", "true")
        await expect(address).to_be_focused()
        await expect(address).to_have_value("300.1.2.3")
        await expect(card.get_by_role("button", name="Approve with changes")).to_be_enabled()
        await expect(page.locator("#status")).to_have_attribute("data-status", "waiting")

        await address.fill("10.0.0.7")
        await expect(alert).to_be_hidden()
        await card.get_by_role("button", name="Approve with changes").click()
        await expect(page.locator(".msg.assistant").last).to_contain_text("blocked 10.0.0.7")
        await expect(card.locator(".staged")).to_have_text("✓ approved with changes: Address: 10.0.0.7")


async def test_in_a_batch_approve_with_changes_marks_the_card_and_send_answers_sends_the_form(tmp_path: Path) -> None:
    async with serve(firewall_runtime(), tokens=()) as served, browser_page(tmp_path / "p") as page:
        await open_page(page, served.base)
        await send(page, "block it and ask")
        batch = page.locator(".batch").last
        card = batch.locator('fieldset.request[data-display="confirmation"]')
        await card.get_by_role("button", name="Edit").click()
        address = card.get_by_label("Address (required)")
        await address.fill("10.0.0.8")
        approve = card.get_by_role("button", name="Approve with changes")
        await approve.click()
        await expect(approve).to_have_attribute("aria-pressed", "true")
        await expect(card.locator(".staged")).to_have_text("✓ ready to send")
        await address.fill("10.0.0.9")  # sent as the form shows it when Send answers is pressed
        await batch.get_by_role("button", name="No").click()
        await batch.get_by_role("button", name="Send answers").click()
        reply = page.locator(".msg.assistant").last
        await expect(reply).to_contain_text('"output": "blocked 10.0.0.9", "ranWith": {"address": "10.0.0.9"}')
        await expect(reply).to_contain_text('"optionId": "no"')
        await expect(card.locator(".staged")).to_have_text("✓ approved with changes: Address: 10.0.0.9")


async def test_an_input_the_form_cannot_show_is_edited_as_json(tmp_path: Path) -> None:
    async with serve(firewall_runtime(), tokens=()) as served, browser_page(tmp_path / "p") as page:
        await open_page(page, served.base)
        await send(page, "tag it")
        card = page.locator('fieldset.request[data-display="confirmation"]')
        await card.get_by_role("button", name="Edit").click()
        box = card.get_by_role("textbox", name="Input as JSON")
        await expect(box).to_be_focused()
        assert json.loads(await box.input_value()) == {"address": "10.0.0.1", "tags": ["lab"]}
        await box.fill('{"address": "10.0.0.1", "tags": ["lab", "blocked"')
        await card.get_by_role("button", name="Approve with changes").click()
        await expect(card.get_by_role("alert")).to_contain_text("Not JSON:")
        await expect(box).to_be_focused()
        await box.fill('{"address": "10.0.0.1", "tags": ["lab", "blocked"]}')
        await card.get_by_role("button", name="Approve with changes").click()
        await expect(page.locator(".msg.assistant").last).to_contain_text("tagged 10.0.0.1: lab, blocked")
        await expect(card.locator(".staged")).to_have_text("✓ approved with changes: Tags: lab, blocked")


async def test_an_approval_that_is_not_editable_has_no_edit_button(tmp_path: Path) -> None:
    async with serve(hitl_runtime(load_agent(HITL_APP)), tokens=()) as served, browser_page(tmp_path / "p") as page:
        await open_page(page, served.base)
        await send(page, "run the guarded echo")
        card = page.locator('fieldset.request[data-display="confirmation"]')
        await expect(card.get_by_role("button", name="Approve", exact=True)).to_be_focused()
        await expect(card.get_by_role("button")).to_have_text(["Approve", "Deny"])
        await expect(card.get_by_role("button", name="Edit")).to_have_count(0)
        await expect(card.locator(".edit")).to_have_count(0)
        await card.get_by_role("button", name="Approve", exact=True).click()
        await expect(card.locator(".staged")).to_have_text("✓ approved")
