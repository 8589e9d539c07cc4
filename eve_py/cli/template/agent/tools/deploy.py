"""An approval-gated tool: every call parks until a person approves or denies it.

Approved, the executor runs and its output is the result; denied, the model gets one error
result ("Tool execution was denied." and the person's reason) and nothing runs.
"""

from eve_py import ToolContext, define_tool
from eve_py.approval import always

ENVIRONMENTS = ("staging", "production")


def deploy(environment: str, ctx: ToolContext) -> dict[str, str]:
    """Deploy the app to an environment."""
    if environment not in ENVIRONMENTS:
        raise ValueError(f"unknown environment {environment!r}; expected one of {', '.join(ENVIRONMENTS)}")
    # A real app would start the deploy here; ctx.call_id identifies this call in logs.
    return {"deployed": environment, "callId": ctx.call_id}


tool = define_tool(
    description="Deploy the app to an environment (staging or production). A person approves every deploy.",
    execute=deploy,
    approval=always(),
)
