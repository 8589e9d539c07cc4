"""Named tokens (`EVE_API_TOKEN=alice=tok-1,bob=tok-2`): an answer over HTTP records the caller's name."""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from eve_py.agent import Agent
from eve_py.errors import UsageError
from eve_py.server import create_app
from eve_py.server._auth import principal_for, tokens_from_env
from tests.server.helpers import hitl_runtime, read_stream, serve

pytestmark = pytest.mark.anyio

ALICE_TOKEN = "tok-alice-5b1e"
BARE_TOKEN = "tok-bare-91c0"


async def answer_the_echo(client: httpx.AsyncClient) -> list[dict[str, Any]]:
    created = await client.post("/session", json={"message": "run the guarded echo"})
    session_id = created.json()["sessionId"]
    events = await read_stream(client, session_id, created.json()["startIndex"])
    [request] = [e for e in events if e["type"] == "input.requested"][0]["data"]["requests"]
    answer = {"requestId": request["requestId"], "optionId": "approve"}
    accepted = await client.post(f"/session/{session_id}", json={"inputResponses": [answer]})
    assert accepted.status_code == 202, accepted.text
    events = await read_stream(client, session_id, accepted.json()["startIndex"])
    resolved = [e for e in events if e["type"] == "input.resolved"]
    return [resolution for event in resolved for resolution in event["data"]["resolutions"]]


async def test_a_named_tokens_answer_is_recorded_with_its_name_and_a_bare_one_with_its_principal(
    hitl_agent: Agent,
) -> None:
    tokens = [f"alice={ALICE_TOKEN}", BARE_TOKEN]
    async with serve(hitl_runtime(hitl_agent), tokens=tokens) as served:
        async with served.client(ALICE_TOKEN) as alice:
            by_alice = await answer_the_echo(alice)
        async with served.client(BARE_TOKEN) as bare:
            by_bare = await answer_the_echo(bare)
        async with served.client(f"alice={ALICE_TOKEN}") as whole_entry:
            refused = await whole_entry.post("/session")

    assert [r["answeredBy"] for r in by_alice] == ["alice"]
    assert [r["answeredBy"] for r in by_bare] == [principal_for(BARE_TOKEN)]
    assert refused.status_code == 401, "the name is not part of the token"


def test_the_environment_names_tokens_and_keeps_base64_padding_as_part_of_a_bare_token() -> None:
    assert tokens_from_env({"EVE_API_TOKEN": "alice=tok-1, bob=tok-2,c2VjcmV0=="}) == [
        "alice=tok-1",
        "bob=tok-2",
        "c2VjcmV0==",
    ]


@pytest.mark.parametrize(
    ("tokens", "problem"),
    [
        (["alice=tok-1", "alice=tok-2"], "token name 'alice' is given twice"),
        (["link=tok-1"], "token name 'link' is reserved"),
        (["local=tok-1"], "token name 'local' is reserved"),
    ],
)
def test_a_name_given_twice_or_reserved_is_refused_at_startup(
    hitl_agent: Agent, tokens: list[str], problem: str
) -> None:
    with pytest.raises(UsageError, match=problem):
        create_app(hitl_runtime(hitl_agent), tokens=tokens)
