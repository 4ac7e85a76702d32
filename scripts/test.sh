#!/usr/bin/env bash
# The whole test suite, after setting up everything it needs: lint, format check, types, pytest.
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/bootstrap.sh --dev
.venv/bin/ruff check .
.venv/bin/ruff format --check .
.venv/bin/mypy
./scripts/ensure-chromium.sh
# Two processes (pytest-xdist): most tests wait on real subprocesses, workers and servers.
.venv/bin/python -m pytest -n 2 "$@"
