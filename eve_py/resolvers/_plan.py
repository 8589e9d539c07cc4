"""Resolver planning: the DAG behind a tool's `Annotated[T, Resolve(fn)]` parameters, built once.

`define_tool` calls `plan_resolved_parameter` for each resolved parameter. Every resolver's
parameters are classified once (the call's `ToolContext`, another `Resolve(...)` dependency,
or a tool argument by name), cycles are rejected, and each resolver gets a stable key: its
`__qualname__`, with `#1`, `#2`, ... for distinct resolvers sharing one (in pre-order). Keys
hold no `id()`, so recorded answers stay valid across restarts.
"""

from __future__ import annotations

import functools
import inspect
import types
import typing
from collections.abc import Callable, Collection
from dataclasses import dataclass, field
from typing import Annotated, Any, Literal, get_args, get_origin

from eve_py._context import ToolContext
from eve_py.errors import ToolDefinitionError
from eve_py.resolvers._markers import (
    AcceptedElicitation,
    CancelledElicitation,
    DeclinedElicitation,
    Elicit,
    ElicitationResult,
    Resolve,
)

__all__ = (
    "Dependency",
    "PlanBuilder",
    "ResolverNode",
    "ResolverParam",
    "find_resolve",
    "is_async_callable",
    "is_context_annotation",
    "resolver_identity",
    "resolver_name",
    "union_wraps_resolve",
    "wants_union",
)


@dataclass(frozen=True, slots=True)
class Dependency:
    """An edge: a consumer (tool or resolver parameter) fed by a resolver."""

    node: ResolverNode
    wants_union: bool
    """True: the consumer gets the `ElicitationResult` outcome; False: the unwrapped value."""


@dataclass(frozen=True, slots=True)
class ResolverParam:
    """One parameter of a resolver, classified once."""

    name: str
    source: Literal["context", "dependency", "argument"]
    dependency: Dependency | None = None


@dataclass(slots=True, eq=False)
class ResolverNode:
    """One resolver in a tool's plan."""

    fn: Callable[..., Any]
    key: str
    """Stable key: the resolver's qualname (plus `#n` when distinct resolvers share one)."""
    identity: object
    """Memoization key within one call: the function, or (function, instance) for bound methods."""
    name: str
    is_async: bool
    params: tuple[ResolverParam, ...] = field(default=())


def resolver_identity(fn: Callable[..., Any]) -> object:
    """Bound methods are one resolver per (function, instance); anything else per object."""
    if inspect.ismethod(fn):
        return (id(fn.__func__), id(fn.__self__))
    if isinstance(fn, types.BuiltinMethodType) and not isinstance(fn.__self__, types.ModuleType):
        return (fn.__name__, id(fn.__self__))
    return id(fn)


def resolver_name(fn: Callable[..., Any]) -> str:
    """`__name__`, or the type's name for callable objects."""
    return str(getattr(fn, "__name__", type(fn).__name__))


def _qualname(fn: Callable[..., Any]) -> str:
    if inspect.ismethod(fn):
        return str(fn.__func__.__qualname__)
    return str(getattr(fn, "__qualname__", type(fn).__qualname__))


def is_async_callable(fn: Callable[..., Any]) -> bool:
    """Whether calling `fn` returns an awaitable: async functions, methods, partials of them, and
    objects with an async `__call__`."""
    while isinstance(fn, functools.partial):
        fn = fn.func
    return inspect.iscoroutinefunction(fn) or inspect.iscoroutinefunction(getattr(fn, "__call__", None))  # noqa: B004


def find_resolve(annotation: object) -> Resolve | None:
    """The first `Resolve` in a top-level `Annotated[...]`'s metadata, or None."""
    if get_origin(annotation) is Annotated:
        return next((m for m in annotation.__metadata__ if isinstance(m, Resolve)), None)  # type: ignore[attr-defined]
    return None


def _is_union(annotation: object) -> bool:
    return get_origin(annotation) in (typing.Union, types.UnionType)


def union_wraps_resolve(annotation: object) -> bool:
    """`Annotated[T, Resolve(f)] | None` and the like: a `Resolve` the runtime would not honour."""
    return _is_union(annotation) and any(find_resolve(arg) is not None for arg in get_args(annotation))


def is_context_annotation(annotation: object) -> bool:
    """`ToolContext`, a union holding it (`ToolContext | None`), or either inside `Annotated`."""
    if get_origin(annotation) is Annotated:
        annotation = get_args(annotation)[0]
    if annotation is ToolContext:
        return True
    return _is_union(annotation) and ToolContext in get_args(annotation)


def _is_outcome_class(annotation: object) -> bool:
    return isinstance(annotation, type) and issubclass(
        annotation, AcceptedElicitation | DeclinedElicitation | CancelledElicitation
    )


def wants_union(annotation: object) -> bool:
    """Whether a consumer annotated `Annotated[annotation, Resolve(...)]` wants the outcome union."""
    if annotation is ElicitationResult or get_origin(annotation) is ElicitationResult:
        return True
    if _is_union(annotation):
        return all(_is_outcome_class(arg) for arg in get_args(annotation))
    return _is_outcome_class(annotation)


def _elicit_arms(annotation: object) -> int:
    if annotation is inspect.Signature.empty:
        return 0
    arms = get_args(annotation) if _is_union(annotation) else (annotation,)
    return sum(1 for arm in arms if arm is Elicit or get_origin(arm) is Elicit)


def _signature(fn: Callable[..., Any], name: str) -> inspect.Signature:
    try:
        return inspect.signature(fn, eval_str=True)
    except Exception as exc:
        raise ToolDefinitionError(f"Resolver {name!r} has a signature that cannot be read: {exc}") from exc


class PlanBuilder:
    """Plans the resolvers of one tool (shared nodes are planned once)."""

    def __init__(self, *, argument_names: Collection[str]) -> None:
        self._argument_names = argument_names
        self._planned: dict[object, ResolverNode] = {}
        self._stack: list[object] = []
        self._key_counts: dict[str, int] = {}

    def dependency(self, annotation: object, resolve: Resolve) -> Dependency:
        """The edge for a consumer annotated `annotation` (an `Annotated[T, Resolve(fn)]`).

        Raises:
            ToolDefinitionError: A cycle, an unclassifiable parameter, a union-wrapped `Resolve`
                or a return annotation with two `Elicit` arms, anywhere below.
        """
        return Dependency(node=self._node(resolve.fn), wants_union=wants_union(get_args(annotation)[0]))

    def _node(self, fn: Callable[..., Any]) -> ResolverNode:
        identity = resolver_identity(fn)
        name = resolver_name(fn)
        if identity in self._stack:
            raise ToolDefinitionError(f"Resolver {name!r} has a cyclic dependency")
        if identity in self._planned:
            return self._planned[identity]
        base = _qualname(fn)
        count = self._key_counts.get(base, 0)
        self._key_counts[base] = count + 1
        node = ResolverNode(
            fn=fn,
            key=base if count == 0 else f"{base}#{count}",
            identity=identity,
            name=name,
            is_async=is_async_callable(fn),
        )
        signature = _signature(fn, name)
        if _elicit_arms(signature.return_annotation) > 1:
            raise ToolDefinitionError(
                f"Resolver {name!r} return annotation has multiple Elicit arms; a resolver asks one question - "
                "split it into separate resolvers"
            )
        self._stack.append(identity)
        params: list[ResolverParam] = []
        for param_name, param in signature.parameters.items():
            annotation = param.annotation
            if union_wraps_resolve(annotation):
                raise ToolDefinitionError(
                    f"Parameter {param_name!r} of {name!r} wraps `Resolve(...)` in a union; annotate the parameter "
                    "directly as `Annotated[T, Resolve(...)]`"
                )
            resolve = find_resolve(annotation)
            if is_context_annotation(annotation):
                params.append(ResolverParam(name=param_name, source="context"))
            elif resolve is not None:
                params.append(
                    ResolverParam(name=param_name, source="dependency", dependency=self.dependency(annotation, resolve))
                )
            elif param_name in self._argument_names:
                params.append(ResolverParam(name=param_name, source="argument"))
            else:
                raise ToolDefinitionError(
                    f"Resolver {name!r} parameter {param_name!r} cannot be resolved: expected a ToolContext, an "
                    "Annotated[_, Resolve(...)], or a tool argument by name"
                )
        self._stack.pop()
        node.params = tuple(params)
        self._planned[identity] = node
        return node
