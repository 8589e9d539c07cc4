"""The browser chat in real headless Chromium (Debian's `/usr/bin/chromium`, driven by Playwright).

The main test is the regression flow of eve issue #203: a typed `ask_question` override (a
template picker) is asked, the person picks in the page, the call gets exactly one tool result,
the turn continues into `note` and completes. `scripts/test.sh` installs chromium when it is
missing; if it cannot be launched these tests fail, they never skip.
"""

from __future__ import annotations

import os
import re
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Literal
from urllib.parse import parse_qs, urlsplit

import anyio
import pytest
from playwright.async_api import Page, Request, Response, async_playwright, expect
from pydantic import BaseModel, Field

from eve_py import Runtime, define_client_tool, load_agent
from eve_py._json import JsonValue
from eve_py.agent import Agent, load_mock_model
from eve_py.protocol.messages import Message, ToolMessage
from eve_py.testing import MockModel, MockModelRequest, MockResponse, MockToolCall
from tests.conftest import HITL_APP, REPO
from tests.server.helpers import ALICE, GatedModel, hitl_runtime, serve

pytestmark = pytest.mark.anyio

CHROMIUM = os.environ.get("EVE_CHROMIUM", "/usr/bin/chromium")
"""Debian's chromium by default; `EVE_CHROMIUM` names another Chromium build (e.g. Chrome on CI runners)."""
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
TIMEOUT_MS = 15_000


@asynccontextmanager
async def browser_page(profile: Path, extra_args: Sequence[str] = ()) -> AsyncIterator[Page]:
    """A page in a fresh headless Chromium (its own user-data-dir), never Playwright's own browsers."""
    assert await anyio.Path(CHROMIUM).exists(), f"{CHROMIUM} is missing: scripts/test.sh installs Debian's chromium"
    async with async_playwright() as playwright:
        context = await playwright.chromium.launch_persistent_context(
            str(profile), executable_path=CHROMIUM, headless=True, args=[*CHROMIUM_ARGS, *extra_args]
        )
        context.set_default_timeout(TIMEOUT_MS)
        try:
            page = context.pages[0] if context.pages else await context.new_page()
            yield page
        finally:
            await context.close()


async def send(page: Page, text: str) -> None:
    await page.get_by_role("textbox", name="Message").fill(text)
    await page.get_by_role("button", name="Send", exact=True).click()


def results_for(messages: Sequence[Message], call_id: str) -> list[object]:
    return [
        part.output
        for message in messages
        if isinstance(message, ToolMessage)
        for part in message.content
        if part.tool_call_id == call_id
    ]


async def test_eve_203_flow_question_pick_note_completed(hitl_agent: Agent, tmp_path: Path) -> None:
    runtime = hitl_runtime(hitl_agent)
    async with serve(runtime, tokens=[ALICE]) as served, browser_page(tmp_path / "profile") as page:
        await page.goto(served.base + "/")
        await expect(page.locator("#agent-name")).to_have_text("agent-tools-hitl")

        # The server wants a token: the page asks for it before anything is sent; a wrong token
        # is refused visibly, the right one clears the box and its error.
        token_box = page.get_by_label("This server needs an API token")
        await expect(token_box).to_be_visible()
        await expect(token_box).to_be_focused()
        await token_box.fill("not-the-token")
        await page.get_by_role("button", name="Use token").click()
        await expect(page.locator("#token-error")).to_have_text("That token was not accepted; check it and try again.")
        await expect(token_box).to_have_attribute("aria-invalid", "true")
        await token_box.fill(ALICE)
        await page.get_by_role("button", name="Use token").click()
        await expect(token_box).to_be_hidden()
        await expect(page.locator("#token-error")).to_be_hidden()
        await send(page, "help me pick a template")

        # question: the typed ui picker, rendered as a choice list
        picker = page.locator("fieldset.request[data-request-id]")
        await expect(picker.locator("legend")).to_have_text("Which template should the page use?")
        await expect(picker.locator(".kind")).to_have_text("question · template picker")
        await expect(page.locator("#status")).to_have_attribute("data-status", "waiting")
        choices = picker.locator(".choice")
        await expect(choices).to_have_count(3)
        await expect(choices.nth(0)).to_contain_text("Calm, lots of white space")

        # pick
        await page.get_by_role("checkbox", name="Blue").check()
        await picker.get_by_role("button", name="Submit").click()

        # note, then completed
        await expect(page.locator(".msg.assistant")).to_have_text("Recorded your pick: tpl_blue.")
        # The tool's result in words, not JSON.
        await expect(page.locator(".tool .tool-head")).to_have_text("↳ note returned")
        await expect(page.locator(".tool dl")).to_have_accessible_name("note result")
        await expect(page.locator(".tool dt")).to_have_text(["recorded", "text", "call id"])
        await expect(page.locator(".tool dd").nth(0)).to_have_text("yes")
        await expect(page.locator(".tool dd").nth(1)).to_have_text("picked tpl_blue")
        await expect(page.locator(".tool")).not_to_contain_text("{")
        # The answered card says what was chosen.
        await expect(picker.locator(".staged")).to_have_text("✓ answered: Blue")
        await expect(page.locator("#status")).to_have_attribute("data-status", "completed")
        await expect(picker.get_by_role("checkbox", name="Blue")).to_be_disabled()
        await expect(page.locator(".msg.user")).to_have_text("help me pick a template")

        session_id = page.url.split("#session=")[1]
        request_id = await picker.get_attribute("data-request-id")
        assert request_id is not None

        # A reload replays the whole conversation from the stream.
        await page.reload()
        await expect(page.locator(".msg.assistant")).to_have_text("Recorded your pick: tpl_blue.")
        await expect(page.locator(".batch.closed")).to_have_count(1)
        await expect(page.locator("#status")).to_have_attribute("data-status", "completed")

    messages = await runtime.store.read_messages(session_id)
    assert results_for(messages, request_id) == [{"pickedIds": ["tpl_blue"]}]  # one result, the picked ids


async def test_approval_buttons_and_a_batch_of_two_pickers(hitl_agent: Agent, tmp_path: Path) -> None:
    async with serve(hitl_runtime(hitl_agent), tokens=()) as served, browser_page(tmp_path / "p") as page:
        await page.goto(served.base + "/")

        await send(page, "run the guarded echo")
        approval = page.locator('fieldset.request[data-display="confirmation"]')
        await expect(approval.locator("legend")).to_have_text("Approve tool call: guarded_echo")
        await expect(approval).to_contain_text("guarded_echo will run with:")
        await expect(approval.get_by_role("definition")).to_have_text("hello")
        await approval.get_by_role("button", name="Approve").click()
        await expect(approval.locator(".staged")).to_have_text("✓ approved")
        await expect(page.locator(".msg.assistant").last).to_contain_text("guarded-echo-ok-T4Q9")
        await expect(page.locator("#status")).to_have_attribute("data-status", "completed")

        await send(page, "compare two layouts")
        batch = page.locator(".batch").last
        await expect(batch.locator("fieldset.request")).to_have_count(2)
        send_all = batch.get_by_role("button", name="Send answers")
        await send_all.click()  # nothing chosen: refused, saying why
        await expect(batch.get_by_role("alert").last).to_have_text("Nothing to send yet: answer at least one question.")
        first, second = batch.locator("fieldset.request").nth(0), batch.locator("fieldset.request").nth(1)
        await first.get_by_role("checkbox", name="Red").check()
        await first.get_by_role("button", name="Submit").click()
        await expect(first.locator(".staged")).to_have_text("✓ ready to send")
        await second.get_by_role("checkbox", name="Blue").check()
        await second.get_by_role("button", name="Submit").click()
        await send_all.click()
        await expect(page.locator(".msg.assistant").last).to_have_text("First layout: tpl_red; second layout: blue.")


def _builtin_question_model(request: MockModelRequest) -> str | MockResponse:
    text = request.last_user_message or ""
    done = request.tool_results_since_last_user_message
    if done:
        return f"Answer: {done[-1].output}"
    if "colour" in text:
        options: list[JsonValue] = [{"id": "red", "label": "Red"}, {"id": "teal", "label": "Teal", "style": "primary"}]
        return MockResponse(tool_calls=[MockToolCall("ask_question", {"prompt": "Which colour?", "options": options})])
    if "name" in text:
        return MockResponse(tool_calls=[MockToolCall("ask_question", {"prompt": "What is your name?"})])
    return MockResponse(tool_calls=[MockToolCall("book_room", {"prompt": "Book a room"})])


class Booking(BaseModel):
    """A flat form: a string, an enum, an integer and a boolean."""

    guest: str = Field(title="Guest name")
    room: Literal["single", "double", "suite"]
    nights: int = Field(ge=1, le=14)
    breakfast: bool = False


async def test_select_buttons_text_box_and_generated_form(tmp_path: Path) -> None:
    book_room = define_client_tool(
        description="Ask the person for the booking details.",
        input_schema={"type": "object", "properties": {"prompt": {"type": "string"}}, "required": ["prompt"]},
        output_schema=Booking,
    )
    runtime = Runtime(Agent.from_definitions({"book_room": book_room}), model=MockModel(_builtin_question_model))
    async with serve(runtime, tokens=()) as served, browser_page(tmp_path / "p") as page:
        await page.goto(served.base + "/")

        await send(page, "pick a colour")
        await page.get_by_role("button", name="Teal").click()
        await expect(page.locator(".msg.assistant").last).to_have_text(
            "Answer: {'status': 'answered', 'optionId': 'teal'}"
        )

        await send(page, "tell me your name")
        await page.get_by_role("textbox", name="Your answer").fill("Ada")
        await page.get_by_role("button", name="Answer").click()
        await expect(page.locator(".msg.assistant").last).to_have_text("Answer: {'status': 'answered', 'text': 'Ada'}")

        await send(page, "book it")
        form = page.locator('fieldset.request[data-display="form"]')
        await expect(form.locator("legend")).to_have_text("Book a room")
        await form.get_by_label("Guest name").fill("Grace")
        await form.get_by_label("room").select_option(label="suite")
        await form.get_by_label("nights").fill("3")
        await form.get_by_label("breakfast").check()
        await form.get_by_role("button", name="Submit").click()
        await expect(page.locator(".msg.assistant").last).to_have_text(
            "Answer: {'guest': 'Grace', 'room': 'suite', 'nights': 3, 'breakfast': True}"
        )


async def test_refund_desk_elicitation_forms(tmp_path: Path) -> None:
    app = REPO / "fixtures" / "refund-desk"
    runtime = Runtime(load_agent(app), model=load_mock_model(app))
    async with serve(runtime, tokens=()) as served, browser_page(tmp_path / "p") as page:
        await page.goto(served.base + "/")
        await send(page, "refund ORD-7002, it arrived broken")
        scope = page.locator('fieldset.request[data-display="form"]').last
        await expect(scope.locator(".kind")).to_have_text("refund_order needs")
        await scope.get_by_label("sku").fill("MUG-RED")
        await scope.get_by_role("button", name="Submit").click()
        restock = page.locator('fieldset.request[data-display="form"]').nth(1)
        await restock.get_by_label("restock").check()
        await restock.get_by_role("button", name="Submit").click()
        await expect(page.locator(".msg.assistant").last).to_contain_text("Refunded 15.00 on ORD-7002 (restocked)")


async def test_partial_batch_dismissal_and_stopping_a_parked_turn(hitl_agent: Agent, tmp_path: Path) -> None:
    async with serve(hitl_runtime(hitl_agent), tokens=()) as served, browser_page(tmp_path / "p") as page:
        await page.goto(served.base + "/")
        stop = page.get_by_role("button", name="Stop")

        # One step asks for an approval and a colour: answering only the colour leaves the turn
        # parked on the approval (`input.resolved` for the colour, then `turn.waiting` again).
        await send(page, "review my page")
        batch = page.locator(".batch").last
        await expect(batch.locator("fieldset.request")).to_have_count(2)
        await expect(page.locator(".tool-head")).to_have_text("↳ note returned")  # runs at once
        approval = batch.locator('fieldset.request[data-display="confirmation"]')
        colour = batch.locator('fieldset.request[data-display="select"]')
        await colour.get_by_role("checkbox", name="Red").check()
        await colour.get_by_role("button", name="Submit").click()
        send_all = batch.get_by_role("button", name="Send answers")
        await send_all.click()
        await expect(colour.locator(".staged")).to_have_text("✓ answered: Red")
        await expect(colour).to_have_attribute("data-outcome", "answered")
        await expect(page.locator("#status")).to_have_attribute("data-status", "waiting")
        await expect(colour.get_by_role("checkbox", name="Red")).to_be_disabled()
        await expect(approval.get_by_role("button", name="Approve")).to_be_enabled()
        await expect(send_all).to_be_enabled()  # the approval is still open
        await expect(batch).not_to_have_class("batch closed")
        await page.reload()  # the replay rebuilds the half-answered batch
        await expect(colour.locator(".staged")).to_have_text("✓ answered: Red")
        await expect(colour.get_by_role("checkbox", name="Red")).to_be_disabled()
        await expect(approval.get_by_role("button", name="Approve")).to_be_enabled()
        await expect(page.locator("#status")).to_have_attribute("data-status", "waiting")
        await approval.get_by_role("button", name="Approve").click()
        await expect(approval.locator(".staged")).to_have_text("✓ ready to send")
        await send_all.click()
        await expect(page.locator(".msg.assistant").last).to_have_text(
            "The guarded echo ran and returned the token guarded-echo-ok-T4Q9. Colour: red."
        )
        await expect(approval).to_have_attribute("data-outcome", "approved")
        await expect(batch.locator(".answered")).to_have_text("Answered.")
        await expect(page.locator("#status")).to_have_attribute("data-status", "completed")
        await expect(stop).to_be_hidden()

        # A message sent while a question is open withdraws it (resolved as ignored).
        await send(page, "run the guarded echo")
        echo = page.locator(".batch").nth(1)
        await expect(echo.locator("legend")).to_have_text("Approve tool call: guarded_echo")
        await expect(stop).to_be_visible()  # a parked turn can be stopped
        await send(page, "help me pick a template")
        await expect(echo.locator(".answered")).to_have_text("Skipped: a new message was sent instead.")
        await expect(echo.locator("fieldset.request")).to_have_attribute("data-outcome", "ignored")
        await expect(page.locator(".tool.error .tool-head")).to_have_text("⊘ guarded_echo did not run")
        picker = page.locator(".batch").nth(2)
        await expect(picker.locator("legend")).to_have_text("Which template should the page use?")
        await expect(page.locator("#status")).to_have_attribute("data-status", "waiting")

        # Stop cancels the parked turn: its open requests resolve as cancelled.
        await stop.click()
        await expect(picker.locator(".answered")).to_have_text("Withdrawn: the turn was stopped.")
        await expect(picker.get_by_role("checkbox", name="Blue")).to_be_disabled()
        await expect(page.locator("#status")).to_have_attribute("data-status", "cancelled")
        await expect(stop).to_be_hidden()

        # The session takes the next message.
        await send(page, "set up a palette")
        palette = page.locator(".batch").nth(3)
        await expect(palette.locator("legend")).to_have_text("Which template should the page use?")
        await palette.get_by_role("checkbox", name="Green").check()
        await palette.get_by_role("button", name="Submit").click()
        await expect(page.locator(".msg.assistant").last).to_have_text("Good choice. One more thing:")
        await expect(page.locator(".batch").nth(4).locator("legend")).to_have_text("Which accent colour?")
        await expect(page.locator(".batch:not(.closed)")).to_have_count(1)


async def test_streamed_text_survives_stream_leases_and_a_reload(tmp_path: Path) -> None:
    model = GatedModel()
    runtime = hitl_runtime(load_agent(HITL_APP), model=model)
    # The server ends a response after 0.5 s without news; the chat reconnects from its cursor.
    async with serve(runtime, tokens=(), stream_lease_s=0.5) as served, browser_page(tmp_path / "p") as page:
        streams: list[str] = []  # URLs of the stream reads

        def on_request(request: Request) -> None:
            if "/stream?" in request.url:
                streams.append(request.url)

        page.on("request", on_request)
        await page.goto(served.base + "/")
        await send(page, "stream please")
        await expect(page.locator(".msg.assistant.streaming")).to_have_text("Hel")
        await expect(page.locator("#status")).to_have_attribute("data-status", "working")
        await anyio.sleep(1.5)
        starts = [int(parse_qs(urlsplit(url).query)["startIndex"][0]) for url in streams]
        assert len(starts) >= 3, streams  # the first read, then reconnects after each lease
        assert starts[0] == 0
        assert all(start == starts[1] > 0 for start in starts[1:]), starts  # from the cursor, nothing again

        await page.reload()  # replays the log, the streamed piece included, then follows live
        await expect(page.locator(".msg.assistant.streaming")).to_have_text("Hel")
        await expect(page.locator(".msg.user")).to_have_text("stream please")
        model.release.set()
        await expect(page.locator(".msg.assistant")).to_have_text("Hello")  # one bubble
        await expect(page.locator(".msg.assistant.streaming")).to_have_count(0)
        await expect(page.locator("#status")).to_have_attribute("data-status", "completed")


async def test_a_message_sent_while_a_turn_runs_is_retried_until_it_settles(tmp_path: Path) -> None:
    model = GatedModel()
    runtime = hitl_runtime(load_agent(HITL_APP), model=model)
    async with serve(runtime, tokens=()) as served, browser_page(tmp_path / "p") as page:
        messages: list[int] = []  # statuses of POST /session/{id}
        refused = anyio.Event()

        def on_response(response: Response) -> None:
            if response.request.method == "POST" and re.search(r"/eve/v1/session/[^/]+$", response.url):
                messages.append(response.status)
                if response.status == 409:
                    refused.set()

        page.on("response", on_response)
        await page.goto(served.base + "/")
        await send(page, "something slow")
        await expect(page.locator("#status")).to_have_attribute("data-status", "working")
        await model.entered.wait()
        # Enter sends even while the Send button is disabled: 409 session_not_ready, sent again.
        await page.get_by_role("textbox", name="Message").fill("help me pick a template")
        await page.get_by_role("textbox", name="Message").press("Enter")
        with anyio.fail_after(10):
            await refused.wait()
        await anyio.sleep(0.6)  # a few retries
        assert set(messages) == {409}, messages
        model.release.set()
        await expect(page.locator(".msg.assistant").first).to_have_text("Finally done.")
        await expect(page.locator(".batch legend")).to_have_text("Which template should the page use?")
        await expect(page.locator("#status")).to_have_attribute("data-status", "waiting")
        await expect(page.locator(".msg.user")).to_have_text(["something slow", "help me pick a template"])
        assert len(messages) >= 2 and messages[-1] == 202 and set(messages[:-1]) == {409}, messages


async def test_stop_cancels_a_running_turn(tmp_path: Path) -> None:
    model = GatedModel()
    runtime = hitl_runtime(load_agent(HITL_APP), model=model)
    async with serve(runtime, tokens=()) as served, browser_page(tmp_path / "p") as page:
        await page.goto(served.base + "/")
        await send(page, "stream please")
        await expect(page.locator(".msg.assistant.streaming")).to_have_text("Hel")
        await page.get_by_role("button", name="Stop").click()
        await expect(page.locator("#status")).to_have_attribute("data-status", "cancelled")
        await expect(page.locator(".msg.assistant")).to_have_count(0)  # the unfinished text goes
        await expect(page.get_by_role("button", name="Stop")).to_be_hidden()
        await send(page, "help me pick a template")
        await expect(page.locator(".batch legend")).to_have_text("Which template should the page use?")
        await expect(page.locator("#status")).to_have_attribute("data-status", "waiting")


SEND_FROM_PAGE = """async (url) => {
    // What any page may do: a no-cors POST needs no preflight; the browser sends it and hides the answer.
    const body = JSON.stringify({message: "help me pick a template"});
    await fetch(url, {method: "POST", mode: "no-cors", headers: {"content-type": "text/plain"}, body});
    return "sent";
}"""


async def test_a_page_of_another_site_cannot_start_a_turn_on_a_server_without_token(
    hitl_agent: Agent, tmp_path: Path
) -> None:
    runtime = hitl_runtime(hitl_agent)
    rebinding = ["--host-resolver-rules=MAP evil.example 127.0.0.1"]  # DNS rebinding, without DNS
    async with (
        serve(runtime, tokens=()) as target,
        serve(hitl_runtime(hitl_agent), tokens=()) as elsewhere,  # another origin: another port
        browser_page(tmp_path / "p", rebinding) as page,
    ):
        await page.goto(elsewhere.base + "/")
        assert await page.evaluate(SEND_FROM_PAGE, target.api + "/session") == "sent"

        port = target.base.rsplit(":", 1)[1]
        rebound = await page.goto(f"http://evil.example:{port}/")
        assert rebound is not None and rebound.status == 400

        await page.goto(target.base + "/")  # the server's own page still works
        await send(page, "help me pick a template")
        await expect(page.locator("#status")).to_have_attribute("data-status", "waiting")

    assert len(runtime.store._records) == 1, "only the session of the server's own page"  # type: ignore[attr-defined]
