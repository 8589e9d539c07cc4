"""Approvals across sessions: a named approver lists the approvals waiting for it and answers them.

```
GET  /eve/v1/approvals                      -> 200 {ok, approvals: [{sessionId, requestId, toolName, input,
                                                    prompt, expiresAt?, approvals, approvalsRequired}]}
POST /eve/v1/approvals {sessionId, inputResponses: [...]}
                                            -> 202 {ok, sessionId, status: "accepted", startIndex, turnId}
```

A tool defined with `approvers=` takes its approvals from those principals (the API tokens'
names), whoever owns the session. Such an approver sees, of a session it does not own, only the
approval requests it may answer (request, tool, input, deadline, approvals so far), and may
answer only those: any other request of the batch is `403 not_an_approver`, and the session's
state, messages and stream stay its owner's. The answer runs as a session route's answers do:
an `Answer` through `TurnRunner.start`, by the caller's name (quorum, expiry and one-winner rules
included). A repeated or late answer to an approval the caller was asked for (the session's log
says so), or any answer on its own session, gets the session route's refusal (`409
request_already_answered`, `session_not_waiting`); a session holding nothing for the caller is
`404`, as if it did not exist.
"""

from __future__ import annotations

from typing import Any

from pydantic import Field
from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from eve_py._camel import CamelModel
from eve_py.errors import NotAnApproverError, SessionNotFoundError
from eve_py.harness._accept import may_approve
from eve_py.protocol import InputRequested
from eve_py.protocol.requests import InputRequest, InputResponse
from eve_py.server._bodies import json_errors, parse_body
from eve_py.server._operations import Answer
from eve_py.server._routes import Api
from eve_py.sessions import SessionRecord

__all__ = ("Approvals", "ApprovalsBody")


class ApprovalsBody(CamelModel):
    """`POST /approvals`: answers to approvals of one session."""

    session_id: str = Field(min_length=1)
    input_responses: list[InputResponse] = Field(min_length=1)


class Approvals:
    """The cross-session approval routes of one app.

    Args:
        api: The app's API (its runtime, runner and authentication).
    """

    def __init__(self, api: Api) -> None:
        self.api = api

    def _approvable(self, record: SessionRecord, name: str) -> list[InputRequest]:
        """The session's open approval requests whose tool names approvers and lets `name` approve."""
        pending = record.pending
        if record.status != "waiting" or pending is None:
            return []
        tools = self.api.runtime.agent.tools
        found = []
        for request in pending.open_requests():
            tool = tools.get(request.action.tool_name)
            if request.kind != "tool-approval" or tool is None or tool.approvers is None:
                continue
            if may_approve(tools, record, request, name) and name not in pending.approvals.get(request.request_id, []):
                found.append(request)
        return found

    async def _asked_of(self, record: SessionRecord, name: str, responses: list[InputResponse]) -> bool:
        """Whether every request `responses` name is, in the session's log, an approval `name` may give."""
        asked = {
            r.request_id: r
            for event in await self.api.runtime.store.read_events(record.id)
            if isinstance(event, InputRequested)
            for r in event.data.input_requests()
        }
        tools = self.api.runtime.agent.tools
        return all(
            (found := asked.get(response.request_id)) is not None
            and found.kind == "tool-approval"
            and (tool := tools.get(found.action.tool_name)) is not None
            and tool.approvers is not None
            and may_approve(tools, record, found, name)
            for response in responses
        )

    @json_errors
    async def list(self, request: Request) -> Response:
        """`GET /approvals`: every approval waiting for the caller, across sessions."""
        _, name = self.api._caller(request)
        entries: list[dict[str, Any]] = []
        store = self.api.runtime.store
        for session_id in await store.waiting():
            record = await store.load(session_id)
            pending = record.pending
            for waiting in self._approvable(record, name):
                assert pending is not None
                entries.append(
                    {
                        "sessionId": session_id,
                        "requestId": waiting.request_id,
                        "toolName": waiting.action.tool_name,
                        "input": waiting.action.input,
                        "prompt": waiting.prompt,
                        "expiresAt": waiting.expires_at,
                        "approvals": pending.approvals.get(waiting.request_id, []),
                        "approvalsRequired": waiting.approvals_required or 1,
                    }
                )
        return JSONResponse({"ok": True, "approvals": entries})

    @json_errors
    async def answer(self, request: Request) -> Response:
        """`POST /approvals`: answer approvals the caller may give, on a session it need not own."""
        principal, name = self.api._caller(request)
        body = parse_body(ApprovalsBody, await self.api._body(request))
        record = await self.api.runtime.store.load(body.session_id)
        allowed = {r.request_id for r in self._approvable(record, name)}
        if not allowed:
            owner = await self.api.owners.owner(body.session_id)
            if owner != principal and not await self._asked_of(record, name, body.input_responses):
                raise SessionNotFoundError(body.session_id)  # nothing here is the caller's: as if it did not exist
            # The caller's own session, or approvals it was asked for: a repeated or late answer gets
            # the session route's refusal (409 request_already_answered, session_not_waiting, ...).
            answer = Answer(body.input_responses, None, None, name)
            return JSONResponse(await self.api._start(body.session_id, answer), status_code=202)
        for response in body.input_responses:
            if response.request_id not in allowed:
                raise NotAnApproverError(
                    f"{name!r} may not answer request {response.request_id!r} of session {body.session_id!r} "
                    "here: GET /eve/v1/approvals lists the approvals waiting for you.",
                    request_id=response.request_id,
                )
        payload = await self.api._start(body.session_id, Answer(body.input_responses, None, None, name))
        return JSONResponse(payload, status_code=202)
