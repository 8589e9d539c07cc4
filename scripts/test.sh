#!/usr/bin/env bash
# The whole test suite: installs what it needs into .venv, then ruff, mypy --strict, pytest.
set -euo pipefail
cd "$(dirname "$0")/.."
python3 -m venv .venv
.venv/bin/python -m pip install -q --upgrade pip
.venv/bin/python -m pip install -q -e '.[dev]'
.venv/bin/ruff check .
.venv/bin/ruff format --check .
.venv/bin/mypy eve_py
for app in fixtures/*/; do
    .venv/bin/mypy --explicit-package-bases "${app}agent"
done
.venv/bin/python -m pytest -q "$@"
