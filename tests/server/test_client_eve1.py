"""`eve_py.client.Eve1Client` against a real server on eve 1.0's wire: deliveries, interactions, controls, streams."""

from __future__ import annotations

from collections import Counter

import anyio
import httpx
import pytest

from eve_py.agent import Agent
from eve_py.client import Answer, Eve1Client, Fact
from eve_py.errors import (
    ApiError,
    InvalidAnswerError,
    RequestAlreadyAnsweredError,
    SessionEndedError,
    SessionNotFoundError,
)
from tests.server.helpers import ALICE, GatedModel, hitl_runtime, serve
from tests.server.test_client import cutting_proxy

pytestmark = pytest.mark.anyio

PICKER = "help me pick a template"


async def test_the_picker_pauses_on_a_question_and_an_option_answers_it(hitl_agent: Agent) -> None:
    async with serve(hitl_runtime(hitl_agent)) as served, Eve1Client(served.base, token=ALICE) as client:
        assert (await client.health())["status"] == "ready"
        session, delivery = await client.create_session(PICKER)
        assert delivery.session_id == session.session_id and delivery.turn_id is not None
        parked = await delivery.result(timeout_s=10)
        assert (parked.status, parked.outcome, parked.reply) == ("awaiting-input", "awaiting-input", None)
        assert parked.delivery_id == delivery.delivery_id and parked.session_id == session.session_id
        [picker] = parked.interactions
        assert picker.kind == "question" and picker.prompt == "Which template should the page use?"
        assert [(o.id, o.label) for o in picker.options] == [
            ("tpl_blue", "Blue"),
            ("tpl_red", "Red"),
            ("tpl_green", "Green"),
        ]
        assert "pickedIds" in picker.extensions["schema"]["properties"]  # eve-py's typed answer, beside eve's fields
        assert picker.turn_id == delivery.turn_id

        answered = await session.respond([Answer(interaction_id=picker.interaction_id, option_id="tpl_blue")])
        assert answered.delivery_id != delivery.delivery_id
        done = await answered.result(timeout_s=10)
        assert (done.status, done.outcome) == ("completed", "handled")
        assert done.reply == "Recorded your pick: tpl_blue."
        assert done.interactions == () and done.error is None and not done.session_ended
        assert await answered.result() is done, "a settled result is kept"
        assert await session.prewarm() == "ready"


async def test_text_answers_a_question_and_a_follow_up_streams_its_reply(hitl_agent: Agent) -> None:
    async with serve(hitl_runtime(hitl_agent)) as served, Eve1Client(served.base, token=ALICE) as client:
        session, delivery = await client.create_session(PICKER)
        [picker] = (await delivery.result(timeout_s=10)).interactions
        typed = await session.respond([{"interaction_id": picker.interaction_id, "text": "Green"}])
        assert (await typed.result(timeout_s=10)).reply == "Recorded your pick: tpl_green."

        story = await session.send("tell me a story")
        with anyio.fail_after(10):
            facts = [fact async for fact in story.stream()]
        told = await story.result(timeout_s=10)
        assert told.status == "completed" and told.reply is not None and told.reply.startswith("Once upon a time")
        assert (facts[0].type, facts[0].data["deliveryId"]) == ("delivery.admitted", story.delivery_id)
        assert "content.completed" in [f.type for f in facts]
        deltas = [f for f in facts if f.type == "content.delta"]
        assert deltas and all(f.at is None for f in deltas), "the streamed words come as progress, not stored facts"
        assert "".join(f.data["delta"] for f in deltas) == told.reply


@pytest.mark.parametrize(
    ("option_id", "expected"), [("approve", "returned the token guarded-echo-ok"), ("deny", "did not run")]
)
async def test_an_approval_approved_or_denied(hitl_agent: Agent, option_id: str, expected: str) -> None:
    async with serve(hitl_runtime(hitl_agent)) as served, Eve1Client(served.base, token=ALICE) as client:
        session, delivery = await client.create_session("run the guarded echo")
        waiting = await delivery.result(timeout_s=10)
        assert waiting.status == "awaiting-input"
        [approval] = waiting.interactions
        assert approval.kind == "approval" and [o.id for o in approval.options] == ["approve", "deny"]
        assert approval.call is not None and approval.call["name"] == "guarded_echo"
        assert approval.call["input"] == {"text": "hello"}
        decided = await (
            await session.respond([Answer(interaction_id=approval.interaction_id, option_id=option_id)])
        ).result(timeout_s=10)
        assert decided.status == "completed"
        assert decided.reply is not None and expected in decided.reply


async def test_a_batch_of_two_is_answered_in_one_delivery_and_a_partial_answer_waits(hitl_agent: Agent) -> None:
    async with serve(hitl_runtime(hitl_agent)) as served, Eve1Client(served.base, token=ALICE) as client:
        session, delivery = await client.create_session("compare two layouts")
        batch = await delivery.result(timeout_s=10)
        assert [i.prompt for i in batch.interactions] == [
            "Which template for the first layout?",
            "Which accent colour for the second layout?",
        ]
        first, second = batch.interactions
        both = await session.respond(
            [
                {"interaction_id": first.interaction_id, "option_id": "tpl_red"},
                {"interaction_id": second.interaction_id, "option_id": "blue"},
            ]
        )
        assert (await both.result(timeout_s=10)).reply == "First layout: tpl_red; second layout: blue."

        review = await (await session.send("review my page")).result(timeout_s=10)
        by_kind = {i.kind: i for i in review.interactions}
        assert set(by_kind) == {"approval", "question"}
        partial = await session.respond([Answer(interaction_id=by_kind["question"].interaction_id, option_id="red")])
        waits = await partial.result(timeout_s=10)
        # The approval was asked before this delivery; it is still what the turn waits on.
        assert waits.status == "awaiting-input"
        assert [i.interaction_id for i in waits.interactions] == [by_kind["approval"].interaction_id]
        approve = Answer(interaction_id=by_kind["approval"].interaction_id, option_id="approve")
        approved = await (await session.respond([approve])).result(timeout_s=10)
        assert approved.reply is not None and "Colour: red." in approved.reply


async def test_refused_answers_raise_the_session_errors(hitl_agent: Agent) -> None:
    async with serve(hitl_runtime(hitl_agent)) as served, Eve1Client(served.base, token=ALICE) as client:
        session, delivery = await client.create_session(PICKER)
        [picker] = (await delivery.result(timeout_s=10)).interactions
        with pytest.raises(ValueError, match="at least one answer"):
            await session.respond([])
        with pytest.raises(TypeError):
            await session.respond([{"interactionId": picker.interaction_id}])  # camelCase is the wire's, not Python's
        with pytest.raises(InvalidAnswerError, match="tpl_purple") as invalid:
            await session.respond([Answer(interaction_id=picker.interaction_id, option_id="tpl_purple")])
        assert invalid.value.request_id == picker.interaction_id
        answer = Answer(interaction_id=picker.interaction_id, option_id="tpl_red")
        with pytest.raises(RequestAlreadyAnsweredError, match="twice"):  # one request twice in one body
            await session.respond([answer, answer])
        await (await session.respond([answer])).result(timeout_s=10)
        stale = await (await session.respond([answer])).result(timeout_s=10)  # as eve 1.0: reported, not refused
        assert stale.outcome == "ignored"


async def test_cancel_of_a_parked_turn_is_a_delivery_applied(hitl_agent: Agent) -> None:
    async with serve(hitl_runtime(hitl_agent)) as served, Eve1Client(served.base, token=ALICE) as client:
        session, delivery = await client.create_session(PICKER)
        await delivery.result(timeout_s=10)
        cancel = await session.cancel()
        with anyio.fail_after(10):
            facts = [fact async for fact in cancel.stream()]
        cancelled = await cancel.result(timeout_s=10)
        assert (cancelled.status, cancelled.outcome) == ("completed", "applied")
        turn = [f.data for f in facts if f.type == "turn.settled"]
        assert turn == [
            {"outcome": "cancelled", "turnId": delivery.turn_id, "cause": {"deliveryId": cancel.delivery_id}}
        ]
        nothing = await (await session.cancel()).result(timeout_s=10)
        assert (nothing.status, nothing.outcome) == ("completed", "ignored"), "nothing was left to stop"
        again = await (await session.send(PICKER)).result(timeout_s=10)
        assert again.status == "awaiting-input", "the session takes the next message"


async def test_a_cancel_naming_another_turn_while_a_turn_runs_settles_ignored_and_stops_nothing(
    hitl_agent: Agent,
) -> None:
    model = GatedModel()
    async with serve(hitl_runtime(hitl_agent, model=model)) as served, Eve1Client(served.base, token=ALICE) as client:
        session, delivery = await client.create_session("be slow")
        with anyio.fail_after(10):
            await model.entered.wait()  # the turn runs: its model step waits
        cancel = await session.cancel(turn_id="turn_not_this_one")
        model.release.set()
        ignored = await cancel.result(timeout_s=10)
        assert (ignored.status, ignored.outcome) == ("completed", "ignored"), "the running turn's write records it"
        done = await delivery.result(timeout_s=10)
    assert (done.outcome, done.reply) == ("handled", "Finally done."), "the turn it did not name ran on"


async def test_clear_then_end_and_a_message_after_the_end_is_refused(hitl_agent: Agent) -> None:
    async with serve(hitl_runtime(hitl_agent)) as served, Eve1Client(served.base, token=ALICE) as client:
        session, delivery = await client.create_session("tell me a story")
        await delivery.result(timeout_s=10)
        clear = await session.clear()
        with anyio.fail_after(10):
            cleared = [fact.type async for fact in clear.stream()]
        assert cleared == ["delivery.admitted", "context.started", "context.settled", "delivery.settled"]
        assert (await clear.result()).outcome == "applied"
        fresh = await session.send("tell me a story")
        with anyio.fail_after(10):
            started = [f async for f in fresh.stream() if f.type == "turn.started"]
        assert started[0].data["follows"] is None, "the turn after a clear continues no earlier one"

        end = await session.end("done")
        ended = await end.result(timeout_s=10)
        assert (ended.status, ended.outcome, ended.session_ended) == ("completed", "applied", True)
        with pytest.raises(SessionEndedError):
            await session.send("hello again")
        with pytest.raises(SessionEndedError):
            await session.clear()
        assert await session.prewarm() == "no_active_session"
        with anyio.fail_after(10):
            followed = [fact async for fact in session.stream(0)]  # a follower stops at the end, no reconnect
        assert followed[-1].type == "session.ended"


async def test_an_unknown_session_refuses_messages_and_controls(hitl_agent: Agent) -> None:
    async with serve(hitl_runtime(hitl_agent)) as served, Eve1Client(served.base, token=ALICE) as client:
        unknown = client.attach("ses_unknown")
        with pytest.raises(SessionEndedError, match="ses_unknown"):
            await unknown.send("hi")
        with pytest.raises(SessionEndedError):
            await unknown.cancel()
        with pytest.raises(SessionNotFoundError):
            [fact async for fact in unknown.stream(0)]
        assert await unknown.prewarm() == "no_active_session"
        async with Eve1Client(served.base + "/v26", token=ALICE) as old_wire:
            session, _ = await old_wire.create_session("tell me a story")
            with pytest.raises(ApiError) as version:
                [fact async for fact in session.stream(0, follow=False)]
            assert version.value.code == "stream_version_unsupported"


async def test_a_delivery_reads_from_its_admission_to_its_settlement(hitl_agent: Agent) -> None:
    async with serve(hitl_runtime(hitl_agent)) as served, Eve1Client(served.base, token=ALICE) as client:
        session, delivery = await client.create_session(PICKER)
        with anyio.fail_after(10):
            facts = [fact async for fact in delivery.stream()]
            again = [fact async for fact in delivery.stream()]
        assert again == facts, "each read is independent and replays the same facts"
        mine = delivery.delivery_id
        assert (facts[0].type, facts[0].data["deliveryId"]) == ("delivery.admitted", mine)
        assert (facts[-1].type, facts[-1].data["deliveryId"], facts[-1].data["outcome"]) == (
            "delivery.settled",
            mine,
            "awaiting-input",
        )
        assert [f.type for f in facts].count("delivery.settled") == 1
        assert "session.started" not in [f.type for f in facts], "lines before the admission are skipped"
        assert session.stream_index == facts[-1].line + 1

        [picker] = (await delivery.result()).interactions
        answered = await session.respond([Answer(interaction_id=picker.interaction_id, option_id="tpl_blue")])
        with anyio.fail_after(10):
            answer_facts = [fact async for fact in answered.stream()]
        assert answer_facts[0].line > facts[-1].line
        assert answer_facts[-1].type == "delivery.settled" and answer_facts[-1].data["outcome"] == "handled"


async def test_a_read_from_a_line_gives_the_tail_of_a_read_from_the_first(hitl_agent: Agent) -> None:
    async with serve(hitl_runtime(hitl_agent)) as served, Eve1Client(served.base, token=ALICE) as client:
        session, delivery = await client.create_session(PICKER)
        [picker] = (await delivery.result(timeout_s=10)).interactions
        await (await session.respond([Answer(interaction_id=picker.interaction_id, option_id="tpl_blue")])).result(
            timeout_s=10
        )
        with anyio.fail_after(10):
            whole = [fact async for fact in session.stream(0, follow=False)]
            paused = next(f.line for f in whole if f.type == "turn.paused")
            rest = [fact async for fact in session.stream(paused + 1, follow=False)]
            last = [fact async for fact in session.stream(-2, follow=False)]
        assert rest == [f for f in whole if f.line > paused]
        assert rest[0].type == "delivery.admitted"  # the answer's delivery
        assert last and last == [f for f in whole if f.line >= last[0].line]  # the log's last two lines
        assert last[-1].type == "delivery.settled"
        lines = [(f.line, f.index) for f in whole]
        assert lines == sorted(set(lines)), "every fact once, in order"

        again = client.attach(session.session_id, stream_index=paused + 1)
        with anyio.fail_after(10):
            resumed = [fact async for fact in again.stream(follow=False)]
        assert resumed == rest, "a saved cursor resumes where it was"


async def test_a_follower_reconnects_when_a_lease_ends_and_loses_nothing(hitl_agent: Agent) -> None:
    reads = 0
    reconnected = anyio.Event()

    async def count(request: httpx.Request) -> None:
        nonlocal reads
        if request.url.path.endswith("/stream"):
            reads += 1
            if reads == 3:  # the delivery's read, the follower's first, and the follower's next
                reconnected.set()

    runtime = hitl_runtime(hitl_agent)
    async with (
        serve(runtime, stream_lease_s=0.2) as served,
        httpx.AsyncClient(event_hooks={"request": [count]}) as http,
        Eve1Client(served.base, token=ALICE, http=http) as client,
    ):
        session, delivery = await client.create_session(PICKER)
        [picker] = (await delivery.result(timeout_s=10)).interactions
        followed: list[Fact] = []
        with anyio.fail_after(10):
            follower = client.attach(session.session_id)
            async with anyio.create_task_group() as group:

                async def follow() -> None:
                    async for fact in follower.stream(0):
                        followed.append(fact)
                        if fact.type == "delivery.settled" and fact.data["outcome"] == "handled":
                            return

                group.start_soon(follow)
                await reconnected.wait()  # the follower's first response ended with `stream.lease-ended`
                answer = Answer(interaction_id=picker.interaction_id, option_id="tpl_green")
                await session.respond([answer])
            whole = [fact async for fact in session.stream(0, follow=False)]
    assert reads >= 4  # and the read of the whole log
    assert followed == [f for f in whole if f.line <= followed[-1].line]
    assert [f.data["outcome"] for f in followed if f.type == "turn.settled"] == ["completed"]


async def test_a_broken_stream_resumes_from_its_position(hitl_agent: Agent) -> None:
    model = GatedModel()
    async with serve(hitl_runtime(hitl_agent, model=model)) as served:
        server_port = int(served.base.rsplit(":", 1)[1])
        async with (
            cutting_proxy(server_port) as (proxy, port),
            Eve1Client(f"http://127.0.0.1:{port}", token=ALICE) as client,
        ):
            session, delivery = await client.create_session("be slow")
            got: list[Fact] = []
            with anyio.fail_after(10):
                async for fact in delivery.stream():
                    got.append(fact)
                    if fact.type == "delivery.consumed":
                        proxy.cut.set()  # the connection dies while the model step still runs
                        model.release.set()
                whole = [fact async for fact in session.stream(0, follow=False)]
            done = await delivery.result(timeout_s=10)
    assert proxy.stream_connections >= 2
    assert got == [f for f in whole if got[0].line <= f.line <= got[-1].line], "nothing lost or repeated"
    assert done.reply == "Finally done."


async def test_a_repeat_with_the_same_idempotency_key_names_the_same_delivery(hitl_agent: Agent) -> None:
    async with serve(hitl_runtime(hitl_agent)) as served, Eve1Client(served.base, token=ALICE) as client:
        session, delivery = await client.create_session("tell me a story")
        await delivery.result(timeout_s=10)
        first = await session.send("the catalogue as json", idempotency_key="webhook:evt_1")
        told = await first.result(timeout_s=10)
        repeat = await session.send("something else entirely", idempotency_key="webhook:evt_1")
        assert repeat.delivery_id == first.delivery_id
        assert await repeat.result(timeout_s=10) == told, "the repeat follows the first delivery, which ran once"
        with anyio.fail_after(10):
            whole = [fact async for fact in session.stream(0, follow=False)]
        admitted = Counter(f.data["deliveryId"] for f in whole if f.type == "delivery.admitted")
        assert admitted[first.delivery_id] == 1
        assert [f.data["parts"] for f in whole if f.type == "delivery.consumed"][-1] == [
            {"kind": "text", "text": "the catalogue as json"}
        ]
        other = await session.send("the catalogue as json", idempotency_key="webhook:evt_2")
        assert other.delivery_id != first.delivery_id


async def test_a_structured_result_is_the_delivery_s_data(hitl_agent: Agent) -> None:
    schema = {"type": "object", "required": ["templates"]}
    async with serve(hitl_runtime(hitl_agent)) as served, Eve1Client(served.base, token=ALICE) as client:
        session, delivery = await client.create_session("the catalogue as json", output_schema=schema)
        done = await delivery.result(timeout_s=10)
        follow_up = await (await session.send("the catalogue as json again", output_schema=schema)).result(timeout_s=10)
    assert done.status == "completed"
    assert done.data == {"templates": ["tpl_blue", "tpl_red", "tpl_green"], "sawClientContext": False}
    assert follow_up.data == done.data
