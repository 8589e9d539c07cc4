"""The deploy flow: the typed picker parks, its answer is the result, the deploy waits for approval."""

from eve_py.evals import EvalDriver, define_eval
from eve_py.protocol import ActionResult

PROMPT = (
    "Deploy the app. Use the ask_question tool to ask me which environment, offering exactly "
    'staging (label Staging) and production (label Production), with ui set to {"kind": "environment"}. '
    "Then call the deploy tool with the environment I picked and tell me where it was deployed."
)
"""Spelled out, so that a capable real model does what the mock model does."""


async def test(t: EvalDriver) -> None:
    await t.send(PROMPT)
    [question] = t.expect_input_requests(tool_name="ask_question", display="select", kind="question", times=1)
    t.check("staging" in question.option_ids(), "the picker offers staging")

    await t.respond(question, value={"pickedIds": ["staging"]})
    [approval] = t.expect_input_requests(tool_name="deploy", display="confirmation", kind="tool-approval", times=1)
    t.check(approval.action.input == {"environment": "staging"}, "the deploy waits for approval with the pick")
    ran = [e for e in t.events if isinstance(e, ActionResult) and e.data.result.tool_name == "deploy"]
    t.check(not ran, "nothing was deployed before the approval")

    (await t.respond_all("approve")).expect_ok()

    t.completed()
    t.called_tool("ask_question", output={"pickedIds": ["staging"]}, times=1)
    t.called_tool("deploy", input={"environment": "staging"}, output={"deployed": "staging"}, times=1)
    t.single_result()
    t.message_includes("staging")


evaluation = define_eval(
    description="a picked environment is deployed only after a person approves",
    tags=("deploy",),
    timeout_s=120,
    test=test,
)
