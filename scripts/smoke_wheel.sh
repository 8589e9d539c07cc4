#!/usr/bin/env bash
# Installs a built wheel into a clean venv, outside the source tree, and uses it as a person
# would: --version, a terminal chat on the fixture app with --model mock (answers piped in), a
# new app from `eve-py init` passing its own eval. Usage: scripts/smoke_wheel.sh DIST_DIR
set -euo pipefail
repo="$(cd "$(dirname "$0")/.." && pwd)"
dist="$(cd "${1:?usage: scripts/smoke_wheel.sh DIST_DIR}" && pwd)"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
wheels=("$dist"/eve_py-*.whl)
[ "${#wheels[@]}" = 1 ] || { echo "expected one eve_py wheel in $dist, found ${#wheels[@]}" >&2; exit 1; }
python3 -m venv "$work/venv"
"$work/venv/bin/python" -m pip install -q "${wheels[0]}[server,evals]"
cd "$work"  # nothing of the source tree is importable from here
version="$("$work/venv/bin/eve-py" --version)"
echo "$version"
expected="$(sed -n 's/^version = "\(.*\)"/\1/p' "$repo/pyproject.toml")"
[ "$version" = "eve-py $expected" ] || { echo "the wheel says '$version', pyproject.toml '$expected'" >&2; exit 1; }
cp -r "$repo/fixtures/agent-tools-hitl" "$work/app"
out="$(printf 'help me pick a template\n2\n' | "$work/venv/bin/eve-py" chat "$work/app" --model mock)"
echo "$out"
grep -q "agent > Recorded your pick: tpl_red." <<<"$out" || { echo "the chat did not complete the pick" >&2; exit 1; }
"$work/venv/bin/eve-py" init "$work/new-app" >/dev/null
"$work/venv/bin/eve-py" eval "$work/new-app" --model mock
echo "smoke test of ${wheels[0]##*/} passed"
