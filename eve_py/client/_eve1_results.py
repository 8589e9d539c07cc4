"""What a delivery's facts add up to on eve 1.0's wire (eve's `turnSummary`), and the values it is told in.

A `Fact` is one fact of a stream line (`facts_of` reads a line's). `summarize` reads the facts
of one delivery, from the line that admits it to the line that settles it, into a
`DeliveryResult`: its `status` as eve's `deliveryStatus` derives it from the settlement's
`outcome` and the turn's, the turn's `reply` (its reply parts' text, joined by newlines), the
structured `data`, and the `Interaction`s still open when it settled.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from eve_py._json import JsonValue

__all__ = (
    "Answer",
    "DeliveryResult",
    "DeliveryStatus",
    "Fact",
    "Interaction",
    "InteractionOption",
    "awaited",
    "facts_of",
    "ignored_settlement",
    "interaction_of",
    "opened_in",
    "summarize",
)

DeliveryStatus = Literal["completed", "awaiting-input", "cancelled", "failed"]


@dataclass(frozen=True, kw_only=True)
class Fact:
    """One fact of the session stream (eve's `SessionStreamEvent`), with where it stands in it."""

    type: str
    """The fact's type, e.g. `delivery.admitted`, `content.completed`, `interaction.opened`, `turn.settled`."""
    data: dict[str, Any]
    """Its payload as sent (camelCase keys)."""
    scope: dict[str, Any] | None
    """What it happened under (`turnId`, `runId`, `changeId`), when the server says."""
    line: int
    """The stream line it came in: the stored event's index, what `start_index` counts."""
    index: int
    """Its place among the facts of that line, from 0."""
    at: str | None
    """The line's commit time (ISO 8601); None for a progress record (`content.delta`), which is not stored."""


@dataclass(frozen=True, kw_only=True)
class InteractionOption:
    """One choice an interaction offers."""

    id: str
    label: str
    description: str | None = None
    style: str | None = None
    """A hint: `primary`, `danger` or `default`."""


@dataclass(frozen=True, kw_only=True)
class Interaction:
    """A question or approval a person is asked (an `interaction.opened` fact); answer it with `Answer`."""

    interaction_id: str
    kind: str
    """`question` or `approval` (eve also knows `budget` and `sign-in`)."""
    prompt: str
    options: tuple[InteractionOption, ...]
    extensions: dict[str, Any]
    """eve-py's extras eve 1.0's request has no field for: the answer's JSON `schema`, `editSchema`,
    `expiresAt`, `approvers`, `approvalsRequired`, and the `call` a question asks about."""
    call: dict[str, Any] | None
    """The tool call it asks about, `{callId, name, input?}`, when it is about one (an approval)."""
    turn_id: str | None
    request: dict[str, Any]
    """eve's whole `InteractionRequest` as sent (`allowFreeform`, `display`, `title`, ...)."""


@dataclass(frozen=True, kw_only=True)
class Answer:
    """An answer to one interaction: an option, free text, or eve-py's typed `value`.

    `value` (checked against the interaction's `schema`), `action` (`accept`, `decline` or `cancel`
    a form) and `edited_input` (an approval's edit, for tools defined with `editable=True`) are
    eve-py's, sent beside eve's fields.
    """

    interaction_id: str
    option_id: str | None = None
    text: str | None = None
    value: JsonValue | None = None
    action: Literal["accept", "decline", "cancel"] | None = None
    edited_input: dict[str, JsonValue] | None = None

    def to_wire(self) -> dict[str, Any]:
        """The answer as the server reads it (camelCase, unset fields left out)."""
        fields = {
            "optionId": self.option_id,
            "text": self.text,
            "value": self.value,
            "action": self.action,
            "editedInput": self.edited_input,
        }
        return {"interactionId": self.interaction_id} | {
            key: value for key, value in fields.items() if value is not None
        }


@dataclass(frozen=True, kw_only=True)
class DeliveryResult:
    """How a delivery settled (eve's `DeliveryResult`)."""

    status: DeliveryStatus
    """`awaiting-input` (the turn paused on `interactions`), `completed`, `cancelled` or `failed`."""
    outcome: str
    """The settlement's own word: `handled`, `awaiting-input`, `applied` (a control), `ignored`, `failed`, ..."""
    reply: str | None
    """The reply's text, when the turn it handled ended with one."""
    data: JsonValue | None
    """The structured result (a turn with an `output_schema`), else None."""
    interactions: tuple[Interaction, ...]
    """The interactions open when it settled, oldest first (empty unless `awaiting-input`)."""
    delivery_id: str
    session_id: str
    session_ended: bool
    """Whether the session ended in the delivery's last line (an `end`, or a failed session)."""
    error: dict[str, Any] | None
    """With `failed`: eve's `{code, message}`; else None."""


def facts_of(record: Mapping[str, Any], line: int) -> list[Fact]:
    """The facts of a commit `{at, facts}`, or the one of a progress record `{progress}`; [] for anything else."""
    if isinstance(record.get("facts"), list):
        at, items = record.get("at"), record["facts"]
    else:
        at, items = None, [record["progress"]] if isinstance(record.get("progress"), dict) else []
    facts: list[Fact] = []
    for index, item in enumerate(items):
        if isinstance(item, dict) and isinstance(item.get("type"), str):
            data, scope = item.get("data"), item.get("scope")
            facts.append(
                Fact(
                    type=item["type"],
                    data=data if isinstance(data, dict) else {},
                    scope=scope if isinstance(scope, dict) else None,
                    line=line,
                    index=index,
                    at=at if isinstance(at, str) else None,
                )
            )
    return facts


def ignored_settlement(delivery_id: str) -> Fact:
    """The settlement eve gives a cancel that stopped nothing, which eve-py's server does not store."""
    data = {"deliveryId": delivery_id, "outcome": "ignored"}
    return Fact(type="delivery.settled", data=data, scope=None, line=-1, index=0, at=None)


def interaction_of(fact: Fact, calls: Mapping[str, dict[str, Any]]) -> Interaction:
    """The `Interaction` an `interaction.opened` fact opens; `calls` are the calls requested so far, by id."""
    data = fact.data
    request = data.get("request") if isinstance(data.get("request"), dict) else {}
    extensions = data.get("extensions") if isinstance(data.get("extensions"), dict) else {}
    subject = data.get("subject") if isinstance(data.get("subject"), dict) else {}
    assert isinstance(request, dict) and isinstance(extensions, dict) and isinstance(subject, dict)
    options = tuple(
        InteractionOption(id=o["id"], label=o["label"], description=o.get("description"), style=o.get("style"))
        for o in request.get("options") or ()
        if isinstance(o, dict) and isinstance(o.get("id"), str) and isinstance(o.get("label"), str)
    )
    call = extensions.get("call") if isinstance(extensions.get("call"), dict) else calls.get(subject.get("callId", ""))
    return Interaction(
        interaction_id=str(data.get("interactionId")),
        kind=str(request.get("kind", "question")),
        prompt=str(request.get("prompt", "")),
        options=options,
        extensions=extensions,
        call=call,
        turn_id=(fact.scope or {}).get("turnId"),
        request=request,
    )


def opened_in(facts: Iterable[Fact]) -> dict[str, Interaction]:
    """Every interaction `facts` open, by id."""
    calls: dict[str, dict[str, Any]] = {}
    opened: dict[str, Interaction] = {}
    for fact in facts:
        if fact.type == "call.requested":
            calls[str(fact.data.get("callId"))] = _call(fact.data)
        elif fact.type == "interaction.opened":
            opened[str(fact.data.get("interactionId"))] = interaction_of(fact, calls)
    return opened


def awaited(facts: Sequence[Fact]) -> list[str]:
    """The interaction ids the last `turn.paused` of `facts` waits on."""
    paused = [f for f in facts if f.type == "turn.paused"]
    awaiting = paused[-1].data.get("awaiting") if paused else None
    return [str(a["interactionId"]) for a in awaiting or () if isinstance(a, dict) and "interactionId" in a]


def summarize(
    session_id: str, delivery_id: str, facts: Sequence[Fact], earlier: Mapping[str, Interaction] | None = None
) -> DeliveryResult:
    """The `DeliveryResult` of delivery `delivery_id`, from its facts (admission to settlement).

    `earlier`: interactions opened before the delivery's facts, for a turn that pauses again on
    prompts asked before them (an answer that left part of its batch open), which eve's own summary
    leaves out.

    Raises:
        ValueError: `facts` hold no settlement of the delivery (the stream ended before it settled).
    """
    settled: dict[str, Any] | None = None
    consumed: str | None = None
    ended = False
    session_failure: dict[str, Any] | None = None
    turns: dict[str, _Turn] = {}
    parts: dict[str, tuple[str, Any]] = {}
    results: dict[str, Any] = {}
    open_ids: dict[str, None] = {}
    for fact in facts:
        data = fact.data
        if fact.type == "session.ended":
            ended = True
            if data.get("outcome") == "failed":
                session_failure = data.get("error") or {"code": "SESSION_FAILED", "message": "The session failed."}
        elif fact.type == "delivery.consumed" and data.get("deliveryId") == delivery_id:
            consumed = data.get("turnId")
        elif fact.type == "delivery.settled" and data.get("deliveryId") == delivery_id:
            settled = data
        elif fact.type == "content.completed":
            parts[str(data.get("partId"))] = (str(data.get("kind")), data.get("value"))
            if data.get("kind") == "result" and fact.scope and "turnId" in fact.scope:
                results[fact.scope["turnId"]] = data.get("value")
        elif fact.type == "interaction.opened":
            open_ids[str(data.get("interactionId"))] = None
        elif fact.type == "interaction.settled":
            open_ids.pop(str(data.get("interactionId")), None)
        elif fact.type == "turn.settled":
            turns[str(data.get("turnId"))] = _settled_turn(data, parts, results)
    if settled is None:
        raise ValueError(f"The stream ended before delivery {delivery_id!r} settled.")
    outcome = str(settled.get("outcome"))
    turn_id = settled.get("turnId") or consumed or ""
    turn = turns.get(turn_id)
    status = _status(outcome, turn.outcome if turn else None)
    handled = outcome in ("handled", "awaiting-input")
    error = None
    if status == "failed":
        refused = outcome == "refused"
        default = {
            "code": "DELIVERY_REFUSED" if refused else "DELIVERY_FAILED",
            "message": settled.get("reason") or ("The delivery was refused." if refused else "The delivery failed."),
        }
        error = (turn.failure if turn else None) or session_failure or default
    opened = {**(earlier or {}), **opened_in(facts)}
    waiting = [*open_ids, *(i for i in awaited(facts) if i not in open_ids and outcome == "awaiting-input")]
    return DeliveryResult(
        status=status,
        outcome=outcome,
        reply=turn.reply if handled and turn else None,
        data=(turn.data if turn else results.get(turn_id)) if handled else None,
        interactions=tuple(opened[i] for i in waiting if i in opened),
        delivery_id=delivery_id,
        session_id=session_id,
        session_ended=ended,
        error=error,
    )


@dataclass(frozen=True)
class _Turn:
    outcome: str
    reply: str | None
    data: Any
    failure: dict[str, Any] | None


def _settled_turn(data: Mapping[str, Any], parts: Mapping[str, tuple[str, Any]], results: Mapping[str, Any]) -> _Turn:
    """A `turn.settled`: its outcome, its reply parts' text joined by newlines, its structured result, its failure."""
    reply = [parts[p] for p in data.get("reply") or () if p in parts]
    texts = [value for kind, value in reply if kind == "text" and isinstance(value, str)]
    result = next((value for kind, value in reply if kind == "result"), results.get(str(data.get("turnId"))))
    failure = None
    if data.get("outcome") == "failed":
        failure = data.get("error") or {"code": "TURN_FAILED", "message": "The turn failed."}
    return _Turn(str(data.get("outcome")), "\n".join(texts) or None, result, failure)


def _status(outcome: str, turn_outcome: str | None) -> DeliveryStatus:
    """eve's `deliveryStatus`: a settlement's outcome (and the outcome of the turn it handled) as a status."""
    if outcome == "awaiting-input":
        return "awaiting-input"
    if outcome in ("ignored", "applied"):
        return "completed"
    if outcome == "handled":
        return "cancelled" if turn_outcome == "cancelled" else "failed" if turn_outcome == "failed" else "completed"
    return "failed"  # failed, refused, and an outcome a newer eve adds


def _call(data: Mapping[str, Any]) -> dict[str, Any]:
    capability = data.get("capability") if isinstance(data.get("capability"), dict) else {}
    assert isinstance(capability, dict)
    call: dict[str, Any] = {"callId": data.get("callId"), "name": capability.get("name")}
    if "input" in data:
        call["input"] = data["input"]
    return call
