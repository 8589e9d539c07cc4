"""`ToolDefinition`, the one branded tool record, and the functions that make it.

A tool file under `agent/tools/` exports `tool = define_tool(...)` (a tool the server
executes), `tool = define_client_tool(...)` (a client-resolved tool: its result comes from a
person or a client, never from server code) or `tool = disable_tool()` (removes the framework
tool of the same name).

Shapes are checked three times, on purpose: here when the definition is made, by the
compiler (`eve-py build`), and by the runtime normalizer (`resolve_tool`) when an app loads.
A definition rebuilt with `dataclasses.replace(...)` skips the first check, which is why the
other two exist.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any, TypeAlias

import jsonschema
from pydantic import BaseModel

from eve_py._context import ApprovalContext
from eve_py._json import JsonSchema, JsonValue
from eve_py.authoring._approval import ApprovalPolicy, asks_never
from eve_py.authoring._signature import ExecutorPlan, plan_executor
from eve_py.errors import ToolDefinitionError, UsageError

__all__ = (
    "ApproverPolicy",
    "DisabledTool",
    "SchemaLike",
    "ToolDefinition",
    "define_client_tool",
    "define_tool",
    "disable_tool",
    "expiry_seconds",
    "schema_from",
)

ApproverPolicy: TypeAlias = Sequence[str] | Callable[[ApprovalContext, str], bool]
"""Who may answer a call's approval: principal names (API token names), or `(ApprovalContext, principal) -> bool`."""

SchemaLike: TypeAlias = type[BaseModel] | JsonSchema
"""A pydantic model class or a JSON Schema object."""


@dataclass(frozen=True, kw_only=True)
class ToolDefinition:
    """A tool as its author defined it. Make one with `define_tool` or `define_client_tool`."""

    description: str
    """What the tool does, shown to the model."""
    execute: Callable[..., Any] | None
    """The server executor; `None` for client-resolved tools."""
    input_schema: JsonSchema
    """The model-facing JSON Schema of the tool's input (an object schema)."""
    output_schema: JsonSchema | None = None
    """JSON Schema of the tool's result, or None. For a client tool, answers must satisfy it."""
    client_resolved: bool = False
    """True when a person or client supplies the result instead of an executor."""
    needs_approval: ApprovalPolicy = False
    """The approval policy (`approval` / `needs_approval`): whether a person approves a call before it runs."""
    to_model_output: Callable[[JsonValue], JsonValue] | None = None
    """Projects the executor's output to what the model sees; events keep the full output."""
    editable: bool = False
    """Whether a person approving a call may change its input (`InputResponse.edited_input`)."""
    approvers: tuple[str, ...] | Callable[[ApprovalContext, str], bool] | None = None
    """Who may answer a call's approval (principal names, or a callable); None: whoever may answer the session."""
    approvals_required: int = 1
    """How many distinct approvers must approve a call before it runs (one denial denies it)."""
    expires_after_s: float | None = None
    """How long a call's request (its approval, or a client tool's question) waits for an answer, in
    seconds; None: the agent's `input_expires_after`, if any. Unanswered by then, it resolves as expired."""
    plan: ExecutorPlan | None = field(default=None, repr=False, compare=False)
    """The executor's signature analysis, made once by `define_tool`."""


@dataclass(frozen=True, slots=True)
class DisabledTool:
    """Exported as `tool` from `agent/tools/<name>.py`: removes the framework tool `<name>`."""


def schema_from(schema: SchemaLike, *, what: str) -> JsonSchema:
    """Turn a pydantic model class or a JSON Schema dict into a checked JSON Schema dict.

    Raises:
        ToolDefinitionError: `schema` is neither, or is not a valid JSON Schema.
    """
    if isinstance(schema, type) and issubclass(schema, BaseModel):
        result = schema.model_json_schema()
    elif isinstance(schema, dict):
        result = dict(schema)
    else:
        raise ToolDefinitionError(
            f"{what} must be a pydantic model class or a JSON Schema object, got {type(schema).__name__}"
        )
    try:
        jsonschema.Draft202012Validator.check_schema(result)
    except jsonschema.SchemaError as exc:
        raise ToolDefinitionError(f"{what} is not a valid JSON Schema: {exc.message}") from exc
    return result


def expiry_seconds(value: object, *, what: str, error: type[UsageError] = ToolDefinitionError) -> float | None:
    """`expires_after` as seconds: a positive, finite number of seconds or a positive `timedelta`; None stays None.

    Raises:
        UsageError: (`error`) Anything else (a bool, zero, a negative or infinite number, a string).
    """
    if value is None:
        return None
    seconds = value.total_seconds() if isinstance(value, timedelta) else value
    if isinstance(seconds, bool) or not isinstance(seconds, int | float) or not math.isfinite(seconds) or seconds <= 0:
        raise error(f"{what} must be a positive number of seconds or a timedelta, got {value!r}")
    return float(seconds)


def _check_editable(editable: object, needs_approval: object) -> None:
    if not isinstance(editable, bool):
        raise ToolDefinitionError(f"define_tool: editable must be a bool, got {type(editable).__name__}")
    if editable and asks_never(needs_approval):
        raise ToolDefinitionError(
            "define_tool: editable=True lets the person approving a call change its input, so the tool needs "
            "needs_approval=True (or a policy); without approval nobody is asked"
        )


def _check_approvers(
    approvers: object, required: object, *, needs_approval: object, editable: bool
) -> tuple[str, ...] | Callable[[ApprovalContext, str], bool] | None:
    """`approvers` as stored (names as a tuple), once it and `approvals_required` make sense together.

    Raises:
        ToolDefinitionError: A wrong type, no approval to answer, too few approvers for the quorum,
            or a quorum on an editable tool.
    """
    if isinstance(required, bool) or not isinstance(required, int) or required < 1:
        raise ToolDefinitionError(f"define_tool: approvals_required must be a whole number >= 1, got {required!r}")
    if (approvers is not None or required > 1) and asks_never(needs_approval):
        raise ToolDefinitionError(
            "define_tool: approvers and approvals_required say who answers a call's approval, so the tool needs "
            "needs_approval=True (or a policy)"
        )
    if required > 1 and editable:
        raise ToolDefinitionError(
            "define_tool: approvals_required > 1 with editable=True: every approver must approve the same input"
        )
    if approvers is None or callable(approvers):
        return approvers
    if isinstance(approvers, str) or not isinstance(approvers, Sequence) or not approvers:
        raise ToolDefinitionError(
            "define_tool: approvers must be a non-empty list of principal names or a callable "
            f"(ApprovalContext, principal) -> bool, got {approvers!r}"
        )
    names = tuple(approvers)
    if not all(isinstance(name, str) and name for name in names):
        raise ToolDefinitionError(f"define_tool: approvers must be non-empty strings, got {approvers!r}")
    if len(set(names)) < required:
        raise ToolDefinitionError(
            f"define_tool: approvals_required={required} but only {len(set(names))} approvers are named"
        )
    return names


def _check_description(description: object) -> str:
    if not isinstance(description, str) or not description.strip():
        raise ToolDefinitionError("a tool needs a non-empty description string")
    return description


def _check_approval(approval: object, needs_approval: object) -> ApprovalPolicy:
    """The tool's one policy, from eve 1.0's `approval` or eve 0.80.1's `needs_approval` (not both)."""
    if approval is not None and needs_approval is not False:
        raise ToolDefinitionError(
            "define_tool: pass approval=... (eve 1.0's name) or needs_approval=... (eve 0.80.1's), not both"
        )
    policy = needs_approval if approval is None else approval
    if isinstance(policy, bool) or callable(policy):
        return policy
    raise ToolDefinitionError(
        "define_tool: approval must be never(), always(), once(), a bool, or a callable taking an "
        f"ApprovalContext, got {type(policy).__name__}"
    )


def define_tool(
    *,
    description: str,
    execute: Callable[..., Any] | None = None,
    output_schema: SchemaLike | None = None,
    needs_approval: ApprovalPolicy = False,
    to_model_output: Callable[[JsonValue], JsonValue] | None = None,
    editable: bool = False,
    expires_after: float | timedelta | None = None,
    approvers: ApproverPolicy | None = None,
    approvals_required: int = 1,
    approval: ApprovalPolicy | None = None,
) -> ToolDefinition:
    """Define a tool the server executes.

    The model-facing input schema is derived from `execute`'s parameters (pydantic), leaving
    out every parameter annotated `ToolContext`. Sync and async executors both work; sync
    ones run in a worker thread.

    Args:
        description: What the tool does, shown to the model.
        execute: The executor. Its keyword arguments are the model's validated input.
        output_schema: Optional schema of the executor's result (pydantic model or JSON Schema).
        needs_approval: eve 0.80.1's name for `approval`: `True`, `False`, or a callable
            `(ApprovalContext) -> bool` (sync or async).
        to_model_output: Optional projection of the output shown to the model.
        editable: Let the person approving a call change its input: an approval may carry
            `edited_input` (valid for the model-facing input schema; resolver-filled parameters
            stay the resolvers'), the executor runs with it, and the model's tool result says
            so and shows what ran. Needs `needs_approval`.
        expires_after: How long a call's approval waits (seconds, or a `timedelta`); unanswered
            by then it resolves as `expired` and the model gets one `INPUT_EXPIRED` error result
            for the call. Defaults to the agent's `input_expires_after` (none: no deadline).
            Needs `needs_approval`.
        approvers: Who may answer a call's approval: principal names (the HTTP API's token
            names, `respond(by=...)` in Python) or a callable `(ApprovalContext, principal) -> bool`.
            An answer from anyone else is refused (`NotAnApproverError`, HTTP 403).
        approvals_required: How many distinct approvers must approve before the call runs (M of
            N); one denial denies it, each approval is recorded as it arrives (`input.approved`),
            the same principal approving twice is refused; not with `editable`.
        approval: eve 1.0's approval policy (`eve_py.approval`): `never()` (the default),
            `always()`, `once()` (ask once per tool and session; an approval covers later calls,
            a denial replaces it), or a callable `(ApprovalContext) -> ApprovalStatus` (sync or
            async) returning `"user-approval"`, `"not-applicable"`, `"approved"`, `"denied"`,
            `Denied(reason)` or a bool. A call a person must approve parks as a `tool-approval`
            input request and its executor runs only once approved; a denied call never runs.

    Raises:
        ToolDefinitionError: `execute` is missing or not callable, its signature cannot be
            turned into a schema, `editable=True` or `expires_after` without an approval policy,
            both `approval` and `needs_approval`, or another argument has the wrong type.
    """
    description = _check_description(description)
    if execute is None:
        raise ToolDefinitionError(
            "define_tool: Expected the tool to provide an execute function. Pass execute=..., or use "
            "define_client_tool(...) for a tool whose result comes from a person or client."
        )
    if not callable(execute):
        raise ToolDefinitionError(f"define_tool: execute must be callable, got {type(execute).__name__}")
    if to_model_output is not None and not callable(to_model_output):
        raise ToolDefinitionError("define_tool: to_model_output must be callable")
    needs_approval = _check_approval(approval, needs_approval)
    _check_editable(editable, needs_approval)
    expires_after_s = expiry_seconds(expires_after, what="define_tool: expires_after")
    if expires_after_s is not None and asks_never(needs_approval):
        raise ToolDefinitionError(
            "define_tool: expires_after bounds how long a call's approval waits, so the tool needs "
            "needs_approval=True (or a policy); without approval nothing waits"
        )
    who = _check_approvers(approvers, approvals_required, needs_approval=needs_approval, editable=editable)
    plan = plan_executor(execute, tool=getattr(execute, "__name__", description))
    return ToolDefinition(
        description=description,
        execute=execute,
        input_schema=plan.input_schema,
        output_schema=None if output_schema is None else schema_from(output_schema, what="output_schema"),
        client_resolved=False,
        needs_approval=needs_approval,
        to_model_output=to_model_output,
        editable=editable,
        expires_after_s=expires_after_s,
        approvers=who,
        approvals_required=approvals_required,
        plan=plan,
    )


def define_client_tool(
    *,
    description: str,
    input_schema: SchemaLike,
    output_schema: SchemaLike | None = None,
    execute: None = None,
    expires_after: float | timedelta | None = None,
) -> ToolDefinition:
    """Define a client-resolved tool: a person or client supplies its result.

    When the model calls it, the call parks as an input request; the answer (validated
    against `output_schema` when one is given) becomes the call's one tool result. No server
    code ever runs for it.

    Args:
        description: What the tool does, shown to the model.
        input_schema: The model-facing input, a pydantic model class or a JSON object schema.
        output_schema: Schema the answer's `value` must satisfy, or None.
        execute: Must not be given; present only so the mistake gets a clear error.
        expires_after: How long a call waits for its answer (seconds, or a `timedelta`);
            unanswered by then it resolves as `expired` and the model gets one `INPUT_EXPIRED`
            error result. Defaults to the agent's `input_expires_after` (none: no deadline).

    Raises:
        ToolDefinitionError: `execute` was given, a schema is invalid, or `expires_after` is not
            a positive duration.
    """
    if execute is not None:
        raise ToolDefinitionError(
            'define_client_tool: client-resolved tools must not define "execute". The call is resolved by '
            "the client/HITL channel, not the server. Use define_tool for tools that execute."
        )
    description = _check_description(description)
    schema = schema_from(input_schema, what="input_schema")
    if schema.get("type") != "object":
        raise ToolDefinitionError('define_client_tool: input_schema must describe a JSON object ("type": "object")')
    return ToolDefinition(
        description=description,
        execute=None,
        input_schema=schema,
        output_schema=None if output_schema is None else schema_from(output_schema, what="output_schema"),
        client_resolved=True,
        expires_after_s=expiry_seconds(expires_after, what="define_client_tool: expires_after"),
    )


def disable_tool() -> DisabledTool:
    """Return the marker that removes the framework tool named like the file exporting it."""
    return DisabledTool()
