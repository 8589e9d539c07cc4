"""What a person installing eve-py gets: the licence it declares, where the project lives, the docs extra."""

from __future__ import annotations

import tomllib
from importlib.metadata import metadata

from tests.conftest import REPO


def test_the_declared_apache_licence_ships_as_its_full_text() -> None:
    meta = metadata("eve-py")
    assert meta["License-Expression"] == "Apache-2.0"
    text = (REPO / "LICENSE").read_text(encoding="utf-8")
    assert text.lstrip().startswith("Apache License\n")
    assert "Version 2.0, January 2004" in text
    assert "END OF TERMS AND CONDITIONS" in text


def test_the_project_names_its_home_docs_source_and_issues() -> None:
    urls = dict(entry.split(", ", 1) for entry in metadata("eve-py").get_all("Project-URL") or [])
    assert {"Homepage", "Documentation", "Source", "Issues"} <= set(urls)
    assert all(url.startswith("https://") for url in urls.values())


def test_the_docs_extra_holds_what_mkdocs_yml_uses() -> None:
    project = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    docs = " ".join(project["optional-dependencies"]["docs"])
    config = (REPO / "mkdocs.yml").read_text(encoding="utf-8")
    assert "name: material" in config and "mkdocs-material" in docs
    assert "mkdocstrings:" in config and "mkdocstrings[python]" in docs
    assert "strict: true" in config
