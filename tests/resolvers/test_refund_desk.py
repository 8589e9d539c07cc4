"""The refund desk fixture: every path of its resolver DAG, through the app's own mock model."""

from typing import Any

import pytest

from eve_py import InputResponse, Runtime, Session, TurnResult, check_pairing, load_agent
from eve_py.agent import load_mock_model
from eve_py.protocol.messages import ToolMessage
from eve_py.testing import MockModel
from tests.conftest import REPO

pytestmark = pytest.mark.anyio

APP = REPO / "fixtures" / "refund-desk"


async def send(message: str) -> tuple[Session, TurnResult, MockModel]:
    model = load_mock_model(APP)
    assert isinstance(model, MockModel)
    session = await Runtime(load_agent(APP), model=model).create_session()
    return session, await session.send(message), model


async def refund_results(session: Session) -> list[Any]:
    messages = await session.messages()
    parts = [p for m in messages if isinstance(m, ToolMessage) for p in m.content]
    check_pairing(messages)
    return parts


def test_the_model_sees_only_order_id_and_reason() -> None:
    tool = load_agent(APP).tools["refund_order"]
    assert set(tool.input_schema["properties"]) == {"order_id", "reason"}
    assert tool.input_schema["required"] == ["order_id", "reason"]


async def test_a_one_line_order_refunds_with_zero_questions() -> None:
    session, done, _ = await send("refund ORD-7001, I did not like it")

    assert done.status == "completed"
    assert not any(e.type == "input.requested" for e in done.events)
    [result] = await refund_results(session)
    assert result.output["refundedCents"] == 999
    assert result.output["restocked"] is False
    assert result.output["reason"] == "I did not like it"


async def test_a_multi_line_order_asks_for_the_scope_then_for_restock_in_a_later_park() -> None:
    session, first, model = await send("refund ORD-7002, it arrived broken")

    [scope] = first.input_requests
    assert scope.kind == "elicitation" and scope.display == "form"
    assert scope.prompt.startswith("Order ORD-7002 has 3 lines: MUG-RED (Red mug)")
    assert scope.action.input == {"order_id": "ORD-7002", "reason": "it arrived broken"}
    second = await session.respond([InputResponse(request_id=scope.request_id, value={"sku": "LAMP-DESK"})])

    [restock] = second.input_requests
    assert restock.prompt == "Put the returned Desk lamp back in stock?"
    done = await session.respond([InputResponse(request_id=restock.request_id, value={"restock": True})])

    assert done.message == f"Refunded 45.00 on ORD-7002 (restocked), refund RF-ORD-7002-{scope.action.call_id}."
    [result] = await refund_results(session)
    assert result.output["refundedCents"] == 4500
    for request in model.requests:
        check_pairing(request.messages)


async def test_a_typed_sku_is_checked_against_the_order_before_any_amount_is_computed() -> None:
    session, first, _ = await send("refund ORD-7002, it arrived broken")

    done = await session.respond([InputResponse(request_id=first.input_requests[0].request_id, value={"sku": "TV-1"})])

    [result] = await refund_results(session)
    assert result.is_error
    assert result.output == (
        "Error executing tool refund_order: SKU 'TV-1' is not on order ORD-7002 "
        "(its lines: MUG-RED, LAMP-DESK, GIFT-CODE)"
    )
    assert done.status == "completed", "no restock question was asked"


async def test_declining_the_scope_aborts_and_ask_restock_never_runs() -> None:
    session, first, _ = await send("refund ORD-7002, it arrived broken")

    done = await session.respond([InputResponse(request_id=first.input_requests[0].request_id, action="decline")])

    [result] = await refund_results(session)
    assert result.output == (
        "Error executing tool refund_order: Resolver for parameter 'scope' could not resolve: elicitation was decline"
    )
    assert sum(e.type == "input.requested" for e in done.events) == 0
    assert done.message is not None and done.message.startswith("The refund did not go through")


async def test_declining_restock_still_refunds_without_restocking() -> None:
    session, first, _ = await send("refund ORD-7002, it arrived broken")
    second = await session.respond([InputResponse(request_id=first.input_requests[0].request_id, value={"sku": "all"})])
    [restock] = second.input_requests
    assert restock.prompt == "Put the returned Red mug, Desk lamp back in stock?"

    await session.respond([InputResponse(request_id=restock.request_id, action="decline")])

    [result] = await refund_results(session)
    assert (result.output["refundedCents"], result.output["restocked"]) == (8500, False)


async def test_a_digital_line_needs_no_restock_question() -> None:
    session, first, _ = await send("refund ORD-7002, the code did not work")

    done = await session.respond(
        [InputResponse(request_id=first.input_requests[0].request_id, value={"sku": "GIFT-CODE"})]
    )

    assert done.status == "completed"
    [result] = await refund_results(session)
    assert (result.output["refundedCents"], result.output["restocked"]) == (2500, False)


async def test_an_unknown_order_is_a_tool_error_the_model_reports() -> None:
    session, done, _ = await send("refund ORD-9999 please")

    [result] = await refund_results(session)
    assert result.output == "Error executing tool refund_order: unknown order 'ORD-9999'"
    assert done.message == "The refund did not go through: Error executing tool refund_order: unknown order 'ORD-9999'"
