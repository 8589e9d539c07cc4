"""Resources and prompts an app declares for `eve-py mcp` to serve: `define_resource`, `define_prompt`.

As a tool lives in `agent/tools/NAME.py`, a resource lives in `agent/resources/NAME.py`
(exporting `resource = define_resource(...)`) and a prompt in `agent/prompts/NAME.py`
(exporting `prompt = define_prompt(...)`, named after its file):

```python
# agent/resources/orders.py: one resource per order, by a URI template
from eve_py.mcp import define_resource

ORDERS = ("ORD-7001", "ORD-7002")

def read(order_id: str) -> str:
    return f'{{"order": "{order_id}", "status": "shipped"}}'

def order_ids(typed: str) -> list[str]:
    return [order for order in ORDERS if order.startswith(typed)]

resource = define_resource("orders://{order_id}", read, mime_type="application/json", complete={"order_id": order_ids})

# agent/prompts/refund_request.py
from eve_py.mcp import define_prompt

def render(order_id: str, tone: str = "polite") -> str:
    return f"Write a {tone} refund request for order {order_id}."

prompt = define_prompt(render, description="Draft a refund request.")
```

A resource's `read` returns text (`str`) or bytes (sent base64 as a blob); a URI with `{...}`
variables is a template whose variables are `read`'s keyword arguments. A prompt's `render`
takes its arguments (annotated `str`; those without a default are required) and returns text
(one user message), a content block, or a list of them and `PromptMessage`s. `complete` maps an
argument (or template variable) to a function from what the user typed so far to suggestions.
Both functions may be `async`.

A prompt may ask before it renders, as a tool does: a parameter `Annotated[T, Resolve(fn)]` is
filled by a resolver (whose `Elicit(...)` asks the client: an `input_required` round on the 2026
era, an `elicitation/create` push before it), and a `ToolContext` parameter can `sample` and
`list_roots`.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from mcp.shared.uri_template import InvalidUriTemplate, UriTemplate

from eve_py.authoring._signature import ExecutorPlan, plan_executor
from eve_py.errors import ToolDefinitionError
from eve_py.protocol.content import ContentBlock

__all__ = (
    "Completer",
    "PromptArgument",
    "PromptDefinition",
    "PromptMessage",
    "ResourceDefinition",
    "define_prompt",
    "define_resource",
)

Completer = Callable[[str], Sequence[str]] | Callable[[str], Any]
"""What the user typed so far -> suggestions (a sequence of strings; the function may be async)."""


@dataclass(frozen=True, kw_only=True, slots=True)
class PromptMessage:
    """One message of a rendered prompt: `role` says who speaks, `content` is text or a content block."""

    role: Literal["user", "assistant"]
    content: str | ContentBlock


@dataclass(frozen=True, kw_only=True, slots=True)
class ResourceDefinition:
    """A resource (or, with `{...}` variables in `uri`, a resource template); see `define_resource`."""

    uri: str
    read: Callable[..., Any]
    name: str | None = None
    title: str | None = None
    description: str | None = None
    mime_type: str | None = None
    complete: Mapping[str, Completer] = field(default_factory=dict)
    template: UriTemplate | None = None
    """The parsed URI template, or None for a resource of one fixed URI."""


@dataclass(frozen=True, kw_only=True, slots=True)
class PromptArgument:
    """One argument a prompt takes."""

    name: str
    required: bool
    description: str | None = None


@dataclass(frozen=True, kw_only=True, slots=True)
class PromptDefinition:
    """A prompt template; see `define_prompt`."""

    render: Callable[..., Any]
    arguments: tuple[PromptArgument, ...]
    plan: ExecutorPlan
    """How `render` is called: its arguments, resolvers and context."""
    title: str | None = None
    description: str | None = None
    complete: Mapping[str, Completer] = field(default_factory=dict)


def _check_completers(
    complete: Mapping[str, Completer] | None, names: Sequence[str], what: str
) -> dict[str, Completer]:
    completers = dict(complete or {})
    unknown = sorted(set(completers) - set(names))
    if unknown:
        raise ToolDefinitionError(f"{what} has no argument {', '.join(map(repr, unknown))} to complete")
    if not all(callable(fn) for fn in completers.values()):
        raise ToolDefinitionError(f"{what}: every completer must be a function from the typed text to suggestions")
    return completers


def define_resource(
    uri: str,
    read: Callable[..., Any],
    *,
    name: str | None = None,
    title: str | None = None,
    description: str | None = None,
    mime_type: str | None = None,
    complete: Mapping[str, Completer] | None = None,
) -> ResourceDefinition:
    """Declare a resource for `agent/resources/NAME.py` (`resource = define_resource(...)`).

    Args:
        uri: The resource's URI; with `{var}` variables (RFC 6570) it is a template, and each
            variable is a keyword argument of `read`.
        read: Returns the contents: `str` (text) or `bytes` (a blob). May be async.
        name: The listed name (the file's name by default).
        title: A human-readable title.
        description: What the resource holds.
        mime_type: Its MIME type (`text/plain` for text and `application/octet-stream` for bytes
            by default).
        complete: Suggestions for a template variable, by its name.

    Raises:
        ToolDefinitionError: `uri` is not a valid URI template, `read` is not a function, or
            `complete` names a variable the template does not have.
    """
    if not callable(read):
        raise ToolDefinitionError(f"define_resource({uri!r}): read must be a function returning str or bytes")
    template: UriTemplate | None = None
    if UriTemplate.is_template(uri):
        try:
            template = UriTemplate.parse(uri)
        except InvalidUriTemplate as exc:
            raise ToolDefinitionError(f"define_resource({uri!r}): {exc}") from None
    names = template.variable_names if template is not None else []
    completers = _check_completers(complete, names, f"define_resource({uri!r})")
    return ResourceDefinition(
        uri=uri,
        read=read,
        name=name,
        title=title,
        description=description,
        mime_type=mime_type,
        complete=completers,
        template=template,
    )


def define_prompt(
    render: Callable[..., Any],
    *,
    title: str | None = None,
    description: str | None = None,
    complete: Mapping[str, Completer] | None = None,
) -> PromptDefinition:
    """Declare a prompt for `agent/prompts/NAME.py` (`prompt = define_prompt(...)`), named after the file.

    Args:
        render: Takes the prompt's arguments (annotated `str`; a parameter without a default is
            a required argument) and returns text, a content block, or a list of them and
            `PromptMessage`s. May be async. Parameters annotated `Annotated[T, Resolve(fn)]`
            or `ToolContext` are filled by the server, as a tool's are.
        title: A human-readable title.
        description: What the prompt is for (the first line of `render`'s docstring by default).
        complete: Suggestions for an argument, by its name.

    Raises:
        ToolDefinitionError: `render` is not a function, takes `*args`/`**kwargs` or an
            unannotated parameter, its resolvers are invalid, or `complete` names an argument
            it does not take.
    """
    if not callable(render):
        raise ToolDefinitionError("define_prompt: render must be a function returning the prompt's messages")
    plan = plan_executor(render, tool=f"define_prompt({getattr(render, '__name__', render)!r})")
    arguments = [
        PromptArgument(name=name, required=field.is_required(), description=field.description)
        for name, field in plan.arguments_model.model_fields.items()
    ]
    names = [argument.name for argument in arguments]
    doc = inspect.getdoc(render)
    return PromptDefinition(
        render=render,
        arguments=tuple(arguments),
        plan=plan,
        title=title,
        description=description if description is not None else (doc.splitlines()[0] if doc else None),
        complete=_check_completers(complete, names, f"define_prompt({render.__name__})"),
    )
