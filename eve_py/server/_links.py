"""Answer links over HTTP: the owner makes a signed link; whoever holds it answers that one request, without a token.

```
POST /eve/v1/session/{id}/links {requestId, expiresAfter?}  (owner only)
                                  -> 201 {ok, token, url, expiresAt}
GET  /eve/v1/answer/{token}       Accept: application/json -> 200 {ok, sessionId, request, expiresAt}
                                  otherwise                -> the answer page (the chat's own card for it)
POST /eve/v1/answer/{token} {requestId?, optionId?, text?, value?, action?, editedInput?}
                                  -> 202 {ok, sessionId, status: "accepted", startIndex, turnId, resolution}
```

A link grants its one request and nothing else: the answer routes need no API token, read no
other request, and never the session's state, messages or stream. A changed token is a 403
`link_invalid`, an expired one a 410 `link_expired`, a second answer a 409
`request_already_answered`, an answer that does not fit the request a 422, as on the session
routes. The answer runs as a session route's answers do: an `Answer` (`by="link"`) through
`TurnRunner.start`. Tokens are signed and checked in `eve_py.harness._links`.
"""

from __future__ import annotations

import logging
import re
from pathlib import Path
from typing import Any

from pydantic import Field
from starlette.requests import Request
from starlette.responses import FileResponse, JSONResponse, Response

from eve_py._camel import CamelModel
from eve_py.errors import EveError
from eve_py.harness._links import ANSWERED_BY_LINK, open_link
from eve_py.parking._links import link_response
from eve_py.protocol import InputResolved, TurnStarted
from eve_py.protocol.requests import InputResponse
from eve_py.server._bodies import bad_request, error_response, error_status, json_errors, parse_body
from eve_py.server._operations import Answer
from eve_py.server._routes import Api

__all__ = ("AnswerLinks", "AnswerTokenFilter", "LinkBody", "hide_answer_tokens")

_PAGE = Path(__file__).resolve().parent / "static" / "answer.html"

_PRIVATE = {"cache-control": "no-store", "referrer-policy": "no-referrer", "x-robots-tag": "noindex"}
"""A link's token is its holder's key: never cached, never sent on as a referrer, never indexed."""


_TOKEN_IN_PATH = re.compile(r"(/answer/)[^/?#\s\"]+")

HIDDEN_TOKEN = "[token]"
"""What an answer link's token is written as in a log line."""


class AnswerTokenFilter(logging.Filter):
    """Writes `/answer/{token}` as `/answer/[token]` in every log record it sees.

    A link's token is its holder's key to one request, valid for days: an access log that kept it
    would hand that key to whoever reads the logs. Applied to uvicorn's access logger by
    `create_app` (see `hide_answer_tokens`).
    """

    def filter(self, record: logging.LogRecord) -> bool:
        if isinstance(record.args, tuple):
            record.args = tuple(_hidden(arg) if isinstance(arg, str) else arg for arg in record.args)
        if isinstance(record.msg, str):
            record.msg = _hidden(record.msg)
        return True


def _hidden(text: str) -> str:
    return _TOKEN_IN_PATH.sub(rf"\g<1>{HIDDEN_TOKEN}", text) if "/answer/" in text else text


def hide_answer_tokens(logger: str = "uvicorn.access") -> None:
    """Add an `AnswerTokenFilter` to `logger` (once; logging's configuration keeps a logger's filters)."""
    target = logging.getLogger(logger)
    if not any(isinstance(existing, AnswerTokenFilter) for existing in target.filters):
        target.addFilter(AnswerTokenFilter())


class LinkBody(CamelModel):
    """`POST /session/{id}/links`: the open request to link to, and for how long (seconds)."""

    request_id: str = Field(min_length=1)
    expires_after: float | None = Field(default=None, gt=0, allow_inf_nan=False)


class AnswerLinks:
    """The answer-link routes of one app.

    Args:
        api: The app's session routes (their runtime, caller checks and runner).
        page: Serve the answer page to browsers (the chat's static files are mounted); else JSON only.
    """

    def __init__(self, api: Api, *, page: bool) -> None:
        self.api = api
        self.page = page

    @json_errors
    async def create(self, request: Request) -> Response:
        """`POST /session/{id}/links`: a signed link to one open request of the caller's session."""
        session_id = await self.api._owned(request)
        body = parse_body(LinkBody, await self.api._body(request))
        session = await self.api.runtime.get_session(session_id)
        base_url = str(request.base_url).rstrip("/")
        link = await session.answer_link(body.request_id, expires_after=body.expires_after, base_url=base_url)
        payload = {"ok": True, "token": link.token, "url": link.url, "expiresAt": link.expires_at}
        return JSONResponse(payload, status_code=201, headers=_PRIVATE)

    async def show(self, request: Request) -> Response:
        """`GET /answer/{token}`: the linked request as JSON, or the page that asks it (no API token)."""
        token = str(request.path_params["token"])
        wants_json = "application/json" in request.headers.get("accept", "").lower()
        try:
            claims, linked = await open_link(self.api.runtime, token)
        except EveError as exc:
            if wants_json or not self.page:
                return error_response(exc, _PRIVATE)
            return FileResponse(_PAGE, status_code=error_status(exc)[0], headers=_PRIVATE)  # it says why
        if wants_json or not self.page:
            payload = {"ok": True, "sessionId": claims.session_id, "request": linked.to_wire()}
            return JSONResponse(payload | {"expiresAt": claims.expires_at}, headers=_PRIVATE)
        return FileResponse(_PAGE, headers=_PRIVATE)

    @json_errors
    async def answer(self, request: Request) -> Response:
        """`POST /answer/{token}`: one answer to the linked request (its `requestId` may be left out)."""
        claims, _ = await open_link(self.api.runtime, str(request.path_params["token"]))
        raw: Any = await self.api._body(request)
        if not isinstance(raw, dict):
            raise bad_request('Expected one input response, a JSON object such as {"optionId": "approve"}.')
        response = parse_body(InputResponse, link_response(claims, raw))
        session = await self.api.runtime.get_session(claims.session_id)
        started = await self.api.runner.start(session, Answer([response], None, None, ANSWERED_BY_LINK))
        payload: dict[str, Any] = {"ok": True, "sessionId": claims.session_id, "status": "accepted"}
        if started.start_index is not None:
            payload["startIndex"] = started.start_index
        for event in started.events:
            if isinstance(event, InputResolved | TurnStarted):
                payload.setdefault("turnId", event.data.turn_id)
            if isinstance(event, InputResolved):
                for resolution in event.data.resolutions:
                    if resolution.request_id == claims.request_id:
                        payload["resolution"] = resolution.to_wire()
        return JSONResponse(payload, status_code=202, headers=_PRIVATE)
