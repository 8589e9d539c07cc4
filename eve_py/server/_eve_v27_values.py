"""eve 1.0's value shapes (stream version 27) made from eve-py's stored ones: pure functions.

The ids eve-py's v27 stream gives to what its stored events do not name (the delivery of an
answer, of a control), and the payload pieces `eve_py.server._eve_v27.V27Lines` puts in its
facts: an input request as an `InteractionRequest`, a message's parts, an error's `ErrorInfo`,
usage, a tool call's `capability`. Each follows the same mapping in eve 1.0.1's reader of
version-26 history (`dist/src/execution/v26-history.js`, `dist/src/protocol/v26-interactions.js`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

__all__ = (
    "INTERACTION_OUTCOMES",
    "Fact",
    "Json",
    "answer_delivery_id",
    "cancel_delivery_id",
    "capability_of",
    "control_delivery_id",
    "error_info",
    "interaction_request",
    "position_record",
    "text_of",
    "usage_of",
    "user_parts",
)

Fact = dict[str, Any]
Json = dict[str, Any]

INTERACTION_OUTCOMES = {"answered": "accepted", "approved": "accepted", "denied": "declined", "invalid": "invalid"}
"""An `input.resolved` resolution's outcome as eve 1.0's `interaction.settled` outcome (else `withdrawn`)."""
_DISPLAYS = frozenset(("confirmation", "select", "text"))
_STYLES = frozenset(("primary", "danger", "default"))


def answer_delivery_id(event_id: str) -> str:
    """The delivery id of the answers an `input.resolved` event (of stored id `event_id`) recorded."""
    return "dlv_" + event_id.removeprefix("evt_")


def control_delivery_id(event_id: str) -> str:
    """The delivery id of the control (clear, end) whose effect is the stored event `event_id`."""
    return "dlv_ctl_" + event_id.removeprefix("evt_")


def cancel_delivery_id(turn_id: str) -> str:
    """The delivery id of the cancel that ends turn `turn_id`.

    Named by the turn, not by the `turn.cancelled` event: a cancel's `202` comes before the turn
    stopped (it may stop in another worker), and a second cancel of the same turn changes nothing.
    """
    return "dlv_cancel_" + turn_id.removeprefix("turn_")


def position_record(next_line: int) -> Json:
    """eve's transport record for lines a read skips or that hold nothing: the next line's position."""
    return {"$eve": "position", "next": next_line}


def text_of(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def error_info(data: Mapping[str, Any]) -> Json:
    error = data.get("error") if isinstance(data.get("error"), dict) else data
    assert isinstance(error, dict)
    info: Json = {
        "code": text_of(error.get("code")) or "unknown",
        "message": text_of(error.get("message")) or "Unknown error.",
    }
    if (name := text_of(error.get("name"))) is not None:
        info["name"] = name
    return info


def usage_of(raw: Mapping[str, Any]) -> Json:
    def count(key: str) -> int:
        value = raw.get(key)
        return value if isinstance(value, int) and value >= 0 else 0

    usage: Json = {key: count(key) for key in ("inputTokens", "outputTokens", "cacheReadTokens", "cacheWriteTokens")}
    cost = raw.get("costUsd")
    if isinstance(cost, (int, float)) and cost >= 0:
        usage["costUsd"] = cost
    return usage


def interaction_request(request: Mapping[str, Any]) -> Json:
    """An eve-py input request as eve 1.0's `InteractionRequest` (its common fields)."""
    kind = request.get("kind")
    rendered: Json = {
        "kind": "approval" if kind == "tool-approval" else "budget" if kind == "session-limit" else "question",
        "prompt": text_of(request.get("prompt")) or "",
    }
    options = request.get("options")
    if isinstance(options, list):
        rendered["options"] = [
            {
                "id": option["id"],
                "label": option["label"],
                **({"description": option["description"]} if isinstance(option.get("description"), str) else {}),
                **({"style": option["style"]} if option.get("style") in _STYLES else {}),
            }
            for option in options
            if isinstance(option, dict) and isinstance(option.get("id"), str) and isinstance(option.get("label"), str)
        ]
    if isinstance(request.get("allowFreeform"), bool):
        rendered["allowFreeform"] = request["allowFreeform"]
    if request.get("display") in _DISPLAYS:
        rendered["display"] = request["display"]
    return rendered


def user_parts(data: Mapping[str, Any]) -> list[Json]:
    parts = data.get("parts")
    if not isinstance(parts, list):
        message = data.get("message")
        return [{"kind": "text", "text": message}] if isinstance(message, str) else []
    rendered: list[Json] = []
    for part in parts:
        if not isinstance(part, dict):
            continue
        if part.get("type") == "text" and isinstance(part.get("text"), str):
            rendered.append({"kind": "text", "text": part["text"]})
        elif part.get("type") == "file" and isinstance(part.get("mediaType"), str):
            file: Json = {"kind": "file", "mediaType": part["mediaType"]}
            for key in ("filename", "url"):
                if isinstance(part.get(key), str):
                    file[key] = part[key]
            if isinstance(part.get("size"), int):
                file["size"] = part["size"]
            if "url" not in file:
                file["unavailable"] = True
            rendered.append(file)
    return rendered


def capability_of(action: Mapping[str, Any], label: str | None) -> Json:
    name = text_of(action.get("toolName")) or text_of(action.get("name")) or "tool"
    capability: Json = {"kind": "control" if name.startswith("eve__task_") else "tool", "name": name}
    if label is not None:
        capability["label"] = label
    return capability
