"""The session stream as eve 1.0 reads it (stream version 27): eve-py's stored events as commit lines.

eve-py's store keeps one vocabulary (`eve_py.protocol.events`, the events of eve 0.80.1's
version-26 stream plus eve-py's own); eve 1.0's stream, like AG-UI's and the AI SDK's, is a
rendering of it. `V27Lines` reads a session's stored events in order, from the first, and turns
each into one version-27 line: a commit `{"at": ..., "facts": [...]}` holding every fact that
event's state change produced, or, for an event that changes nothing eve 1.0 records (a
`session.waiting`, a text delta's stored copy), a progress record or the transport record
`{"$eve": "position", "next": N}`. So line N of the v27 stream is stored event N, and a
`startIndex` means the same on both wires.

The mapping follows eve 1.0.1's own reader of version-26 history (`dist/src/execution/
v26-history.js`, which eve's server runs for sessions an older eve started, and against which
`tests/eve1_client` checks this module line by line), with the closing cascade eve's session
machine adds (`dist/src/harness/session-machine/cascade.js`: a settling turn first settles the
model runs, calls and interactions still open under it, then the deliveries it consumed), and
with what eve-py knows that an old history does not:

- an answer is a delivery of its own (`answer_delivery_id`, the id the answer's `202` names),
  admitted, consumed by the turn it resumes, and settled when that turn pauses or settles;
- a control is a delivery too (`control_delivery_id`): the cancel that ended a turn, the clear,
  the end, each admitted with `source: {control}` and settled `applied`;
- a text delta's stored copy (`message.appended`) is a `content.delta` progress record.

Every fact carries the `scope` eve 1.0's publisher stamps (the turn, the model run). The state
kept is the few tables the mapping reads (open turns, runs, calls, interactions, deliveries), so
rendering a line costs a dictionary lookup or two.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import Any

import pydantic_core

from eve_py.protocol import Event
from eve_py.server._eve_v27_values import (
    INTERACTION_OUTCOMES,
    Fact,
    Json,
    answer_delivery_id,
    cancel_delivery_id,
    capability_of,
    control_delivery_id,
    error_info,
    interaction_request,
    position_record,
    text_of,
    usage_of,
    user_parts,
)
from eve_py.server._stream import Encoding

__all__ = ("STREAM_VERSION_27", "V27Encoding", "V27Lines", "stored_json")

STREAM_VERSION_27 = "27"
"""The `x-eve-stream-version` eve 1.0 reads (and the only one it reads)."""


class V27Lines:
    """Renders one session's stored events, in order from the first, as eve 1.0's stream lines.

    Feed every stored event to `line` in order (a reader that starts later feeds the earlier ones
    too, and drops their lines). The state is the
    open rows of eve 1.0's session view that the mapping needs; nothing here does I/O.
    """

    def __init__(self) -> None:
        self.position = 0
        """The number of events read: the position of the next line."""
        self._introduced: set[str] = set()
        self._turns: dict[str, str] = {}  # turnId -> running | settled
        self._turn_id: str | None = None
        self._follows: str | None = None
        self._reply: list[str] = []
        self._runs: dict[str, str] = {}  # "turnId:stepIndex" -> runId
        self._open_runs: dict[str, str] = {}  # runId -> turnId
        self._parts: dict[str, int] = {}
        self._calls: dict[str, Json] = {}  # callId -> {status, runId, turnId}
        self._interactions: dict[str, Json] = {}  # interactionId -> {status, turnId, callId?}
        self._approved: dict[str, str] = {}  # callId -> the interaction that cleared it
        self._deliveries: dict[str, Json] = {}  # deliveryId -> {status, turnId?}

    def line(self, event: Mapping[str, Any]) -> Json:
        """The v27 line of the next stored event (`{type, data, meta}` as stored, camelCase).

        Returns:
            A commit `{"at", "facts"}`, a progress record `{"progress"}`, or, for an event eve 1.0
            has no fact for, `position_record` of the line after it.
        """
        self.position += 1
        kind = event.get("type")
        data = event.get("data") or {}
        meta = event.get("meta") or {}
        if kind == "message.appended":
            return self._delta(data)
        facts = self._facts(str(kind), data, meta)
        if not facts:
            return position_record(self.position)
        return {"at": meta.get("at") or "1970-01-01T00:00:00.000Z", "facts": facts}

    def lines(self, events: Iterable[Mapping[str, Any]]) -> list[Json]:
        """`line` of each event in turn."""
        return [self.line(event) for event in events]

    # --- one stored event -----------------------------------------------------------------------

    def _facts(self, kind: str, data: Mapping[str, Any], meta: Mapping[str, Any]) -> list[Fact]:
        event_id = text_of(meta.get("id")) or f"evt_{self.position}"
        delivery_ids = [d for d in meta.get("deliveryIds") or () if isinstance(d, str)]
        match kind:
            case "session.started":
                started: Json = {}
                if isinstance(data.get("runtime"), dict) and isinstance(data["runtime"].get("agentId"), str):
                    started["runtime"] = data["runtime"]
                return [{"type": "session.started", "data": started}]
            case "turn.started":
                return self._start_turn(text_of(data.get("turnId")), delivery_ids)
            case "message.received":
                return self._received(data, delivery_ids)
            case "step.started":
                return self._step_started(data)
            case "reasoning.completed":
                return self._content(data, "reasoning", "narration", text_of(data.get("reasoning")))
            case "message.completed":
                phase = "narration" if data.get("finishReason") == "tool-calls" else "reply"
                return self._content(data, "text", phase, text_of(data.get("message")))
            case "result.completed":
                return self._content(data, "result", "reply", data.get("result"))
            case "step.completed":
                return self._step_settled(data, "completed")
            case "step.failed":
                return self._step_settled(data, "failed")
            case "actions.requested":
                return self._actions_requested(data)
            case "action.result":
                return self._action_result(data)
            case "input.requested":
                return self._input_requested(data)
            case "turn.waiting":
                return self._turn_waiting(data)
            case "input.resolved":
                return self._input_resolved(data, text_of(data.get("deliveryId")) or answer_delivery_id(event_id))
            case "turn.completed":
                return self._end_turn(text_of(data.get("turnId")), "completed")
            case "turn.failed":
                return self._end_turn(text_of(data.get("turnId")), "failed", error=error_info(data))
            case "turn.cancelled":
                turn_id = text_of(data.get("turnId"))
                control = cancel_delivery_id(turn_id or "")
                return self._control(control, "cancel", self._end_turn(turn_id, "cancelled", control))
            case "delivery.ignored":
                return self._ignored(data)
            case "input.approved":
                return self._approved_short(data)
            case "context.cleared":
                return self._cleared(event_id)
            case "session.completed":
                return self._end_session({"outcome": "completed"}, control_delivery_id(event_id))
            case "session.failed":
                return self._end_session({"outcome": "failed", "error": error_info(data)}, None)
            case _:
                return []

    # --- deliveries and turns -------------------------------------------------------------------

    def _introduce(self, family: str, key: str) -> bool:
        """Whether `family:key` is new (and mark it seen)."""
        name = f"{family}:{key}"
        if name in self._introduced:
            return False
        self._introduced.add(name)
        return True

    def _admit(self, delivery_id: str, source: Json | None = None) -> list[Fact]:
        if not self._introduce("delivery", delivery_id):
            return []
        self._deliveries[delivery_id] = {"status": "admitted"}
        data: Json = {"deliveryId": delivery_id}
        if source is not None:
            data["source"] = source
        return [{"type": "delivery.admitted", "data": data}]

    def _unadmitted(self, delivery_ids: list[str], fallback: str) -> str:
        """The first of a turn's deliveries not yet admitted, or still only admitted, else `fallback`."""
        for delivery_id in delivery_ids:
            if f"delivery:{delivery_id}" not in self._introduced:
                return delivery_id
            if self._deliveries.get(delivery_id, {}).get("status") == "admitted":
                return delivery_id
        return fallback

    def _consume(self, delivery_id: str, turn_id: str, parts: list[Json]) -> Fact:
        self._deliveries[delivery_id] = {"status": "consumed", "turnId": turn_id}
        return {
            "type": "delivery.consumed",
            "scope": {"turnId": turn_id},
            "data": {"deliveryId": delivery_id, "parts": parts, "turnId": turn_id},
        }

    def _start_turn(self, turn_id: str | None, delivery_ids: list[str]) -> list[Fact]:
        if turn_id is None or not self._introduce("turn", turn_id):
            return []
        delivery_id = self._unadmitted(delivery_ids, f"dlv_turn_{turn_id.removeprefix('turn_')}")
        facts = self._admit(delivery_id)
        facts.append(
            {
                "type": "turn.started",
                "scope": {"turnId": turn_id},
                "data": {"cause": {"deliveryId": delivery_id}, "follows": self._follows, "turnId": turn_id},
            }
        )
        self._turns[turn_id] = "running"
        self._turn_id = self._follows = turn_id
        self._reply = []
        return facts

    def _received(self, data: Mapping[str, Any], delivery_ids: list[str]) -> list[Fact]:
        turn_id = text_of(data.get("turnId"))
        if turn_id is None:
            return []
        facts = self._start_turn(turn_id, delivery_ids)
        delivery_id = self._unadmitted(delivery_ids, f"dlv_msg_{self.position - 1}")
        facts += self._admit(delivery_id)
        facts.append(self._consume(delivery_id, turn_id, user_parts(data)))
        return facts

    def _turn_waiting(self, data: Mapping[str, Any]) -> list[Fact]:
        turn_id = text_of(data.get("turnId"))
        if data.get("on") != "input" or turn_id is None or self._turns.get(turn_id) != "running":
            return []
        awaiting = [{"interactionId": key} for key, row in self._interactions.items() if row["status"] == "open"]
        if not awaiting:
            return []
        facts: list[Fact] = [
            {"type": "turn.paused", "scope": {"turnId": turn_id}, "data": {"awaiting": awaiting, "turnId": turn_id}}
        ]
        return facts + self._settle_consumed(turn_id, "awaiting-input")

    def _settle_consumed(self, turn_id: str, outcome: str) -> list[Fact]:
        """`delivery.settled` with `outcome` for each delivery turn `turn_id` consumed and has not settled."""
        facts: list[Fact] = []
        for delivery_id, row in self._deliveries.items():
            if row["status"] == "consumed" and row.get("turnId") == turn_id:
                row["status"] = "settled"
                settled = {"deliveryId": delivery_id, "outcome": outcome, "turnId": turn_id}
                facts.append({"type": "delivery.settled", "data": settled})
        return facts

    def _end_turn(
        self, turn_id: str | None, outcome: str, cause: str | None = None, *, error: Json | None = None
    ) -> list[Fact]:
        """`turn.settled`, after the runs, calls and interactions still open under the turn, and
        before the settling of the deliveries it consumed (eve's cascade)."""
        if turn_id is None or self._turns.get(turn_id) != "running":
            return []
        reason = "turn-ended" if outcome == "completed" else f"turn-{outcome}"
        facts = self._close_under(turn_id, reason)
        settled: Json = {"outcome": outcome, "turnId": turn_id}
        if outcome == "completed" and self._reply:
            settled["reply"] = list(self._reply)
        if error is not None:
            settled["error"] = error
        if cause is not None:
            settled["cause"] = {"deliveryId": cause}
        facts.append({"type": "turn.settled", "scope": {"turnId": turn_id}, "data": settled})
        self._turns[turn_id] = "settled"
        self._turn_id = None
        self._reply = []
        return facts + self._settle_consumed(turn_id, "handled")

    def _close_under(self, turn_id: str, reason: str) -> list[Fact]:
        facts: list[Fact] = []
        for run_id, owner in list(self._open_runs.items()):
            if owner == turn_id:
                del self._open_runs[run_id]
                facts.append(
                    {
                        "type": "model.settled",
                        "scope": {"runId": run_id, "turnId": turn_id},
                        "data": {"outcome": "interrupted", "runId": run_id},
                    }
                )
        for call_id, row in self._calls.items():
            if row["turnId"] == turn_id and row["status"] != "settled":
                row["status"] = "settled"
                facts.append(
                    {
                        "type": "call.settled",
                        "scope": self._call_scope(row),
                        "data": {"callId": call_id, "outcome": "interrupted", "reason": reason},
                    }
                )
        for interaction_id, row in self._interactions.items():
            if row["turnId"] == turn_id and row["status"] == "open":
                row["status"] = "settled"
                facts.append(
                    {
                        "type": "interaction.settled",
                        "scope": {"turnId": turn_id},
                        "data": {"interactionId": interaction_id, "outcome": "interrupted", "reason": reason},
                    }
                )
        return facts

    def _control(self, delivery_id: str, control: str, effect: list[Fact]) -> list[Fact]:
        """A control's delivery around the facts it caused: admitted, the effect, settled `applied`."""
        if not effect:
            return []
        admitted = self._admit(delivery_id, {"control": control})
        self._deliveries[delivery_id] = {"status": "settled"}
        return [
            *admitted,
            *effect,
            {"type": "delivery.settled", "data": {"deliveryId": delivery_id, "outcome": "applied"}},
        ]

    def _approved_short(self, data: Mapping[str, Any]) -> list[Fact]:
        """An approval short of its quorum (eve-py's `input.approved`): its delivery, when it named one,
        is admitted and consumed by the turn, which settles it `awaiting-input` as it pauses again;
        the interaction stays open for the other approvers."""
        delivery_id = text_of(data.get("deliveryId"))
        turn_id = text_of(data.get("turnId"))
        if delivery_id is None or turn_id is None or self._turns.get(turn_id) != "running":
            return []
        return [*self._admit(delivery_id), self._consume(delivery_id, turn_id, [])]

    def _ignored(self, data: Mapping[str, Any]) -> list[Fact]:
        """A delivery that found nothing to act on, admitted and settled `ignored`: a cancel (a
        control's delivery), or stale answers, each a response settled `abandoned`."""
        delivery_id = text_of(data.get("deliveryId"))
        if delivery_id is None:
            return []
        control = {"control": "cancel"} if data.get("source") == "cancel" else None
        facts = self._admit(delivery_id, control)
        answers = data.get("answers")
        for index, answer in enumerate(answers if isinstance(answers, list) else []):
            interaction_id = text_of(answer.get("requestId")) if isinstance(answer, dict) else None
            if interaction_id is None or interaction_id not in self._interactions:
                continue
            response_id = _response_id(delivery_id, index)
            scope = {"turnId": self._interactions[interaction_id]["turnId"]}
            settled = {
                "outcome": "abandoned",
                "reason": text_of(data.get("reason")) or "stale",
                "responseId": response_id,
            }
            facts += [
                _submitted(delivery_id, interaction_id, response_id, _eve_answer(answer), scope),
                {"type": "response.settled", "scope": scope, "data": settled},
            ]
        self._deliveries[delivery_id] = {"status": "settled"}
        return [*facts, {"type": "delivery.settled", "data": {"deliveryId": delivery_id, "outcome": "ignored"}}]

    def _cleared(self, event_id: str) -> list[Fact]:
        change_id = "chg_" + event_id.removeprefix("evt_")
        self._follows = None
        facts = [
            {
                "type": "context.started",
                "scope": {"changeId": change_id},
                "data": {"changeId": change_id, "kind": "clear"},
            },
            {
                "type": "context.settled",
                "scope": {"changeId": change_id},
                "data": {"changeId": change_id, "kind": "clear", "outcome": "completed", "selects": None},
            },
        ]
        return self._control(control_delivery_id(event_id), "clear", facts)

    def _end_session(self, ended: Json, cause: str | None) -> list[Fact]:
        if not self._introduce("session-ended", ""):
            return []
        facts: list[Fact] = []
        for turn_id, status in self._turns.items():
            if status == "running":
                facts += self._close_under(turn_id, "session-ended")
                facts.append(
                    {
                        "type": "turn.settled",
                        "scope": {"turnId": turn_id},
                        "data": {"outcome": "cancelled", "turnId": turn_id},
                    }
                )
                self._turns[turn_id] = "settled"
        for delivery_id, row in self._deliveries.items():
            if row["status"] != "settled" and delivery_id != cause:
                row["status"] = "settled"
                facts.append(
                    {
                        "type": "delivery.settled",
                        "data": {"deliveryId": delivery_id, "outcome": "failed", "reason": "session-ended"},
                    }
                )
        if cause is not None:
            # The end's own delivery: admitted first, and settled, like every other, before the session ends.
            facts = self._admit(cause, {"control": "end"}) + facts
            facts.append({"type": "delivery.settled", "data": {"deliveryId": cause, "outcome": "applied"}})
            self._deliveries[cause] = {"status": "settled"}
            ended = {**ended, "cause": {"deliveryId": cause}}
        facts.append({"type": "session.ended", "data": ended})
        return facts

    # --- model runs and content -----------------------------------------------------------------

    def _run_of(self, data: Mapping[str, Any]) -> str | None:
        turn_id = text_of(data.get("turnId"))
        step = data.get("stepIndex")
        if turn_id is None or not isinstance(step, int):
            return None
        return self._runs.get(f"{turn_id}:{step}")

    def _step_started(self, data: Mapping[str, Any]) -> list[Fact]:
        turn_id = text_of(data.get("turnId"))
        step = data.get("stepIndex")
        if turn_id is None or self._turns.get(turn_id) != "running" or not isinstance(step, int):
            return []
        key = f"{turn_id}:{step}"
        if key in self._runs:
            return []
        run_id = self._runs[key] = f"run_{turn_id.removeprefix('turn_')}_{step}"
        self._open_runs[run_id] = turn_id
        scope = {"runId": run_id, "turnId": turn_id}
        return [
            {"type": "model.requested", "scope": scope, "data": {"owner": {"turnId": turn_id}, "runId": run_id}},
            {
                "type": "model.started",
                "scope": scope,
                "data": {"attempt": 0, "modelId": text_of(data.get("modelId")) or "unknown", "runId": run_id},
            },
        ]

    def _content(self, data: Mapping[str, Any], kind: str, phase: str, value: Any) -> list[Fact]:
        if value is None:
            return []
        if kind == "result":
            return self._result(data, value)
        facts = self._step_started(data) if self._run_of(data) is None else []
        run_id = self._run_of(data)
        if run_id is None or run_id not in self._open_runs:
            return []
        count = self._parts.get(run_id, 0)
        self._parts[run_id] = count + 1
        part_id = f"{run_id}.{count}"
        if phase == "reply":
            self._reply.append(part_id)
        facts.append(
            {
                "type": "content.completed",
                "scope": {"runId": run_id, "turnId": self._open_runs[run_id]},
                "data": {"kind": kind, "partId": part_id, "phase": phase, "runId": run_id, "value": value},
            }
        )
        return facts

    def _result(self, data: Mapping[str, Any], value: Any) -> list[Fact]:
        """The turn's structured result (`result.completed`, stored once its last step settled): a
        `content.completed` of kind `result` in the turn's scope (its model run is over), which eve's
        client reads as the delivery's `data`."""
        turn_id = text_of(data.get("turnId"))
        if turn_id is None or self._turns.get(turn_id) != "running":
            return []
        part_id = f"{turn_id}.result"
        return [
            {
                "type": "content.completed",
                "scope": {"turnId": turn_id},
                "data": {"kind": "result", "partId": part_id, "phase": "reply", "value": value},
            }
        ]

    def _delta(self, data: Mapping[str, Any]) -> Json:
        """A stored text delta as eve 1.0's `content.delta` progress record, for the part it previews."""
        run_id = self._run_of(data)
        delta = data.get("messageDelta")
        if run_id is None or run_id not in self._open_runs or not isinstance(delta, str):
            return position_record(self.position)
        part_id = f"{run_id}.{self._parts.get(run_id, 0)}"
        scope = {"runId": run_id, "turnId": self._open_runs[run_id]}
        progress: Json = {"partId": part_id, "delta": delta}
        if self._introduce("part", part_id):  # the announcing record names the part's kind
            progress["kind"] = "text"
        return {"progress": {"type": "content.delta", "scope": scope, "data": progress}}

    def _step_settled(self, data: Mapping[str, Any], outcome: str) -> list[Fact]:
        run_id = self._run_of(data)
        if run_id is None or run_id not in self._open_runs:
            return []
        turn_id = self._open_runs.pop(run_id)
        scope = {"runId": run_id, "turnId": turn_id}
        settled: Json = {"outcome": outcome, "runId": run_id}
        if isinstance(data.get("finishReason"), str):
            settled["finishReason"] = data["finishReason"]
        if outcome == "failed":
            settled["error"] = error_info(data)
        facts: list[Fact] = [{"type": "model.settled", "scope": scope, "data": settled}]
        if isinstance(data.get("usage"), dict):
            usage = {"kind": "model", "owner": {"runId": run_id}, "usage": usage_of(data["usage"])}
            facts.append({"type": "usage.recorded", "scope": scope, "data": usage})
        return facts

    # --- calls and interactions -----------------------------------------------------------------

    def _call_scope(self, row: Mapping[str, Any]) -> Json:
        scope: Json = {"turnId": row["turnId"]}
        if row.get("runId") is not None:
            scope["runId"] = row["runId"]
        return scope

    def _actions_requested(self, data: Mapping[str, Any]) -> list[Fact]:
        run_id = self._run_of(data)
        turn_id = text_of(data.get("turnId"))
        actions = data.get("actions")
        if run_id is None or turn_id is None or not isinstance(actions, list):
            return []
        presentation = data.get("presentation") if isinstance(data.get("presentation"), dict) else {}
        assert isinstance(presentation, dict)
        facts: list[Fact] = []
        for action in actions:
            call_id = text_of(action.get("callId")) if isinstance(action, dict) else None
            if call_id is None or not self._introduce("call", call_id):
                continue
            shown = presentation.get(call_id)
            label = text_of(shown.get("label")) if isinstance(shown, dict) else None
            row = self._calls[call_id] = {"status": "requested", "runId": run_id, "turnId": turn_id}
            requested: Json = {
                "callId": call_id,
                "capability": capability_of(action, label),
                "owner": {"runId": run_id},
            }
            if "input" in action:
                requested["input"] = action["input"]
            facts.append({"type": "call.requested", "scope": self._call_scope(row), "data": requested})
        return facts

    def _action_result(self, data: Mapping[str, Any]) -> list[Fact]:
        result = data.get("result") if isinstance(data.get("result"), dict) else {}
        assert isinstance(result, dict)
        call_id = text_of(result.get("callId"))
        row = self._calls.get(call_id) if call_id is not None else None
        if call_id is None or row is None or row["status"] == "settled":
            return []
        scope = self._call_scope(row)
        settled: Json = {"callId": call_id}
        if "output" in result:
            settled["output"] = result["output"]
        facts: list[Fact] = []
        if data.get("status") == "rejected":
            settled["outcome"] = "rejected"
            if (cleared := self._approved.get(call_id)) is not None:
                settled["cause"] = {"interactionId": cleared}
        else:
            if row["status"] == "requested":
                started: Json = {"callId": call_id}
                if (cleared := self._approved.get(call_id)) is not None:
                    started["clearedBy"] = {"interactionId": cleared}
                facts.append({"type": "call.started", "scope": scope, "data": started})
            settled["outcome"] = "failed" if data.get("status") == "failed" else "completed"
        if settled["outcome"] != "completed" and isinstance(data.get("error"), dict):
            settled["error"] = error_info(data["error"])
        row["status"] = "settled"
        facts.append({"type": "call.settled", "scope": scope, "data": settled})
        return facts

    def _input_requested(self, data: Mapping[str, Any]) -> list[Fact]:
        requests = data.get("requests")
        turn_id = text_of(data.get("turnId"))
        if not isinstance(requests, list) or turn_id is None:
            return []
        extensions = data.get("extensions") if isinstance(data.get("extensions"), dict) else {}
        assert isinstance(extensions, dict)
        facts: list[Fact] = []
        for request in requests:
            interaction_id = text_of(request.get("requestId")) if isinstance(request, dict) else None
            if interaction_id is None or not self._introduce("interaction", interaction_id):
                continue
            action = request.get("action") if isinstance(request.get("action"), dict) else {}
            call_id = text_of(action.get("callId"))
            call = self._calls.get(call_id) if call_id is not None else None
            row: Json = {"status": "open", "turnId": turn_id}
            subject: Json = {"turnId": turn_id}
            if call is not None and call_id is not None:
                subject = {"callId": call_id}
                if request.get("kind") == "tool-approval":
                    row["callId"] = call_id
            self._interactions[interaction_id] = row
            opened = {"interactionId": interaction_id, "request": interaction_request(request), "subject": subject}
            extension = extensions.get(interaction_id)
            if isinstance(extension, dict) or call is None:
                # eve-py's own (a schema, expiry, approvers; the call a question is about), where eve
                # 1.0's schema lets extra data through: beside its fields, never in place of one.
                opened["extensions"] = {**(extension if isinstance(extension, dict) else {}), **_asked(action)}
            facts.append({"type": "interaction.opened", "scope": {"turnId": turn_id}, "data": opened})
        return facts

    def _input_resolved(self, data: Mapping[str, Any], delivery_id: str) -> list[Fact]:
        resolutions = data.get("resolutions")
        if not isinstance(resolutions, list):
            return []
        turn_id = text_of(data.get("turnId")) or self._turn_id
        facts: list[Fact] = []
        answered = False
        for index, resolution in enumerate(resolutions):
            interaction_id = text_of(resolution.get("requestId")) if isinstance(resolution, dict) else None
            row = self._interactions.get(interaction_id) if interaction_id is not None else None
            if interaction_id is None or row is None or row["status"] != "open":
                continue
            if not isinstance(resolution.get("response"), dict):
                # Not an answer: a cancel's (left open: the turn's cancellation settles it `interrupted`,
                # as eve's cascade does), or a message's or a deadline's (withdrawn), in no delivery.
                if resolution.get("outcome") != "cancelled":
                    row["status"] = "settled"
                    withdrawn = {"interactionId": interaction_id, "outcome": "withdrawn"}
                    facts.append({"type": "interaction.settled", "scope": {"turnId": row["turnId"]}, "data": withdrawn})
                continue
            if not answered:
                facts = self._admit(delivery_id) + facts
            response = resolution["response"]
            value = _eve_answer(response)
            decided = dict(value)
            for key in ("value", "action", "editedInput"):  # eve-py's own answers, kept beside eve's
                if key in response:
                    decided[key] = response[key]
            if isinstance(resolution.get("answeredBy"), str):
                decided["answeredBy"] = resolution["answeredBy"]
            response_id = _response_id(delivery_id, index)
            scope = {"turnId": row["turnId"]}
            settled: Json = {
                "cause": {"responseId": response_id},
                "interactionId": interaction_id,
                "outcome": INTERACTION_OUTCOMES.get(str(resolution.get("outcome")), "withdrawn"),
            }
            if decided:
                settled["response"] = decided
            facts += [
                _submitted(delivery_id, interaction_id, response_id, value, scope),
                {"type": "response.admitted", "scope": scope, "data": {"responseId": response_id}},
                {"type": "response.settled", "scope": scope, "data": {"outcome": "applied", "responseId": response_id}},
                {"type": "interaction.settled", "scope": scope, "data": settled},
            ]
            row["status"] = "settled"
            answered = True
            if row.get("callId") is not None:
                self._approved[row["callId"]] = interaction_id
        if not answered:
            return facts
        if turn_id is not None and self._turns.get(turn_id) == "running":
            facts.append(self._consume(delivery_id, turn_id, []))
        return facts


def _response_id(delivery_id: str, index: int) -> str:
    """The id of the `index`-th response a delivery carries."""
    return f"rsp_{delivery_id.removeprefix('dlv_')}_{index}"


def _submitted(delivery_id: str, interaction_id: str, response_id: str, value: Json, scope: Json) -> Fact:
    """eve's `response.submitted`: a delivery's response `response_id` to an interaction."""
    data = {"deliveryId": delivery_id, "interactionId": interaction_id, "responseId": response_id, "value": value}
    return {"type": "response.submitted", "scope": scope, "data": data}


def _eve_answer(answer: Mapping[str, Any]) -> Json:
    """What eve's `response.submitted.value` holds of an answer: its `optionId` and `text`."""
    return {key: answer[key] for key in ("optionId", "text") if isinstance(answer.get(key), str)}


def _asked(action: Mapping[str, Any]) -> Json:
    """The call an interaction asks about, as eve 1.0 names a relayed one (`origin.call`)."""
    if not isinstance(action.get("callId"), str):
        return {}
    call: Json = {"callId": action["callId"], "name": text_of(action.get("toolName")) or "tool"}
    if "input" in action:
        call["input"] = action["input"]
    return {"call": call}


_HEARTBEAT = b'{"$eve":"heartbeat"}\n'
_LEASE_ENDED = b'{"$eve":"stream.lease-ended"}\n'
_STREAM_ENDED = b'{"$eve":"stream.ended"}\n'


class V27Encoding(Encoding):
    """eve 1.0's stream: `V27Lines` over the stored events, a heartbeat first and while quiet,
    `stream.lease-ended` when a read's lease ends, `stream.ended` after the session's last line.

    Args:
        lines: A renderer that has read every stored event before the response's first line.
        keep: Called with the renderer once the response ends, at the position it reached (the
            server keeps it for the session's next read from there, which then replays nothing).
    """

    opening = _HEARTBEAT
    heartbeat = _HEARTBEAT
    ended = _STREAM_ENDED

    def __init__(self, lines: V27Lines, keep: Callable[[V27Lines], None] | None = None) -> None:
        super().__init__()
        self.lease_ended = _LEASE_ENDED
        self.lines = lines
        self._keep = keep

    def finish(self) -> None:
        """Hand the renderer to `keep`."""
        if self._keep is not None:
            self._keep(self.lines)
            self._keep = None

    def encode(self, events: list[Event]) -> bytes:
        """The v27 lines of the next stored events, one per event."""
        render = self.lines.line
        return b"".join(pydantic_core.to_json(render(stored_json(event))) + b"\n" for event in events)


def stored_json(event: Event) -> dict[str, Any]:
    """An event as its stored JSON object (camelCase, unset fields left out)."""
    value: dict[str, Any] = event.__pydantic_serializer__.to_python(
        event, mode="json", by_alias=True, exclude_none=True
    )
    return value
