"""The runtime normalizer: `resolve_tool` turns an authored `ToolDefinition` into a `ResolvedTool`.

It re-checks every tool when an app loads, independently of the compiler, because a
definition can be rebuilt (`dataclasses.replace`) or built by hand after compile time. A
client-resolved tool never gets an executor attached.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass

from eve_py._context import ApprovalContext
from eve_py._json import JsonSchema, JsonValue
from eve_py.authoring import ToolDefinition
from eve_py.authoring._approval import ApprovalDecision, ApprovalPolicy, asks_never, decide_approval
from eve_py.authoring._signature import ExecutorPlan, plan_executor
from eve_py.errors import ToolDefinitionError, ToolResolutionError
from eve_py.models import ToolSpec

__all__ = ("ResolvedTool", "field_problems", "resolve_tool", "tool_name_from_path")


@dataclass(frozen=True, kw_only=True)
class ResolvedTool:
    """A tool ready to be offered to a model and run (or parked)."""

    name: str
    """The tool's name as the model sees it."""
    description: str
    input_schema: JsonSchema
    output_schema: JsonSchema | None
    client_resolved: bool
    """True: calls park as input requests and the answer is the result."""
    needs_approval: ApprovalPolicy
    to_model_output: Callable[[JsonValue], JsonValue] | None
    path: str
    """Source path relative to `agent/`, or an `eve:` id for framework tools."""
    plan: ExecutorPlan | None
    """How to call the executor; None for client-resolved tools."""
    editable: bool = False
    """Whether a person approving a call may change its input."""
    expires_after_s: float | None = None
    """How long a call's request waits for its answer, in seconds; None: the agent's default."""
    approvers: tuple[str, ...] | Callable[[ApprovalContext, str], bool] | None = None
    """Who may answer a call's approval; None: whoever may answer the session."""
    approvals_required: int = 1
    """How many distinct approvers must approve a call before it runs."""

    def may_approve(self, ctx: ApprovalContext, principal: str) -> bool:
        """Whether `principal` may answer this call's approval (a callable policy must be sync)."""
        policy = self.approvers
        if policy is None:
            return True
        if callable(policy):
            return bool(policy(ctx, principal))
        return principal in policy

    @functools.cached_property
    def spec(self) -> ToolSpec:
        """The tool as the model sees it (made once: every model step sends it)."""
        return ToolSpec(name=self.name, description=self.description, input_schema=self.input_schema)

    async def approval(self, ctx: ApprovalContext) -> ApprovalDecision:
        """Evaluate the approval policy for one call (a callable policy may be async).

        Raises:
            Exception: What the policy raised, or `TypeError` for a status it may not return.
        """
        return await decide_approval(self.needs_approval, ctx)


def tool_name_from_path(path: str) -> str:
    """`tools/billing/refund.py` (or `billing/refund.py`) → `billing-refund`."""
    relative = path.removeprefix("tools/")
    return relative.removesuffix(".py").replace("/", "-")


def field_problems(definition: ToolDefinition) -> list[str]:
    """Fields of the wrong type, which only a definition rebuilt with `dataclasses.replace` can have."""
    problems = []
    description: object = definition.description
    needs_approval: object = definition.needs_approval
    to_model_output: object = definition.to_model_output
    editable: object = definition.editable
    expires: object = definition.expires_after_s
    if not isinstance(description, str) or not description.strip():
        problems.append("Its description must be a non-empty string.")
    if not isinstance(needs_approval, bool) and not callable(needs_approval):
        problems.append(
            "Its approval must be never(), always(), once(), a bool, or a callable taking an ApprovalContext."
        )
    if to_model_output is not None and not callable(to_model_output):
        problems.append("Its to_model_output must be callable.")
    if not isinstance(editable, bool):
        problems.append("Its editable must be a bool.")
    elif editable and asks_never(needs_approval):
        problems.append("It is editable but needs no approval: nobody would be asked to edit it.")
    if expires is not None and (isinstance(expires, bool) or not isinstance(expires, int | float) or expires <= 0):
        problems.append("Its expires_after_s must be a positive number of seconds.")
    return problems


def _shape_message(path: str) -> str:
    return f'Expected the tool export "tool" from "{path}" to match the public eve shape.'


def resolve_tool(definition: object, *, path: str, name: str | None = None) -> ResolvedTool:
    """Check one authored tool again and prepare it for the runtime.

    Args:
        definition: The value a tool file exported as `tool`.
        path: The tool file's path relative to `agent/` (e.g. `tools/note.py`).
        name: The tool's name; derived from `path` when omitted.

    Raises:
        ToolResolutionError: The definition is not a `ToolDefinition`, is client-resolved
            and has an executor, or is not client-resolved and has none.
    """
    if not isinstance(definition, ToolDefinition):
        raise ToolResolutionError(_shape_message(path), path=path)
    tool_name = name or tool_name_from_path(path)
    problems = field_problems(definition)
    if problems:
        raise ToolResolutionError(f"{_shape_message(path)} {' '.join(problems)}", path=path)
    if definition.client_resolved:
        if definition.execute is not None:
            raise ToolResolutionError(
                f'Expected the tool export "tool" from "{path}" not to define an "execute" function '
                "when it is client-resolved.",
                path=path,
            )
        if not asks_never(definition.needs_approval):
            raise ToolResolutionError(
                f'Expected the tool export "tool" from "{path}" not to need approval when it is client-resolved: '
                "the person's answer is the result, there is nothing to approve.",
                path=path,
            )
        plan = None
    else:
        if not callable(definition.execute):
            raise ToolResolutionError(
                f'Expected the tool export "tool" from "{path}" to provide an execute function.', path=path
            )
        plan = definition.plan
        if plan is None or plan.fn is not definition.execute:
            try:
                plan = plan_executor(definition.execute, tool=tool_name)
            except ToolDefinitionError as exc:
                raise ToolResolutionError(
                    f'Failed to attach the tool execute function from "{path}": {exc}', path=path
                ) from exc
    return ResolvedTool(
        name=tool_name,
        description=definition.description,
        input_schema=definition.input_schema,
        output_schema=definition.output_schema,
        client_resolved=definition.client_resolved,
        needs_approval=definition.needs_approval,
        to_model_output=definition.to_model_output,
        path=path,
        plan=plan,
        editable=definition.editable,
        expires_after_s=definition.expires_after_s,
        approvers=definition.approvers,
        approvals_required=definition.approvals_required,
    )
