"""Each public module's `__all__` names exactly what it exports, and everything listed exists."""

from __future__ import annotations

import importlib
import pkgutil

import pytest

import eve_py

MODULES = sorted(
    name
    for _, name, _ in pkgutil.walk_packages(eve_py.__path__, "eve_py.")
    if not any(part.startswith("_") for part in name.split(".")) and not name.endswith("cli.main")
)


@pytest.mark.parametrize("name", MODULES)
def test_every_public_module_declares_a_tuple_all_of_names_it_defines(name: str) -> None:
    module = importlib.import_module(name)
    assert module.__doc__, f"{name} has no module docstring"
    exported = getattr(module, "__all__", None)
    if exported is None:  # only modules that export nothing (e.g. `eve_py.cli`) may omit it
        assert not [
            n for n, v in vars(module).items() if not n.startswith("_") and getattr(v, "__module__", None) == name
        ]
        return
    assert isinstance(exported, tuple)
    assert list(exported) == sorted(exported), f"{name}.__all__ is not sorted"
    missing = [symbol for symbol in exported if not hasattr(module, symbol)]
    assert missing == []


def test_every_error_derives_from_eve_error() -> None:
    from eve_py import errors

    for symbol in errors.__all__:
        assert issubclass(getattr(errors, symbol), eve_py.EveError)


def test_the_contract_names_are_importable_from_the_top_level() -> None:
    for symbol in (
        "define_tool",
        "define_client_tool",
        "disable_tool",
        "define_agent",
        "ToolContext",
        "ToolDefinition",
        "load_agent",
        "Runtime",
        "InputResponse",
        "resolve_tool",
        "compile_app",
        "PairingError",
        "CompileError",
        "ToolDefinitionError",
        "ToolResolutionError",
    ):
        assert symbol in eve_py.__all__
