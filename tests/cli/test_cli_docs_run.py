"""docs/cli.md's `eve-py run` section, run as a reader would: its files written, each `$` command
run in a folder holding `eve-py init my-app`, and its output the one the page shows (`...` for
any text, as in `tests/test_getting_started.py`)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import REPO
from tests.test_getting_started import blocks, commands, run

SECTION = ("## `eve-py run`", "\n## ")
UNSET = ("EVE_", "AI_GATEWAY_")
"""Variables a reader's shell would not have set (the model error example needs no gateway key)."""


def section() -> str:
    page = (REPO / "docs" / "cli.md").read_text(encoding="utf-8")
    start = page.index(SECTION[0])
    end = page.index(SECTION[1], start + len(SECTION[0]))
    return page[start:end]


@pytest.mark.timeout(300)
def test_the_run_section_of_docs_cli_prints_what_it_shows(tmp_path: Path) -> None:
    env = {key: value for key, value in os.environ.items() if not key.startswith(UNSET)}
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env['PATH']}"
    subprocess.run(["eve-py", "init", "my-app"], cwd=tmp_path, env=env, check=True, capture_output=True)
    ran = 0
    for block in blocks(section()):
        if block.title is not None:
            (tmp_path / block.title).write_text(block.body, encoding="utf-8")
        elif block.lang == "console":
            for command, shown in commands(block.body):
                run(command, shown, tmp_path, bin_dir=Path(sys.executable).parent, unset=UNSET)
                ran += 1
    assert ran >= 6, "the section's commands were found"
