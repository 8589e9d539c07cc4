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
from tests.test_getting_started import blocks, commands, normalize, output_pattern

SECTION = ("## `eve-py run`", "\n## ")


def section() -> str:
    page = (REPO / "docs" / "cli.md").read_text(encoding="utf-8")
    start = page.index(SECTION[0])
    end = page.index(SECTION[1], start + len(SECTION[0]))
    return page[start:end]


@pytest.mark.timeout(300)
def test_the_run_section_of_docs_cli_prints_what_it_shows(tmp_path: Path) -> None:
    env = {key: value for key, value in os.environ.items() if not key.startswith(("EVE_", "AI_GATEWAY_"))}
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env['PATH']}"
    subprocess.run(["eve-py", "init", "my-app"], cwd=tmp_path, env=env, check=True, capture_output=True)
    ran = 0
    for block in blocks(section()):
        if block.title is not None:
            (tmp_path / block.title).write_text(block.body, encoding="utf-8")
        elif block.lang == "console":
            for command, shown in commands(block.body):
                done = subprocess.run(
                    ["bash", "-o", "pipefail", "-c", f"{{ {command}\n}} 2>&1"],
                    cwd=tmp_path,
                    capture_output=True,
                    text=True,
                    env=env,
                    timeout=120,
                )
                output = normalize(done.stdout)
                assert done.returncode == 0, f"$ {command}\n{output}"
                assert output_pattern(shown).fullmatch(output), (
                    f"$ {command}\nshown:\n" + "\n".join(shown) + f"\nwas:\n{output}"
                )
                ran += 1
    assert ran >= 6, "the section's commands were found"
