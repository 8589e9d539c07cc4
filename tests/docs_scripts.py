"""Running a page's Node example (a ```js title="NAME"``` block of `docs/`) as a reader copies it."""

from __future__ import annotations

import os
from pathlib import Path

import anyio

from tests.conftest import REPO
from tests.server.helpers import eve_serve

__all__ = ("run_docs_script",)


async def run_docs_script(
    page: str, title: str, folder: Path, node: Path, env: dict[str, str], store: Path, token: str, *, runs: int = 2
) -> list[list[str]]:
    """Write `docs/PAGE`'s `title` block into `folder` (beside its node_modules), run it `runs` times
    against one `eve-py serve` on `store`; each run's stdout lines.

    `env` maps variable names to a path under the server's URL (`{"EVE_AG_UI": "/ag-ui"}`);
    `EVE_API_TOKEN` is `token`.
    """
    text = (REPO / "docs" / page).read_text(encoding="utf-8")
    source = text.split(f'```js title="{title}"\n', 1)[1].split("```", 1)[0]
    script = folder / f"docs_{title}"
    script.write_text(source, encoding="utf-8")
    outputs: list[list[str]] = []
    try:
        async with eve_serve(store, token) as (url, _, _):
            environ = {**os.environ, "EVE_API_TOKEN": token} | {name: url + path for name, path in env.items()}
            for _ in range(runs):
                with anyio.fail_after(60):
                    done = await anyio.run_process([str(node), str(script)], cwd=folder, env=environ, check=False)
                assert done.returncode == 0, done.stderr.decode()[-2000:]
                outputs.append(done.stdout.decode().splitlines())
    finally:
        script.unlink()
    return outputs
