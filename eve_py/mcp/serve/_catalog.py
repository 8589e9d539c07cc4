"""Serving an app's resources and prompts (`agent/resources/`, `agent/prompts/`), with completions.

`load_catalog(app_dir)` imports each file once; `serve_catalog(server, catalog)` adds the SDK
handlers for what the app has, so a server without resources declares no resources capability.
Lists come in pages (`_pages`); a URI no resource or template matches, an unknown prompt or a
missing required argument is `-32602` (the URI in the error's `data`, as SEP-2164 asks). A
prompt whose resolvers ask is driven as a tool call is (`_drive`): `input_required` rounds on
the 2026 era, `elicitation/create` pushes before it; a resolver that fails the prompt (a declined
question its consumer needed) is a JSON-RPC error.
"""

from __future__ import annotations

import base64
import inspect
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import mcp_types as types
import pydantic
from mcp.server.context import ServerRequestContext
from mcp.server.lowlevel import Server
from mcp.shared.exceptions import MCPError

from eve_py._context import ClientInputPending, ToolChannel, ToolContext
from eve_py._loading import ImportTimedOut, LoadFailure, import_timeout, load_module
from eve_py.authoring._signature import NeedsInput
from eve_py.errors import ToolError, ToolResolutionError
from eve_py.mcp.serve._drive import CallSite, call_site, legacy_call, modern_round, uses_input_required
from eve_py.mcp.serve._features import Completer, PromptDefinition, PromptMessage, ResourceDefinition
from eve_py.mcp.serve._once import Nonces
from eve_py.mcp.serve._pages import DEFAULT_PAGE_SIZE, Pages
from eve_py.mcp.serve._results import mcp_block
from eve_py.mcp.serve._updates import ResourceUpdates
from eve_py.protocol.content import TextContent, content_blocks
from eve_py.protocol.pending import RecordedOutcome
from eve_py.resolvers import Question

__all__ = ("Catalog", "load_catalog", "serve_catalog")

_MAX_COMPLETIONS = 100
"""The most values one `completion/complete` answer may hold (the specification's limit)."""


@dataclass(frozen=True, kw_only=True)
class Catalog:
    """An app's resources (by URI), resource templates and prompts (by name), as declared."""

    resources: dict[str, tuple[str, ResourceDefinition]] = field(default_factory=dict)
    """Fixed-URI resources: URI -> (listed name, definition)."""
    templates: list[tuple[str, ResourceDefinition]] = field(default_factory=list)
    prompts: dict[str, PromptDefinition] = field(default_factory=dict)


def _export(path: Path, app_dir: Path, name: str, kind: type[Any]) -> Any:
    relative = path.relative_to(app_dir / "agent").as_posix()
    loaded = load_module(path, app_dir=app_dir, timeout_s=import_timeout(None))
    if isinstance(loaded, ImportTimedOut):
        raise ToolResolutionError(f'"{relative}" did not finish importing within {loaded.timeout_s:g} s', path=relative)
    if isinstance(loaded, LoadFailure):
        raise ToolResolutionError(
            f'"{relative}" failed to import: {type(loaded.error).__name__}: {loaded.error}', path=relative
        )
    value = getattr(loaded, name, None)
    if not isinstance(value, kind):
        maker = "define_resource" if name == "resource" else "define_prompt"
        raise ToolResolutionError(f'Expected the export "{name}" from "{relative}" to be {maker}(...)', path=relative)
    return value


def _files(app_dir: Path, folder: str) -> list[Path]:
    found = app_dir / "agent" / folder
    return sorted(p for p in found.glob("*.py") if not p.name.startswith("_")) if found.is_dir() else []


def load_catalog(app_dir: Path | None) -> Catalog:
    """The resources and prompts declared under `app_dir/agent/` (none without an app folder).

    Raises:
        ToolResolutionError: A file fails to import, exports no `resource` / `prompt`, or two
            resources claim one URI.
    """
    catalog = Catalog()
    if app_dir is None:
        return catalog
    for path in _files(app_dir, "resources"):
        resource: ResourceDefinition = _export(path, app_dir, "resource", ResourceDefinition)
        named = (resource.name or path.stem, resource)
        if resource.template is not None:
            catalog.templates.append(named)
        elif resource.uri in catalog.resources:
            raise ToolResolutionError(f"Two resources have the URI {resource.uri!r}", path=f"resources/{path.name}")
        else:
            catalog.resources[resource.uri] = named
    for path in _files(app_dir, "prompts"):
        catalog.prompts[path.stem] = _export(path, app_dir, "prompt", PromptDefinition)
    return catalog


async def _call(fn: Any, *args: Any, **kwargs: Any) -> Any:
    result = fn(*args, **kwargs)
    return await result if inspect.isawaitable(result) else result


def _listed_resource(name: str, resource: ResourceDefinition) -> types.Resource:
    return types.Resource(
        uri=resource.uri,
        name=name,
        title=resource.title,
        description=resource.description,
        mime_type=resource.mime_type,
    )


def _listed_template(name: str, resource: ResourceDefinition) -> types.ResourceTemplate:
    return types.ResourceTemplate(
        uri_template=resource.uri,
        name=name,
        title=resource.title,
        description=resource.description,
        mime_type=resource.mime_type,
    )


def _listed_prompt(name: str, prompt: PromptDefinition) -> types.Prompt:
    arguments = [
        types.PromptArgument(name=a.name, description=a.description, required=a.required) for a in prompt.arguments
    ]
    return types.Prompt(name=name, title=prompt.title, description=prompt.description, arguments=arguments)


def _find(catalog: Catalog, uri: str) -> tuple[ResourceDefinition, dict[str, Any]]:
    fixed = catalog.resources.get(uri)
    if fixed is not None:
        return fixed[1], {}
    for _, resource in catalog.templates:
        assert resource.template is not None
        matched = resource.template.match(uri)
        if matched is not None:
            return resource, dict(matched)
    raise MCPError(code=types.INVALID_PARAMS, message=f"Resource not found: {uri}", data={"uri": uri})


async def _read(catalog: Catalog, uri: str) -> types.ReadResourceResult:
    resource, variables = _find(catalog, uri)
    value = await _call(resource.read, **variables)
    contents: types.TextResourceContents | types.BlobResourceContents
    if isinstance(value, bytes | bytearray):
        blob = base64.b64encode(bytes(value)).decode()
        contents = types.BlobResourceContents(
            uri=uri, mime_type=resource.mime_type or "application/octet-stream", blob=blob
        )
    else:
        contents = types.TextResourceContents(uri=uri, mime_type=resource.mime_type or "text/plain", text=str(value))
    return types.ReadResourceResult(contents=[contents])


def _messages(rendered: Any) -> list[types.PromptMessage]:
    items: Sequence[Any] = rendered if isinstance(rendered, list | tuple) else [rendered]
    messages: list[types.PromptMessage] = []
    for item in items:
        message = item if isinstance(item, PromptMessage) else PromptMessage(role="user", content=item)
        content = TextContent(text=message.content) if isinstance(message.content, str) else message.content
        if content_blocks(content) is None:
            raise TypeError(f"a prompt renders text, content blocks or PromptMessages, not {type(content).__name__}")
        messages.append(types.PromptMessage(role=message.role, content=mcp_block(content)))
    return messages


async def _render(
    name: str,
    prompt: PromptDefinition,
    arguments: Mapping[str, str],
    site: CallSite,
    recorded: Mapping[str, RecordedOutcome],
    channel: ToolChannel,
) -> types.GetPromptResult | list[Question]:
    ctx = ToolContext(
        session_id=site.session_id, turn_id=site.call_id, call_id=site.call_id, tool_name=name, channel=channel
    )
    try:
        outcome = await prompt.plan.run(arguments, ctx, recorded)
    except ClientInputPending:
        return []
    except pydantic.ValidationError as exc:
        raise MCPError(code=types.INVALID_PARAMS, message=f"Invalid arguments for prompt {name}: {exc}") from None
    if isinstance(outcome, NeedsInput):
        return outcome.questions
    return types.GetPromptResult(description=prompt.description, messages=_messages(outcome.value))


async def _get_prompt(
    catalog: Catalog, ctx: ServerRequestContext[Any, Any], params: types.GetPromptRequestParams, nonces: Nonces
) -> types.GetPromptResult | types.InputRequiredResult:
    prompt = catalog.prompts.get(params.name)
    if prompt is None:
        raise MCPError(code=types.INVALID_PARAMS, message=f"Unknown prompt: {params.name}")
    arguments = dict(params.arguments or {})
    missing = [a.name for a in prompt.arguments if a.required and a.name not in arguments]
    if missing:
        raise MCPError(code=types.INVALID_PARAMS, message=f"Missing required arguments: {', '.join(missing)}")
    site = call_site(ctx)

    async def run(
        recorded: Mapping[str, RecordedOutcome], channel: ToolChannel
    ) -> types.GetPromptResult | list[Question]:
        return await _render(params.name, prompt, arguments, site, recorded, channel)

    try:
        if uses_input_required(ctx.protocol_version):
            return await modern_round(
                run,
                request_state=params.request_state,
                input_responses=params.input_responses,
                site=site,
                nonces=nonces,
            )
        return await legacy_call(run, site=site, session=ctx.session, request_id=ctx.request_id)
    except ToolError as exc:
        raise MCPError(code=types.INTERNAL_ERROR, message=f"Prompt {params.name}: {exc}") from None


def _completer(catalog: Catalog, params: types.CompleteRequestParams) -> Completer | None:
    ref, argument = params.ref, params.argument.name
    if isinstance(ref, types.PromptReference):
        prompt = catalog.prompts.get(ref.name)
        return None if prompt is None else prompt.complete.get(argument)
    for _, resource in catalog.templates:
        if resource.uri == ref.uri:
            return resource.complete.get(argument)
    return None


async def _complete(catalog: Catalog, params: types.CompleteRequestParams) -> types.CompleteResult:
    completer = _completer(catalog, params)
    values = [] if completer is None else [str(v) for v in await _call(completer, params.argument.value)]
    shown = values[:_MAX_COMPLETIONS]
    return types.CompleteResult(
        completion=types.Completion(values=shown, total=len(values), has_more=len(values) > len(shown))
    )


def _serve_resources(server: Server[Any], catalog: Catalog, page_size: int, updates: ResourceUpdates) -> None:
    listed = [_listed_resource(name, resource) for name, resource in catalog.resources.values()]
    resources = Pages("resources", listed, lambda r: str(r.uri), size=page_size)
    templates = Pages(
        "templates", [_listed_template(*t) for t in catalog.templates], lambda t: t.uri_template, size=page_size
    )

    async def on_list(ctx: ServerRequestContext[Any, Any], params: types.PaginatedRequestParams | None) -> Any:
        page, cursor = resources.page(params.cursor if params is not None else None)
        return types.ListResourcesResult(resources=page, next_cursor=cursor)

    async def on_templates(ctx: ServerRequestContext[Any, Any], params: types.PaginatedRequestParams | None) -> Any:
        page, cursor = templates.page(params.cursor if params is not None else None)
        return types.ListResourceTemplatesResult(resource_templates=page, next_cursor=cursor)

    async def on_read(ctx: ServerRequestContext[Any, Any], params: types.ReadResourceRequestParams) -> Any:
        return await _read(catalog, str(params.uri))

    async def on_subscribe(ctx: ServerRequestContext[Any, Any], params: types.SubscribeRequestParams) -> Any:
        updates.subscribe(ctx, str(params.uri))
        return types.EmptyResult()

    async def on_unsubscribe(ctx: ServerRequestContext[Any, Any], params: types.UnsubscribeRequestParams) -> Any:
        updates.unsubscribe(ctx, str(params.uri))
        return types.EmptyResult()

    server.add_request_handler("resources/list", types.PaginatedRequestParams, on_list)
    server.add_request_handler("resources/templates/list", types.PaginatedRequestParams, on_templates)
    server.add_request_handler("resources/read", types.ReadResourceRequestParams, on_read)
    server.add_request_handler("resources/subscribe", types.SubscribeRequestParams, on_subscribe)
    server.add_request_handler("resources/unsubscribe", types.UnsubscribeRequestParams, on_unsubscribe)
    server.add_request_handler("subscriptions/listen", types.SubscriptionsListenRequestParams, updates.listen)


def _serve_prompts(server: Server[Any], catalog: Catalog, page_size: int, nonces: Nonces) -> None:
    prompts = Pages("prompts", [_listed_prompt(*p) for p in catalog.prompts.items()], lambda p: p.name, size=page_size)

    async def on_list(ctx: ServerRequestContext[Any, Any], params: types.PaginatedRequestParams | None) -> Any:
        page, cursor = prompts.page(params.cursor if params is not None else None)
        return types.ListPromptsResult(prompts=page, next_cursor=cursor)

    async def on_get(ctx: ServerRequestContext[Any, Any], params: types.GetPromptRequestParams) -> Any:
        return await _get_prompt(catalog, ctx, params, nonces)

    server.add_request_handler("prompts/list", types.PaginatedRequestParams, on_list)
    server.add_request_handler("prompts/get", types.GetPromptRequestParams, on_get)


def serve_catalog(
    server: Server[Any],
    catalog: Catalog,
    *,
    nonces: Nonces,
    updates: ResourceUpdates,
    page_size: int = DEFAULT_PAGE_SIZE,
) -> None:
    """Add the handlers for `catalog` to `server`: resources, prompts, and completions for either.

    Only what the app declares is served (and so declared as a capability). `nonces` records the
    sealed states of prompts that ask, as of tools; `updates` keeps who subscribed to which
    resource (`resources/subscribe`, `subscriptions/listen`).
    """
    if catalog.resources or catalog.templates:
        _serve_resources(server, catalog, page_size, updates)
    if catalog.prompts:
        _serve_prompts(server, catalog, page_size, nonces)
    if catalog.prompts or catalog.templates:

        async def on_complete(ctx: ServerRequestContext[Any, Any], params: types.CompleteRequestParams) -> Any:
            return await _complete(catalog, params)

        server.add_request_handler("completion/complete", types.CompleteRequestParams, on_complete)
