#!/usr/bin/env bash
# The whole test suite: installs what it needs into .venv, then ruff, mypy --strict, actionlint, pytest.
set -euo pipefail
cd "$(dirname "$0")/.."
# The browser chat test drives Debian's chromium through Playwright (never `playwright install`);
# EVE_CHROMIUM may name another Chromium build instead.
if [ ! -x "${EVE_CHROMIUM:-/usr/bin/chromium}" ]; then
    if [ "$(id -u)" = 0 ]; then
        apt-get update -qq
        DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null
    else
        sudo apt-get update -qq
        sudo DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null
    fi
fi
python3 -m venv .venv
.venv/bin/python -m pip install -q --upgrade pip
.venv/bin/python -m pip install -q -e '.[dev]'
.venv/bin/ruff check .
.venv/bin/ruff format --check .
.venv/bin/mypy eve_py
for app in fixtures/*/; do
    .venv/bin/mypy --explicit-package-bases "${app}agent"
    if [ -d "${app}evals" ]; then
        MYPYPATH="${app%/}" .venv/bin/mypy --explicit-package-bases "${app}evals"
    fi
done
.venv/bin/actionlint .github/workflows/*.yml
.venv/bin/python -m pytest -q "$@"
