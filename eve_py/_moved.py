"""Module paths and names that moved when the package was laid out in floors, importable for one release more.

`import eve_py.events` or `from eve_py.parking.requests import InputRequest` still work: the
finder below answers an old module path with the module now at the new one (the same object,
so classes stay identical) and warns with `DeprecationWarning`. Names that left a package that
still exists go through that package's `__getattr__` (`moved_names`). Both go in the next release.
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery
import importlib.util
import sys
import warnings
from collections.abc import Callable, Mapping, Sequence
from types import ModuleType

__all__ = ("MODULES", "install", "moved_names")

MODULES: Mapping[str, str] = {
    "eve_py._wire": "eve_py._camel",
    "eve_py.context": "eve_py._context",
    "eve_py.events.types": "eve_py.protocol.events",
    "eve_py.events.payloads": "eve_py.protocol.payloads",
    "eve_py.events.envelope": "eve_py.protocol.envelope",
    "eve_py.events": "eve_py.protocol",
    "eve_py.parking.requests": "eve_py.protocol.requests",
    "eve_py.parking.batch": "eve_py.protocol.pending",
    "eve_py.models.messages": "eve_py.protocol.messages",
    "eve_py.harness.turn_result": "eve_py.protocol.turns",
    "eve_py.authoring.agent": "eve_py.authoring._agent",
    "eve_py.authoring.definition": "eve_py.authoring._definition",
    "eve_py.cli.chat": "eve_py.cli._chat",
    "eve_py.cli.evals": "eve_py.cli._evals",
    "eve_py.cli.init": "eve_py.cli._init",
    "eve_py.cli.main": "eve_py.cli._main",
    "eve_py.cli.mcp": "eve_py.cli._mcp",
    "eve_py.cli.prompts": "eve_py.cli._prompts",
    "eve_py.cli.render": "eve_py.cli._render",
    "eve_py.cli.serve": "eve_py.cli._serve",
    "eve_py.cli.store": "eve_py.cli._store",
    "eve_py.cli.workers": "eve_py.cli._workers",
    "eve_py.client.client": "eve_py.client._client",
    "eve_py.client.errors": "eve_py.client._errors",
    "eve_py.client.turns": "eve_py.client._turns",
    "eve_py.compiler.app": "eve_py.compiler._app",
    "eve_py.compiler.diagnostics": "eve_py.errors",
    "eve_py.compiler.discovery": "eve_py.compiler._discovery",
    "eve_py.compiler.manifest": "eve_py.compiler._manifest",
    "eve_py.evals.backend": "eve_py.evals._backend",
    "eve_py.evals.calls": "eve_py.evals._calls",
    "eve_py.evals.definition": "eve_py.evals._definition",
    "eve_py.evals.discovery": "eve_py.evals._discovery",
    "eve_py.evals.driver": "eve_py.evals._driver",
    "eve_py.evals.matching": "eve_py.evals._matching",
    "eve_py.evals.runner": "eve_py.evals._runner",
    "eve_py.harness.calls": "eve_py.harness._park",
    "eve_py.harness.conversation": "eve_py.harness._conversation",
    "eve_py.harness.deltas": "eve_py.harness._deltas",
    "eve_py.harness.heartbeat": "eve_py.harness._heartbeat",
    "eve_py.harness.inputs": "eve_py.harness._inputs",
    "eve_py.harness.loop": "eve_py.harness._unit",
    "eve_py.harness.pairing": "eve_py.harness._pairing",
    "eve_py.harness.runtime": "eve_py.harness._runtime",
    "eve_py.harness.session": "eve_py.harness._session",
    "eve_py.harness.settling": "eve_py.harness._settle",
    "eve_py.harness.structured": "eve_py.harness._structured",
    "eve_py.harness.writes": "eve_py.harness._commit",
    "eve_py.mcp.asks": "eve_py.mcp.serve._asks",
    "eve_py.mcp.calls": "eve_py.mcp.serve._calls",
    "eve_py.mcp.results": "eve_py.mcp.serve._results",
    "eve_py.mcp.rounds": "eve_py.mcp.serve._rounds",
    "eve_py.mcp.server": "eve_py.mcp.serve._server",
    "eve_py.mcp.transports": "eve_py.mcp.serve._transports",
    "eve_py.mcp.invocations": "eve_py.mcp.channel._invocations",
    "eve_py.mcp.connections": "eve_py.mcp.connect._definition",
    "eve_py.mcp.loading": "eve_py.mcp.connect._loading",
    "eve_py.mcp.remote": "eve_py.mcp.connect._remote",
    "eve_py.models.anthropic": "eve_py.models._anthropic",
    "eve_py.models.base": "eve_py.models._base",
    "eve_py.models.openai": "eve_py.models._openai",
    "eve_py.models.registry": "eve_py.models._registry",
    "eve_py.models.retry": "eve_py.models._retry",
    "eve_py.parking.accept": "eve_py.parking._accept",
    "eve_py.parking.answers": "eve_py.parking._answers",
    "eve_py.parking.build": "eve_py.parking._build",
    "eve_py.parking.park": "eve_py.parking._park",
    "eve_py.parking.resolutions": "eve_py.parking._resolutions",
    "eve_py.parking.results": "eve_py.parking._results",
    "eve_py.parking.settle": "eve_py.parking._settle",
    "eve_py.resolvers.markers": "eve_py.resolvers._markers",
    "eve_py.resolvers.plan": "eve_py.resolvers._plan",
    "eve_py.resolvers.solver": "eve_py.resolvers._solver",
    "eve_py.server.app": "eve_py.server._app",
    "eve_py.server.auth": "eve_py.server._auth",
    "eve_py.server.feed": "eve_py.server._feed",
    "eve_py.server.guard": "eve_py.server._guard",
    "eve_py.server.hub": "eve_py.server._hub",
    "eve_py.server.info": "eve_py.server._info",
    "eve_py.server.owners": "eve_py.server._owners",
    "eve_py.server.pg_owners": "eve_py.server._pg_owners",
    "eve_py.server.stream": "eve_py.server._stream",
    "eve_py.server.turns": "eve_py.server._turns",
    "eve_py.server.wire": "eve_py.server._bodies",
    "eve_py.sessions.codec": "eve_py.sessions._codec",
    "eve_py.sessions.copying": "eve_py.sessions._copying",
    "eve_py.sessions.feed": "eve_py.sessions._feed",
    "eve_py.sessions.forwarding": "eve_py.sessions._forwarding",
    "eve_py.sessions.memory": "eve_py.sessions._memory",
    "eve_py.sessions.opening": "eve_py.sessions._opening",
    "eve_py.sessions.record": "eve_py.sessions._record",
    "eve_py.sessions.sqlite": "eve_py.sessions._sqlite",
    "eve_py.sessions.store": "eve_py.sessions._store",
    "eve_py.testing.mock_model": "eve_py.testing._mock_model",
    "eve_py.tools.ask_question": "eve_py.tools._ask_question",
    "eve_py.tools.resolved": "eve_py.tools._resolved",
}
"""Old module path -> where it lives now."""


class _MovedModules(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Answers an old module path with the module at its new path."""

    def find_spec(
        self, fullname: str, path: Sequence[str] | None, target: ModuleType | None = None
    ) -> importlib.machinery.ModuleSpec | None:
        if fullname not in MODULES:
            return None
        return importlib.util.spec_from_loader(fullname, self)

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> ModuleType:
        new = MODULES[spec.name]
        warnings.warn(
            f"{spec.name} moved to {new}; import it from there (the old path goes in the next release)",
            DeprecationWarning,
            stacklevel=2,
        )
        return importlib.import_module(new)

    def exec_module(self, module: ModuleType) -> None:
        """The module was imported at its new path already."""


_FINDER = _MovedModules()


def install() -> None:
    """Put the finder first on `sys.meta_path` (ahead of the path finder, which would load a second copy)."""
    if _FINDER not in sys.meta_path:
        sys.meta_path.insert(0, _FINDER)


def moved_names(package: str, names: Mapping[str, str]) -> Callable[[str], object]:
    """A package's `__getattr__` for names that moved out of it: warns, then returns the name from its new module.

    Args:
        package: The package's name, for the messages.
        names: Each moved name -> the module that holds it now, or `module:new_name` where it was renamed too.
    """

    def __getattr__(name: str) -> object:
        where = names.get(name)
        if where is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        module, _, new_name = where.partition(":")
        new_name = new_name or name
        warnings.warn(
            f"{package}.{name} moved to {module}.{new_name}; import it from there "
            "(the old name goes in the next release)",
            DeprecationWarning,
            stacklevel=2,
        )
        return getattr(importlib.import_module(module), new_name)

    return __getattr__
