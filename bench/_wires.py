"""What one round's frontend sends and reads on each of eve-py's eve wires, for the server benches.

A round (`server_load.py`, `server_asgi.py`): create a session with a message, read its stream
until the turn parks on the picker, answer the picker, read the stream until the turn completes.
Three wires:

- `old`: eve-py's first wire (before 8ba4647): `input.requested`, `message.completed.data.text`,
  a stream that ends with the turn;
- `v26`: eve 0.80.1's (`x-eve-stream-version: 26`), under `/v26/eve/v1` since eve-py moved to
  eve 1.0 (under `/eve/v1` in commits before that): one event per line, the turn parks at
  `turn.waiting` and ends at `session.waiting`;
- `v27`: eve 1.0.1's, on `/eve/v1`: commit lines `{at, facts}` and progress records; the turn
  parks at the `turn.paused` fact (its `interaction.opened` names the picker) and ends at
  `turn.settled`, whose reply is the `content.completed` text before it.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any, Literal

__all__ = ("ANSWER", "EXPECTED", "MESSAGE", "TurnError", "Wire", "answer_body", "asked", "boundary", "reply")

Wire = Literal["old", "v26", "v27"]

MESSAGE = "help me pick a template"
ANSWER = {"pickedIds": ["tpl_blue"]}
EXPECTED = "Recorded your pick: tpl_blue."


class TurnError(Exception):
    """A request or turn that did not go as expected."""


def _facts(lines: list[dict[str, Any]]) -> Iterator[dict[str, Any]]:
    for line in lines:
        yield from line.get("facts") or ()


def boundary(wire: Wire, line: dict[str, Any]) -> bool:
    """Whether `line` ends what a round reads of a stream: the turn parked or ended."""
    if wire == "v27":
        return any(fact.get("type") in ("turn.paused", "turn.settled") for fact in line.get("facts") or ())
    return line.get("type") in ("turn.waiting", "session.waiting")


def asked(wire: Wire, session_id: str, lines: list[dict[str, Any]]) -> str:
    """The id of the one request the parked turn waits on (an `interactionId` on v27).

    Raises:
        TurnError: The turn did not park on exactly one request.
    """
    if wire == "v27":
        opened = [f for f in _facts(lines) if f.get("type") == "interaction.opened"]
        paused = [f for f in _facts(lines) if f.get("type") == "turn.paused"]
        if len(opened) != 1 or not paused:
            raise TurnError(f"session {session_id} did not park on one interaction: {[*_facts(lines)]!r:.300}")
        interaction_id = opened[0].get("data", {}).get("interactionId")
        if not isinstance(interaction_id, str):
            raise TurnError(f"session {session_id}: unexpected interaction.opened {opened[0]!r}")
        return interaction_id
    types = [line.get("type") for line in lines]
    requested = [line for line in lines if line.get("type") == "input.requested"]
    if len(requested) != 1 or not any(t in ("turn.waiting", "session.waiting") for t in types):
        raise TurnError(f"session {session_id} did not park on one question: {types}")
    requests = requested[0].get("data", {}).get("requests") or [{}]
    request_id = requests[0].get("requestId")
    if len(requests) != 1 or not isinstance(request_id, str):
        raise TurnError(f"session {session_id}: unexpected input.requested {requested[0]!r}")
    return request_id


def answer_body(wire: Wire, request_id: str) -> dict[str, Any]:
    """The `POST /session/{id}` body that picks `tpl_blue`: eve 1.0's `answers`, or `inputResponses`."""
    if wire == "v27":
        return {"answers": [{"interactionId": request_id, "optionId": "tpl_blue"}]}
    return {"inputResponses": [{"requestId": request_id, "value": ANSWER}]}


def reply(wire: Wire, session_id: str, lines: list[dict[str, Any]]) -> str:
    """The answered turn's last text, once it completed.

    Raises:
        TurnError: The turn did not complete, or ended with another text than `EXPECTED`.
    """
    if wire == "v27":
        facts = list(_facts(lines))
        settled = [f for f in facts if f.get("type") == "turn.settled"]
        if not settled or settled[-1].get("data", {}).get("outcome") != "completed":
            raise TurnError(f"session {session_id}: the answered turn did not complete: {settled!r}")
        texts = [f["data"].get("value") for f in facts if f.get("type") == "content.completed"]
        text = texts[-1] if texts else None
    else:
        completed = [line for line in lines if line.get("type") == "turn.completed"]
        if not completed or completed[-1].get("data", {}).get("status", "completed") != "completed":
            raise TurnError(f"session {session_id}: the answered turn did not complete: {[*map(str, lines)]!r:.300}")
        said = [line.get("data", {}) for line in lines if line.get("type") == "message.completed"]
        text = said[-1].get("text" if wire == "old" else "message") if said else None
    if text != EXPECTED:
        raise TurnError(f"session {session_id}: the turn ended with {text!r}, not {EXPECTED!r}")
    return text
