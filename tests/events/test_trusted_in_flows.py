"""Every model the engine builds with `CamelModel.trusted` is the model validation would build.

The fixture app's flows (questions, a batch of two, a second park in one turn, approvals, an
editable approval, a tool that runs at once) run with `trusted` checked at every call: the
model it returns must equal the validated one, dump to the same JSON bytes, and have the same
fields set. So skipping validation changes no stored or streamed byte.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from typing import Any

import pytest

from eve_py import InputResponse, Runtime, load_agent
from eve_py._camel import CamelModel
from eve_py.agent import load_mock_model
from eve_py.protocol import InputRequest
from eve_py.sessions import MemorySessionStore
from tests.conftest import HITL_APP

pytestmark = pytest.mark.anyio

_TRUSTED = CamelModel.__dict__["trusted"].__func__


def _json(model: CamelModel) -> bytes:
    return model.__pydantic_serializer__.to_json(model, by_alias=True, exclude_none=True)


@pytest.fixture
def checked(monkeypatch: pytest.MonkeyPatch) -> Iterator[Counter[str]]:
    """`trusted` compared with validation at every call; counts the calls by class."""
    built: Counter[str] = Counter()

    def trusted(cls: type[CamelModel], /, **values: Any) -> CamelModel:
        made: CamelModel = _TRUSTED(cls, **values)
        validated = cls(**values)
        assert made == validated, cls.__name__
        assert _json(made) == _json(validated), cls.__name__
        assert made.model_fields_set == validated.model_fields_set, cls.__name__
        built[cls.__name__] += 1
        return made

    monkeypatch.setattr(CamelModel, "trusted", classmethod(trusted))
    yield built


def _answer(request: InputRequest) -> InputResponse:
    """A fitting answer: approve an approval, pick the first option, else a short text."""
    if request.kind == "tool-approval":
        return InputResponse(request_id=request.request_id, option_id="approve")
    if request.options:
        return InputResponse(request_id=request.request_id, value={"pickedIds": [request.options[0].id]})
    return InputResponse(request_id=request.request_id, text="yes")


FLOWS = [
    "help me pick a template",
    "set up a palette",
    "compare two layouts",
    "run the guarded echo",
    "send the newsletter",
    "review my page",
]


async def test_the_fixture_flows_build_with_trusted_what_validation_builds(checked: Counter[str]) -> None:
    runtime = Runtime(load_agent(HITL_APP), model=load_mock_model(HITL_APP), store=MemorySessionStore())
    for text in FLOWS:
        session = await runtime.create_session()
        result = await session.send(text)
        while result.status == "waiting":
            result = await session.respond([_answer(r) for r in result.input_requests])
        assert result.status == "completed", (text, result.error)
    expected = {"InputRequest", "InputOption", "EveInputRequest", "RequestExtension", "PendingStep", "ToolCallAction"}
    assert expected <= checked.keys(), checked
