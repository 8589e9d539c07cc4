"""`TOOL_CALL_RESULT` for client-resolved calls: the result a person's (or a client's) answer gave the model.

An executed call's result streams from its `action.result`; a client-resolved call (a picker, a
client tool, a frontend tool) has none: its result is made when its answer settles, and
`input.resolved` carries the answer. So an AG-UI client's history gets each call's result, as a
tool message with the id `result_<callId>`, the id `MESSAGES_SNAPSHOT` gives it too.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from collections.abc import Set as AbstractSet

from ag_ui.core import BaseEvent, ToolCallResultEvent

from eve_py.parking._answers import client_result
from eve_py.protocol import InputResolved
from eve_py.protocol.requests import InputRequest

__all__ = ("answer_results",)

_CLIENT_RESOLVED = ("question", "client-tool")


def answer_results(
    event: InputResolved, requests: Mapping[str, InputRequest], skip: AbstractSet[str]
) -> list[BaseEvent]:
    """`TOOL_CALL_RESULT` for each client-resolved call `event` answers or dismisses.

    Args:
        event: The batch's `input.resolved`.
        requests: The batch's requests by id (the calls' answer schemas decide their results).
        skip: Call ids whose result the client has already (it answered them with a tool message).
    """
    made: list[BaseEvent] = []
    for resolution in event.data.resolutions:
        request = requests.get(resolution.request_id)
        if request is None or request.kind not in _CLIENT_RESOLVED or request.request_id in skip:
            continue
        if request.request_id != request.action.call_id:
            continue
        if resolution.response is None and resolution.outcome != "ignored":
            continue  # expired (its action.result streams) or withdrawn with the turn
        output = client_result(request, resolution.response)
        content = output if isinstance(output, str) else json.dumps(output, ensure_ascii=False, separators=(",", ":"))
        call_id = request.action.call_id
        made.append(ToolCallResultEvent(message_id=f"result_{call_id}", tool_call_id=call_id, content=content))
    return made
