"""What a person sees in the browser chat (headless Chromium through Playwright, as test_browser.py).

A visible choice is never dropped, invalid answers are marked where they are, inputs match the
answer's schema (a date input for `format: date`), the keyboard alone answers every request kind,
axe-core finds no serious accessibility problem, and every view is written as a PNG to
`.eve/screenshots/` for a person to look at.
"""

from __future__ import annotations

import datetime as dt
import json
import re
from importlib.resources import files
from pathlib import Path
from typing import Any, Literal

import httpx
import pytest
from playwright.async_api import ConsoleMessage, Locator, Page, expect
from pydantic import BaseModel, Field

from eve_py import Runtime, define_client_tool, define_tool, load_agent
from eve_py._json import JsonValue
from eve_py.agent import Agent
from eve_py.testing import MockModel, MockModelRequest, MockResponse, MockToolCall
from tests.conftest import HITL_APP, REPO
from tests.server.helpers import ALICE, hitl_runtime, serve
from tests.server.test_browser import browser_page, send

pytestmark = pytest.mark.anyio

SCREENSHOTS = REPO / ".eve" / "screenshots"
"""Where the views are written (git-ignored); look at them after a run."""

AXE_SCRIPT = files("axe_playwright_python").joinpath("axe.min.js").read_text(encoding="utf-8")
"""axe-core, as the axe-playwright-python wheel bundles it."""


class Stay(BaseModel):
    """A booking form: a date (`format: date`), a bounded integer, an enum and a boolean."""

    arrival: dt.date = Field(title="Arrival date")
    nights: int = Field(ge=1, le=14, title="Nights")
    room: Literal["single", "double", "suite"] = Field(title="Room")
    breakfast: bool = Field(default=False, title="Breakfast")


def _booking_model(request: MockModelRequest) -> str | MockResponse:
    text = request.last_user_message or ""
    done = request.tool_results_since_last_user_message
    if done:
        return " | ".join(f"{result.name}: {json.dumps(result.output, sort_keys=True)}" for result in done)
    if "colour" in text:
        options: list[JsonValue] = [{"id": "red", "label": "Red"}, {"id": "teal", "label": "Teal"}]
        return MockResponse(tool_calls=[MockToolCall("ask_question", {"prompt": "Which colour?", "options": options})])
    if "name" in text:
        return MockResponse(tool_calls=[MockToolCall("ask_question", {"prompt": "What is your name?"})])
    if "form" in text:
        return MockResponse(tool_calls=[MockToolCall("plan_stay", {"prompt": "When do you arrive?"})])
    return MockResponse(
        tool_calls=[
            MockToolCall("plan_stay", {"prompt": "When do you arrive?"}),
            MockToolCall("book", {"room": "suite"}),
        ]
    )


def _book(room: str) -> dict[str, str]:
    return {"booked": room}


def booking_runtime() -> Runtime:
    """An app with a typed date form (a client tool) and an approval-gated booking, asked in one batch."""
    plan_stay = define_client_tool(
        description="Ask the person for the stay's details.",
        input_schema={"type": "object", "properties": {"prompt": {"type": "string"}}, "required": ["prompt"]},
        output_schema=Stay,
    )
    book = define_tool(description="Book a room.", execute=_book, needs_approval=True)
    agent = Agent.from_definitions({"plan_stay": plan_stay, "book": book}, name="stays")
    return Runtime(agent, model=MockModel(_booking_model))


async def serious_violations(page: Page) -> list[str]:
    """axe-core's serious and critical violations on the page as it is now."""
    await page.evaluate(AXE_SCRIPT)
    results: dict[str, Any] = await page.evaluate("axe.run(document, {resultTypes: ['violations']})")
    return [
        f"{violation['id']} ({violation['impact']}): {[node['target'] for node in violation['nodes']]}"
        for violation in results["violations"]
        if violation["impact"] in ("serious", "critical")
    ]


async def shoot(page: Page, name: str) -> Path:
    """Write the page as `.eve/screenshots/NAME.png` and check it has no serious accessibility violation."""
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    path = SCREENSHOTS / f"{name}.png"
    await page.screenshot(path=str(path), full_page=True)
    assert path.stat().st_size > 1000
    assert await serious_violations(page) == [], name
    return path


async def tab_to(page: Page, target: Locator, most: int = 12) -> None:
    """Press Tab until `target` has the focus (as a keyboard user would); fails after `most` presses."""
    for _ in range(most):
        if await target.evaluate("node => node === document.activeElement"):
            return
        await page.keyboard.press("Tab")
    await expect(target).to_be_focused()


async def test_a_ticked_choice_is_sent_by_send_answers_without_its_own_submit(tmp_path: Path) -> None:
    async with serve(hitl_runtime(load_agent(HITL_APP)), tokens=()) as served, browser_page(tmp_path / "p") as page:
        await page.goto(served.base + "/")
        await send(page, "review my page")
        batch = page.locator(".batch").last
        colour = batch.locator('fieldset.request[data-display="select"]')
        approval = batch.locator('fieldset.request[data-display="confirmation"]')
        await colour.get_by_role("checkbox", name="Blue").check()  # ticked, its own Submit never pressed
        await approval.get_by_role("button", name="Approve").click()
        await expect(approval.get_by_role("button", name="Approve")).to_have_attribute("aria-pressed", "true")
        await batch.get_by_role("button", name="Send answers").click()
        await expect(page.locator(".msg.assistant").last).to_have_text(
            "The guarded echo ran and returned the token guarded-echo-ok-T4Q9. Colour: blue."
        )
        await expect(colour.locator(".staged")).to_have_text("✓ answered: Blue")
        await expect(approval.locator(".staged")).to_have_text("✓ approved")


async def test_a_message_never_withdraws_a_question_showing_an_unsent_answer(tmp_path: Path) -> None:
    async with serve(hitl_runtime(load_agent(HITL_APP)), tokens=()) as served, browser_page(tmp_path / "p") as page:
        await page.goto(served.base + "/")
        await send(page, "review my page")
        batch = page.locator(".batch").nth(0)
        colour = batch.locator('fieldset.request[data-display="select"]')
        await colour.get_by_role("checkbox", name="Blue").check()
        await send(page, "help me pick a template")  # Blue is ticked and not sent: refused, saying why
        await expect(page.locator("#status")).to_have_text(
            "Your answer above is not sent yet: send it (or clear it, or press Skip) before a new message."
        )
        await expect(colour.get_by_role("checkbox", name="Blue")).to_be_focused()
        await expect(page.get_by_role("textbox", name="Message")).to_have_value("help me pick a template")
        await expect(page.locator(".msg.user")).to_have_count(1)
        await expect(batch).not_to_have_class(re.compile("closed"))

        await colour.get_by_role("checkbox", name="Blue").uncheck()  # nothing shown: the message withdraws it
        await page.get_by_role("button", name="Send", exact=True).click()
        await expect(batch.locator(".answered")).to_have_text("Skipped: a new message was sent instead.")
        await expect(page.locator(".batch")).to_have_count(2)  # the new turn's picker, once its events are read
        await expect(page.locator(".batch").last.locator("legend")).to_have_text("Which template should the page use?")


async def test_an_empty_picker_says_why_it_is_not_sent(tmp_path: Path) -> None:
    async with serve(hitl_runtime(load_agent(HITL_APP)), tokens=()) as served, browser_page(tmp_path / "p") as page:
        await page.goto(served.base + "/")
        await send(page, "help me pick a template")
        picker = page.locator("fieldset.request").last
        await picker.get_by_role("button", name="Submit").click()
        await expect(picker.get_by_role("alert")).to_have_text("Pick at least one option first (or press Skip).")
        await expect(picker.get_by_role("alert")).to_be_visible()
        await expect(picker.get_by_role("checkbox", name="Blue")).to_have_attribute("aria-invalid", "true")
        await expect(picker.get_by_role("checkbox", name="Blue")).to_be_focused()
        await expect(page.locator("#status")).to_have_attribute("data-status", "waiting")  # nothing was sent
        await picker.get_by_role("checkbox", name="Green").check()
        await expect(picker.get_by_role("alert")).to_be_hidden()
        await picker.get_by_role("button", name="Submit").click()
        await expect(page.locator(".msg.assistant").last).to_have_text("Recorded your pick: tpl_green.")


async def test_a_date_form_in_a_batch_uses_matching_inputs_and_refuses_an_invalid_field(tmp_path: Path) -> None:
    async with serve(booking_runtime(), tokens=()) as served, browser_page(tmp_path / "p") as page:
        await page.goto(served.base + "/")
        await send(page, "book me a stay")
        batch = page.locator(".batch").last
        form = batch.locator('fieldset.request[data-display="form"]')
        await expect(form.get_by_label("Arrival date")).to_have_attribute("type", "date")
        await expect(form.get_by_label("Nights")).to_have_attribute("type", "number")
        await expect(form.get_by_label("Room")).to_have_js_property("tagName", "SELECT")
        await expect(form.get_by_label("Breakfast")).to_have_attribute("type", "checkbox")

        await form.get_by_label("Arrival date").fill("2025-05-01")
        await form.get_by_label("Nights").fill("0")  # below the schema's minimum
        await form.get_by_label("Room").select_option(label="suite")
        await (
            batch.locator('fieldset.request[data-display="confirmation"]').get_by_role("button", name="Approve").click()
        )
        await batch.get_by_role("button", name="Send answers").click()
        await expect(batch.locator(".error-text").last).to_contain_text("Not sent:")
        await expect(form.get_by_role("alert")).to_contain_text("Nights:")
        await expect(form.get_by_label("Nights")).to_have_attribute("aria-invalid", "true")
        await expect(form.get_by_label("Nights")).to_be_focused()
        await expect(page.locator("#status")).to_have_attribute("data-status", "waiting")

        await form.get_by_label("Nights").fill("3")
        await batch.get_by_role("button", name="Send answers").click()
        reply = page.locator(".msg.assistant").last
        await expect(reply).to_contain_text('plan_stay: {"arrival": "2025-05-01", "breakfast": false, "nights": 3')
        await expect(reply).to_contain_text('book: {"booked": "suite"}')
        await expect(form.locator(".staged")).to_have_text(
            "✓ answered: Arrival date: 2025-05-01 · Nights: 3 · Room: suite · Breakfast: no"
        )


async def test_the_keyboard_alone_answers_every_request_kind(tmp_path: Path) -> None:
    async with serve(booking_runtime(), tokens=()) as served, browser_page(tmp_path / "p") as page:
        await page.goto(served.base + "/")
        keyboard = page.keyboard

        # option buttons: focus lands on the first one; Tab, Enter
        await send(page, "pick a colour")
        await expect(page.get_by_role("button", name="Red")).to_be_focused()
        await keyboard.press("Tab")
        await keyboard.press("Enter")
        await expect(page.locator(".msg.assistant").last).to_have_text(
            'ask_question: {"optionId": "teal", "status": "answered"}'
        )

        # a text question: type, Enter
        await send(page, "tell me your name")
        await expect(page.get_by_role("textbox", name="Your answer")).to_be_focused()
        await keyboard.type("Ada")
        await keyboard.press("Enter")
        await expect(page.locator(".msg.assistant").last).to_have_text(
            'ask_question: {"status": "answered", "text": "Ada"}'
        )

        # a form: type each field, Tab between them, Enter on Submit
        await send(page, "a form please")
        await expect(page.get_by_label("Arrival date")).to_be_focused()
        await keyboard.type("05012025")  # the date input's own fields (month, day, year in en-US)
        await tab_to(page, page.get_by_label("Nights"))
        await keyboard.type("2")
        await tab_to(page, page.get_by_label("Room"))
        await keyboard.type("d")  # Room: type-ahead to "double"
        await tab_to(page, page.get_by_label("Breakfast"))
        await keyboard.press("Space")
        await tab_to(page, page.get_by_role("button", name="Submit"))
        await keyboard.press("Enter")
        await expect(page.locator(".msg.assistant").last).to_have_text(
            'plan_stay: {"arrival": "2025-05-01", "breakfast": true, "nights": 2, "room": "double"}'
        )

        # a batch of a form and an approval: Tab through, Enter on Approve, then on Send answers
        await send(page, "book it")
        await expect(page.get_by_label("Arrival date").last).to_be_focused()
        await keyboard.type("06022025")
        await tab_to(page, page.get_by_label("Nights").last)
        await keyboard.type("1")
        await tab_to(page, page.get_by_role("button", name="Approve"))
        await keyboard.press("Enter")
        await tab_to(page, page.get_by_role("button", name="Send answers"))
        await keyboard.press("Enter")
        await expect(page.locator(".msg.assistant").last).to_contain_text('"arrival": "2025-06-02"')
        await expect(page.locator(".msg.assistant").last).to_contain_text('book: {"booked": "suite"}')


async def test_a_picker_and_an_approval_by_keyboard_with_focus_on_the_first_new_request(tmp_path: Path) -> None:
    async with serve(hitl_runtime(load_agent(HITL_APP)), tokens=()) as served, browser_page(tmp_path / "p") as page:
        await page.goto(served.base + "/")
        await send(page, "help me pick a template")
        await expect(page.get_by_role("checkbox", name="Blue")).to_be_focused()
        await page.keyboard.press("Tab")  # Red
        await page.keyboard.press("Space")
        await page.keyboard.press("Tab")  # Green
        await page.keyboard.press("Tab")  # Submit
        await page.keyboard.press("Enter")
        await expect(page.locator(".msg.assistant").last).to_have_text("Recorded your pick: tpl_red.")

        await send(page, "run the guarded echo")
        await expect(page.get_by_role("button", name="Approve")).to_be_focused()
        await page.keyboard.press("Enter")
        await expect(page.locator(".msg.assistant").last).to_contain_text("guarded-echo-ok-T4Q9")


async def test_screenshots_and_accessibility_of_each_view(tmp_path: Path) -> None:
    async with serve(hitl_runtime(load_agent(HITL_APP)), tokens=()) as served, browser_page(tmp_path / "p") as page:
        await page.set_viewport_size({"width": 1000, "height": 800})
        await page.goto(served.base + "/")
        await expect(page.locator("#agent-name")).to_have_text("agent-tools-hitl")
        await shoot(page, "empty")
        await send(page, "help me pick a template")
        await expect(page.get_by_role("checkbox", name="Blue")).to_be_focused()
        await shoot(page, "picker")
        await page.get_by_role("checkbox", name="Blue").check()
        await page.locator("fieldset.request").last.get_by_role("button", name="Submit").click()
        await expect(page.locator(".msg.assistant").last).to_have_text("Recorded your pick: tpl_blue.")
        await shoot(page, "picker-answered")

        await page.get_by_role("button", name="New chat").click()
        await send(page, "run the guarded echo")
        await expect(page.get_by_role("button", name="Approve")).to_be_focused()
        await shoot(page, "approval")

        # An editable approval's Edit form, then the same form refusing a field.
        await page.get_by_role("button", name="New chat").click()
        await send(page, "send the newsletter")
        await page.get_by_role("button", name="Edit").click()
        await expect(page.get_by_label("To (required)")).to_be_focused()
        await shoot(page, "approval-edit")
        await page.get_by_label("To (required)").fill("nope")
        await page.get_by_role("button", name="Approve with changes").click()
        await expect(page.get_by_label("To (required)")).to_have_attribute("aria-invalid", "true")
        await shoot(page, "approval-edit-refused")

        await page.get_by_role("button", name="New chat").click()
        await send(page, "review my page")
        await page.get_by_role("button", name="Send answers").click()  # refused: nothing chosen
        await expect(page.get_by_role("alert").last).to_be_visible()
        await shoot(page, "batch")

    async with serve(booking_runtime(), tokens=()) as served, browser_page(tmp_path / "q") as page:
        await page.set_viewport_size({"width": 1000, "height": 800})
        await page.goto(served.base + "/")
        await send(page, "a form please")
        await expect(page.get_by_label("Arrival date")).to_be_focused()
        await page.get_by_label("Nights").fill("40")
        await page.get_by_role("button", name="Submit").click()
        await expect(page.get_by_role("alert").last).to_be_visible()
        await shoot(page, "form")

        # A phone: the header wraps and shows the whole session label.
        await page.set_viewport_size({"width": 360, "height": 740})
        label = page.locator("#session-label")
        await expect(label).to_contain_text("session ses_")
        box = await label.bounding_box()
        assert box is not None and box["x"] >= 0 and box["x"] + box["width"] <= 360, box
        assert await label.evaluate("node => node.scrollWidth <= node.clientWidth")
        await shoot(page, "mobile")

    async with serve(booking_runtime(), tokens=[ALICE]) as served, browser_page(tmp_path / "r") as page:
        await page.set_viewport_size({"width": 1000, "height": 800})
        await page.goto(served.base + "/")
        await page.get_by_label("This server needs an API token").fill("wrong")
        await page.get_by_role("button", name="Use token").click()
        await expect(page.locator("#token-error")).to_be_visible()
        await shoot(page, "token-refused")


async def test_favicon_is_served_and_the_page_loads_without_errors(tmp_path: Path) -> None:
    async with serve(hitl_runtime(load_agent(HITL_APP)), tokens=()) as served:
        async with httpx.AsyncClient(base_url=served.base) as http:
            icon = await http.get("/favicon.ico")
        assert icon.status_code == 200
        assert icon.headers["content-type"].startswith("image/svg+xml")
        assert icon.text.startswith("<svg")
        async with browser_page(tmp_path / "p") as page:
            problems: list[str] = []

            def on_console(message: ConsoleMessage) -> None:
                if message.type in ("error", "warning"):
                    problems.append(message.text)

            page.on("console", on_console)
            page.on("pageerror", lambda error: problems.append(str(error)))
            await page.goto(served.base + "/")
            await send(page, "help me pick a template")
            await expect(page.get_by_role("checkbox", name="Blue")).to_be_visible()
            assert problems == []
