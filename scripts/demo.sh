#!/usr/bin/env bash
# The main job on embedded defaults: no API key, no server to install.
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/bootstrap.sh
exec .venv/bin/claude-mem demo "$@"
