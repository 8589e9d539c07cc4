"""docs/getting-started.md, run as a new user would: every shell block, in order, in an empty folder.

The install block runs for real (a fresh virtualenv, `pip install` of this checkout), every file
block with a `title="..."` is written where its title says when the page reaches it, and every
`$ command` of a `console` block runs with that virtualenv first on PATH. Its output must be the
one the page shows, where `...` stands for any text (a line of only `...` for any lines), a
`ses_...` for a session id and `0.01 s` for any duration. In a chat transcript the text typed
after a prompt (`you > `, `): `, `[y/n] `) is sent on stdin and is not expected in the output.
"""

from __future__ import annotations

import os
import re
import subprocess
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.conftest import REPO

PAGE = REPO / "docs" / "getting-started.md"

_FENCE = re.compile(r"^```(?P<lang>\w+)(?:\s+title=\"(?P<title>[^\"]+)\")?\n(?P<body>.*?)^```$", re.M | re.S)
_TYPED = re.compile(r"^(?P<prompt>you > |.*\): |.*\[y/n\] )(?P<typed>\S.*)$")
"""A transcript line where a person typed: what was typed follows the prompt."""
_DURATION = re.compile(r"\d+\.\d+ s\b")


@dataclass(frozen=True)
class Block:
    lang: str
    title: str | None
    body: str


def blocks(page: str) -> list[Block]:
    return [Block(m["lang"], m["title"], m["body"]) for m in _FENCE.finditer(page)]


def commands(console: str) -> list[tuple[str, list[str]]]:
    """The `$ command` lines of a console block, each with the lines shown after it."""
    found: list[tuple[str, list[str]]] = []
    for line in console.splitlines():
        if line.startswith("$ "):
            found.append((line[2:], []))
        else:
            assert found, f"output before any command: {line!r}"
            found[-1][1].append(line)
    return found


def typed_and_shown(transcript: list[str]) -> tuple[str, list[str]]:
    """What a person typed (as stdin) and what the program wrote (the transcript without it)."""
    typed, shown = [], []
    pending = ""
    for line in transcript:
        if pending:  # the program's next words, on the prompt's line
            shown.append(pending + line)
            pending = ""
            continue
        match = _TYPED.match(line)
        if match is None:
            shown.append(line)
            continue
        typed.append(match["typed"] + "\n")
        # The program goes on writing on the prompt's line (the Enter was the terminal's echo).
        pending = match["prompt"]
    if pending:
        shown.append(pending)
    return "".join(typed), shown


def line_pattern(shown: str) -> str:
    """One shown line as a regex: `...` is any text, a duration any duration."""
    any_text = [
        r"\d+\.\d+ s".join(re.escape(piece) for piece in _DURATION.split(part)) for part in shown.rstrip().split("...")
    ]
    return ".*".join(any_text)


def output_pattern(shown: list[str]) -> re.Pattern[str]:
    return re.compile("".join(r"(?:.*\n)*?" if line.strip() == "..." else line_pattern(line) + r"\n" for line in shown))


def normalize(output: str) -> str:
    lines = [line.rstrip() for line in output.splitlines()]
    while lines and not lines[-1]:
        lines.pop()
    return "".join(line + "\n" for line in lines)


def install(block: Block, folder: Path) -> None:
    """The install block, with `.` (a checkout of the repository) meaning this checkout."""
    for line in block.body.splitlines():
        command = line.split("#", 1)[0].strip()
        if not command or command.startswith("source "):
            continue  # activating means: the virtualenv first on PATH, which every command gets
        command = command.replace("'.[", f"'{REPO}[").replace(" -e .", f" -e {REPO}")
        done = subprocess.run(command, shell=True, cwd=folder, capture_output=True, text=True, timeout=600)
        assert done.returncode == 0, f"{command}\n{done.stdout}\n{done.stderr}"


def run(
    command: str,
    transcript: list[str],
    folder: Path,
    *,
    bin_dir: Path | None = None,
    unset: tuple[str, ...] = ("EVE_", "VIRTUAL_ENV"),
) -> None:
    """Run `command` in `folder` with `bin_dir` (default: the folder's `.venv/bin`) first on PATH and
    no variable starting with one of `unset`; its output must be the one `transcript` shows."""
    typed, shown = typed_and_shown(transcript)
    env = {key: value for key, value in os.environ.items() if not key.startswith(unset)}
    env["PATH"] = f"{bin_dir or folder / '.venv' / 'bin'}{os.pathsep}{env['PATH']}"
    done = subprocess.run(
        ["bash", "-o", "pipefail", "-c", f"{{ {command}\n}} 2>&1"],
        cwd=folder,
        input=typed,
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )
    output = normalize(done.stdout)
    assert done.returncode == 0, f"$ {command}\n{output}{done.stderr}"
    assert output_pattern(shown).fullmatch(output), f"$ {command}\nshown:\n" + "\n".join(shown) + f"\nwas:\n{output}"


@pytest.mark.timeout(900)
def test_every_shell_block_of_getting_started_runs_and_prints_what_the_page_shows(tmp_path: Path) -> None:
    page = blocks(PAGE.read_text(encoding="utf-8"))
    assert [b.lang for b in page if b.lang == "bash"] == ["bash"], "one install block"
    ran = 0
    for block in page:
        if block.lang == "bash":
            install(block, tmp_path)
        elif block.title is not None:
            path = tmp_path / block.title
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(block.body, encoding="utf-8")
        elif block.lang == "console":
            for command, transcript in commands(block.body):
                run(command, transcript, tmp_path)
                ran += 1
    assert ran >= 8, "the page's commands were found"
