"""One-time analysis of an executor's signature into an `ExecutorPlan`.

`define_tool` calls `plan_executor` once; the runtime only runs the plan. The model-facing
input schema is a pydantic model built from the executor's parameters, leaving out the
parameters the runtime fills itself: `ToolContext` ones and `Annotated[T, Resolve(fn)]` ones
(whose resolver DAG is planned here too).
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import anyio.to_thread
from pydantic import BaseModel, ConfigDict, create_model

from eve_py._context import ToolContext
from eve_py._json import JsonSchema
from eve_py.errors import ToolDefinitionError
from eve_py.protocol.pending import RecordedOutcome
from eve_py.resolvers._plan import (
    Dependency,
    PlanBuilder,
    find_resolve,
    is_async_callable,
    is_context_annotation,
    union_wraps_resolve,
)
from eve_py.resolvers._solver import Question, resolve_parameters

__all__ = ("Completed", "ExecutorPlan", "NeedsInput", "plan_executor")


@dataclass(frozen=True, slots=True)
class Completed:
    """The executor ran; `value` is what it returned."""

    value: Any


@dataclass(frozen=True, slots=True)
class NeedsInput:
    """Resolvers asked questions; the executor did not run. Answer them and run again.

    `questions` are the resolvers' `Elicit`s; a resolver that asked the client through its
    context (`ClientInputPending`) left its question with the context's channel instead.
    """

    questions: list[Question]


@dataclass(frozen=True, slots=True)
class ExecutorPlan:
    """How to call one executor: which parameters come from the model, which from the runtime."""

    fn: Callable[..., Any]
    """The executor as the author wrote it."""
    is_async: bool
    """Whether calling `fn` returns an awaitable."""
    context_params: tuple[str, ...]
    """Parameters annotated `ToolContext`."""
    resolved_params: tuple[tuple[str, Dependency], ...]
    """Parameters filled by resolvers, in signature order."""
    arguments_model: type[BaseModel]
    """Validates and coerces the model's input into keyword arguments."""
    input_schema: JsonSchema
    """The model-facing JSON Schema of the input."""

    async def run(
        self, tool_input: Mapping[str, Any], ctx: ToolContext, recorded: Mapping[str, RecordedOutcome] | None = None
    ) -> Completed | NeedsInput:
        """Validate `tool_input`, run the resolvers, and run the executor unless a question is open.

        Sync executors and resolvers run in a worker thread so they never block the event loop.

        Args:
            tool_input: The call's input as the model sent it.
            ctx: The call's context.
            recorded: Answers to resolver questions recorded for this call, by resolver key.

        Raises:
            pydantic.ValidationError: The input does not fit the executor's parameters.
            ToolError: A resolver or the executor failed the call.
            Exception: Whatever a resolver or the executor raises.
        """
        return await self.run_checked(self.check(tool_input), ctx, recorded)

    def check(self, tool_input: Mapping[str, Any]) -> dict[str, Any]:
        """`tool_input` validated and coerced: the executor's keyword arguments from the model's input.

        Raises:
            pydantic.ValidationError: The input does not fit the executor's parameters.
        """
        arguments = self.arguments_model.model_validate(dict(tool_input))
        return {name: getattr(arguments, name) for name in type(arguments).model_fields}

    async def run_checked(
        self, arguments: Mapping[str, Any], ctx: ToolContext, recorded: Mapping[str, RecordedOutcome] | None = None
    ) -> Completed | NeedsInput:
        """`run` on arguments `check` already returned (a caller that runs a call again checks once).

        Raises:
            ToolError: A resolver or the executor failed the call.
            Exception: Whatever a resolver or the executor raises.
        """
        kwargs = dict(arguments)
        if self.resolved_params:
            resolution = await resolve_parameters(
                self.resolved_params, arguments=kwargs, ctx=ctx, recorded=recorded or {}
            )
            if resolution.questions or resolution.waiting:
                return NeedsInput(resolution.questions)
            kwargs.update(resolution.values)
        for name in self.context_params:
            kwargs[name] = ctx
        if self.is_async:
            return Completed(await self.fn(**kwargs))
        return Completed(await anyio.to_thread.run_sync(functools.partial(self.fn, **kwargs)))


def _signature(fn: Callable[..., Any], *, tool: str) -> inspect.Signature:
    """`fn`'s signature with its annotations resolved.

    Raises:
        ToolDefinitionError: It cannot be read, or an annotation cannot be resolved.
    """
    try:
        # eval_str resolves string annotations (`from __future__ import annotations`) for plain
        # functions, bound methods, partials and callable objects alike.
        return inspect.signature(fn, eval_str=True)
    except (TypeError, ValueError) as exc:
        raise ToolDefinitionError(f"tool {tool!r}: cannot read the signature of its executor: {exc}") from exc
    except Exception as exc:
        raise ToolDefinitionError(
            f"tool {tool!r}: cannot resolve the executor's type annotations ({type(exc).__name__}: {exc}); "
            "define the annotated types at module level"
        ) from exc


def plan_executor(fn: Callable[..., Any], *, tool: str) -> ExecutorPlan:
    """Analyse `fn`'s signature (and its resolvers) once.

    Args:
        fn: The executor.
        tool: A label for error messages (the executor's name or description).

    Raises:
        ToolDefinitionError: A parameter has no annotation, is variadic or positional-only, an
            annotation cannot be resolved, or the resolver DAG is invalid (cycle, unclassifiable
            resolver parameter, `Resolve` in a union, two `Elicit` arms in a return annotation).
    """
    signature = _signature(fn, tool=tool)
    fn_name = getattr(fn, "__name__", tool)
    fields: dict[str, Any] = {}
    context_params: list[str] = []
    resolved: list[tuple[str, Any]] = []
    for name, param in signature.parameters.items():
        if param.kind in (inspect.Parameter.VAR_POSITIONAL, inspect.Parameter.VAR_KEYWORD):
            raise ToolDefinitionError(
                f"tool {tool!r} parameter {name!r} is variadic; executors take named parameters only"
            )
        if param.kind is inspect.Parameter.POSITIONAL_ONLY:
            raise ToolDefinitionError(
                f"tool {tool!r} parameter {name!r} is positional-only; executors are called with keywords"
            )
        annotation = param.annotation
        if annotation is inspect.Parameter.empty:
            raise ToolDefinitionError(
                f"tool {tool!r} parameter {name!r} has no annotation; annotate it (for example {name}: str)"
            )
        if union_wraps_resolve(annotation):
            raise ToolDefinitionError(
                f"Parameter {name!r} of {fn_name!r} wraps `Resolve(...)` in a union; annotate the parameter "
                "directly as `Annotated[T, Resolve(...)]`"
            )
        if find_resolve(annotation) is not None:
            resolved.append((name, annotation))
            continue
        if is_context_annotation(annotation):
            context_params.append(name)
            continue
        default = ... if param.default is inspect.Parameter.empty else param.default
        fields[name] = (annotation, default)

    builder = PlanBuilder(argument_names=fields.keys())
    resolved_params = []
    for name, annotation in resolved:
        marker = find_resolve(annotation)
        assert marker is not None
        resolved_params.append((name, builder.dependency(annotation, marker)))

    model_name = getattr(fn, "__name__", "tool") + "_input"
    try:
        arguments_model = create_model(model_name, __config__=ConfigDict(extra="ignore"), **fields)
        schema = arguments_model.model_json_schema()
    except Exception as exc:
        raise ToolDefinitionError(_no_schema_message(fn_name, fields, exc)) from exc
    schema.pop("title", None)
    schema.setdefault("properties", {})
    return ExecutorPlan(
        fn=fn,
        is_async=is_async_callable(fn),
        context_params=tuple(context_params),
        resolved_params=tuple(resolved_params),
        arguments_model=arguments_model,
        input_schema=schema,
    )


def _no_schema_message(fn_name: str, fields: Mapping[str, tuple[Any, Any]], error: Exception) -> str:
    """Why the executor's parameters have no input schema, naming the parameter that has none."""
    for name, field in fields.items():
        try:
            alone: dict[str, Any] = {name: field}
            create_model("probe", __config__=ConfigDict(extra="ignore"), **alone).model_json_schema()
        except Exception:  # noqa: BLE001 - any failure here names the parameter; the cause is below
            shown = getattr(field[0], "__qualname__", None) or repr(field[0])
            module = getattr(field[0], "__module__", "")
            kind = f"{module}.{shown}" if module and module != "builtins" else shown
            return (
                f"the executor {fn_name}() takes parameter {name!r} of type {kind}, which has no JSON Schema "
                "(the model sends the call's input as JSON): give it a JSON-shaped type (str, int, float, bool, "
                "a list or dict of those, a pydantic model, a Literal or Enum), or annotate it ToolContext or "
                "Annotated[T, Resolve(...)]"
            )
    first = str(error).splitlines()[0] if str(error) else type(error).__name__
    return f"the executor {fn_name}() has parameters no input schema can describe: {first}"
