"""The layout `docs/architecture.md` draws holds: floors, no circles, small modules and functions.

Every import counts, from the module's body, a function's body or an `if TYPE_CHECKING:` block:
the graph is read from the source, not from what happens to run.
"""

from __future__ import annotations

import ast
import importlib
import sys
import warnings
from collections.abc import Iterator
from pathlib import Path

import pytest

import eve_py
from eve_py._moved import MODULES as MOVED

ROOT = Path(eve_py.__file__).resolve().parent

FLOORS: list[tuple[str, set[str]]] = [
    ("basement", {"eve_py.errors", "eve_py._json", "eve_py._camel", "eve_py._lru", "eve_py._version"}),
    ("basement", {"eve_py._loading", "eve_py._moved", "eve_py._fields"}),
    ("ground: the shared vocabulary", {"eve_py.protocol"}),
    ("parts", {"eve_py._context", "eve_py.models", "eve_py.resolvers", "eve_py.sessions", "eve_py.client"}),
    ("parts", {"eve_py.testing"}),
    ("authoring", {"eve_py.authoring"}),
    ("loading", {"eve_py.tools", "eve_py.compiler", "eve_py.mcp.connect", "eve_py.agent"}),
    ("deciding", {"eve_py.parking"}),
    ("observing", {"eve_py.tracing"}),
    ("acting", {"eve_py.harness"}),
    ("serving", {"eve_py.server", "eve_py.mcp.serve", "eve_py.mcp.channel", "eve_py.evals"}),
    ("entry", {"eve_py", "eve_py.mcp", "eve_py.cli", "eve_py.__main__"}),
]
"""Each group of packages, lowest first; a module may import its own group's and lower groups' modules."""


def _modules() -> dict[str, Path]:
    found: dict[str, Path] = {}
    for path in sorted(ROOT.rglob("*.py")):
        if "template" in path.relative_to(ROOT).parts:  # `eve-py init`'s app files, not the library
            continue
        parts = ["eve_py", *path.relative_to(ROOT).with_suffix("").parts]
        if parts[-1] == "__init__":
            parts.pop()
        found[".".join(parts)] = path
    return found


MODULES = _modules()


def _target(name: str) -> str:
    """The module an imported name lives in: itself if a module, else the nearest enclosing module."""
    while name not in MODULES:
        name = name.rpartition(".")[0]
    return name


def _imports(module: str) -> set[str]:
    path = MODULES[module]
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found |= {_target(a.name) for a in node.names if a.name.split(".")[0] == "eve_py"}
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*anchor, base] if base else anchor)
            if base.split(".")[0] != "eve_py":
                continue
            found |= {_target(f"{base}.{a.name}") for a in node.names}
    found.discard(module)
    return found


GRAPH = {module: _imports(module) for module in MODULES}


def _inside(module: str, package: str) -> bool:
    """Whether `module` is `package` or one of its submodules."""
    return module == package or module.startswith(package + ".")


def _floor(module: str) -> int:
    best, floor = "", -1
    for index, (_, packages) in enumerate(FLOORS):
        for package in packages:
            if _inside(module, package) and len(package) > len(best):
                best, floor = package, index
    assert floor >= 0, f"{module} is on no floor: add its package to FLOORS and to docs/architecture.md"
    return floor


def test_every_module_is_on_a_floor() -> None:
    for module in MODULES:
        _floor(module)


def test_no_import_runs_up_a_floor() -> None:
    upward = [
        f"{module} ({FLOORS[_floor(module)][0]}) imports {imported} ({FLOORS[_floor(imported)][0]})"
        for module, imported_set in GRAPH.items()
        for imported in sorted(imported_set)
        if _floor(imported) > _floor(module)
    ]
    assert upward == []


def _cycle() -> list[str] | None:
    """One import cycle among eve-py's modules, or None."""
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(module: str) -> list[str] | None:
        state[module] = 1
        stack.append(module)
        for imported in sorted(GRAPH[module]):
            if state.get(imported) == 1:
                return [*stack[stack.index(imported) :], imported]
            if imported not in state and (found := visit(imported)) is not None:
                return found
        stack.pop()
        state[module] = 2
        return None

    for module in sorted(GRAPH):
        if module not in state and (found := visit(module)) is not None:
            return found
    return None


def test_no_two_modules_import_each_other_even_through_others() -> None:
    assert _cycle() is None


def _package_imports(package: str) -> set[str]:
    return {
        imported
        for module, imported_set in GRAPH.items()
        if _inside(module, package)
        for imported in imported_set
        if not _inside(imported, package)
    }


def test_the_vocabulary_imports_only_errors_and_json_helpers() -> None:
    assert _package_imports("eve_py.protocol") <= {"eve_py.errors", "eve_py._json", "eve_py._camel"}


def test_the_client_imports_only_the_vocabulary_errors_and_json_helpers() -> None:
    outside = {m for m in _package_imports("eve_py.client") if not _inside(m, "eve_py.protocol")}
    assert outside <= {"eve_py.errors", "eve_py._json", "eve_py._camel"}


SEAMS: dict[str, str] = {
    # The engine's decisions: parking has no public face by design (docs/architecture.md).
    "eve_py.parking._accept": "the harness carries out parking's decision on answers",
    "eve_py.parking._answers": "the answer rules, read by every wire that renders or checks an answer",
    "eve_py.parking._expire": "the harness carries out expiry",
    "eve_py.parking._links": "answer links, signed and checked by the harness and the server",
    "eve_py.parking._park": "the harness carries out which calls park",
    "eve_py.parking._resolutions": "how a request ended, also traced",
    "eve_py.parking._results": "the one result per call, built for the harness",
    "eve_py.parking._settle": "the harness carries out a settlement",
    # How a tool is written and run: the loading floor and the engine share it.
    "eve_py.authoring._approval": "approval policies' decisions, read wherever a call is approved",
    "eve_py.authoring._signature": "a tool's executor plan, run by the agent loop and the MCP server",
    "eve_py.resolvers._plan": "resolver plans, built into a tool's executor plan",
    "eve_py.resolvers._solver": "resolver parameters, solved for a tool's executor plan",
    "eve_py.tools._ask_question": "the framework tools every app has",
    "eve_py.tools._client": "client tools offered for one turn",
    "eve_py.tools._resolved": "a tool's input checks",
    "eve_py.tracing._spans": "the harness's tracing hooks",
    "eve_py.models._registry": "choosing a model from its string",
    "eve_py.models._http": "the provider client's retry notices, shown by the terminal chat",
    "eve_py.sessions._opening": "opening a store from its URL (the command line)",
    "eve_py.sessions._feed": "the store's change feed, followed by the server's streams",
    "eve_py.sessions._copying": "copying sessions between stores (`eve-py store copy`)",
    # The engine's and the server's seams for the floors above them.
    "eve_py.harness._unit": "`Acknowledge`, the callback a server's operation hands a session",
    "eve_py.harness._accept": "who may approve, for the server's approval pages",
    "eve_py.harness._links": "answer links, for the server's link route",
    "eve_py.server._auth": "the API token's environment variable, for `eve-py serve`",
    "eve_py.mcp.serve._server": "the MCP tools server, for the MCP channel",
    "eve_py.evals._backend": "the HTTP backend of `eve-py eval --url`",
    "eve_py.evals._definition": "evals' defaults, for `eve-py eval`",
    "eve_py.cli._main": "the command line's entry point, for `python -m eve_py`",
}
"""The private modules another package may import, and why (docs/architecture.md, "Seams").
Any other import goes through the package's face (its `__init__`)."""


def _package_of(module: str) -> str:
    return module if MODULES[module].name == "__init__.py" else module.rpartition(".")[0]


def _private(module: str) -> bool:
    return any(part.startswith("_") and part != "__main__" for part in module.split(".")[1:])


def test_imports_into_another_packages_private_modules_go_through_its_face_or_a_seam() -> None:
    reaching = sorted(
        f"{module} -> {imported}"
        for module, imported_set in GRAPH.items()
        for imported in imported_set
        if _private(imported) and not _inside(module, _package_of(imported)) and imported not in SEAMS
    )
    assert reaching == [], "import from the package's face, or add a documented seam"
    used = {imported for module, imported_set in GRAPH.items() for imported in imported_set}
    assert set(SEAMS) <= used, "a seam nobody uses any more: drop it"


def _functions(tree: ast.AST) -> Iterator[ast.FunctionDef | ast.AsyncFunctionDef]:
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            yield node


@pytest.mark.filterwarnings("always::UserWarning")
def test_modules_over_400_lines_and_functions_over_80_are_reported() -> None:
    """Sizes are a budget, not a wall (issue 37): one concept is never split to meet a number, so
    what goes over is reported in pytest's warnings summary, for a reviewer to weigh."""
    long_modules = {m: n for m, p in MODULES.items() if (n := len(p.read_text(encoding="utf-8").splitlines())) > 400}
    long_functions = [
        f"{module}.{node.name}: {size} lines"
        for module, path in MODULES.items()
        for node in _functions(ast.parse(path.read_text(encoding="utf-8")))
        if (size := (node.end_lineno or node.lineno) - node.lineno + 1) > 80
    ]
    for module, size in sorted(long_modules.items()):
        warnings.warn(f"{module} has {size} lines (budget ~400)", SizeBudgetWarning, stacklevel=1)
    for function in long_functions:
        warnings.warn(f"{function} (budget ~80)", SizeBudgetWarning, stacklevel=1)
    assert MODULES  # the walk found the package


class SizeBudgetWarning(UserWarning):
    """A module or function over its size budget."""


def test_every_module_opens_with_its_docstring() -> None:
    missing = [m for m, p in MODULES.items() if ast.get_docstring(ast.parse(p.read_text(encoding="utf-8"))) is None]
    assert missing == []


@pytest.mark.parametrize("old", sorted(MOVED))
def test_a_moved_module_path_still_imports_with_a_deprecation_warning(old: str) -> None:
    if old.startswith("eve_py.mcp."):
        pytest.importorskip("mcp")
    sys.modules.pop(old, None)  # an alias imported before would not warn again
    with pytest.warns(DeprecationWarning, match="moved to"):
        module = importlib.import_module(old)
    assert module is importlib.import_module(MOVED[old])


def test_names_moved_out_of_a_package_still_resolve_with_a_deprecation_warning() -> None:
    import eve_py.harness
    import eve_py.parking
    from eve_py.protocol import InputRequest, TurnResult, TurnResultStatus

    with pytest.warns(DeprecationWarning, match="eve_py.protocol.InputRequest"):
        assert eve_py.parking.InputRequest is InputRequest
    with pytest.warns(DeprecationWarning, match="eve_py.protocol.TurnResult"):
        assert eve_py.harness.TurnResult is TurnResult
    with pytest.warns(DeprecationWarning, match="TurnResultStatus"):
        assert eve_py.harness.TurnStatus is TurnResultStatus
    with pytest.raises(AttributeError):
        eve_py.harness.NoSuchName  # noqa: B018
