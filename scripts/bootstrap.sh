#!/usr/bin/env bash
# Create .venv and install the project with pinned versions: `scripts/bootstrap.sh` the runtime
# only (what `claude-mem` needs: the demo command), `scripts/bootstrap.sh --dev` the test, lint
# and type tools too (the test command). Idempotent and quick when nothing changed: each set is
# installed again only when pyproject.toml or constraints.txt change (a stamp for each; the dev
# set holds the runtime).
set -euo pipefail
cd "$(dirname "$0")/.."

case "${1:-}" in
    "") spec=. stamps=(.venv/.installed-runtime .venv/.installed-dev) ;;
    --dev) spec=".[dev]" stamps=(.venv/.installed-dev) ;;
    *) echo "usage: scripts/bootstrap.sh [--dev]" >&2; exit 2 ;;
esac

pick_python() {
    for candidate in "${PYTHON:-}" python3.13 python3.12 python3.11 python3; do
        [ -n "$candidate" ] || continue
        command -v "$candidate" >/dev/null 2>&1 || continue
        if "$candidate" -c 'import sys; sys.exit(sys.version_info < (3, 11))' 2>/dev/null; then
            echo "$candidate"
            return 0
        fi
    done
    echo "claude-mem needs Python 3.11 or newer (set PYTHON=/path/to/python3.11)" >&2
    return 1
}

wanted=$(cat pyproject.toml constraints.txt | sha256sum | cut -c1-16)
for stamp in "${stamps[@]}"; do
    if [ -x .venv/bin/python ] && [ "$(cat "$stamp" 2>/dev/null)" = "$wanted" ]; then
        exit 0
    fi
done
python=$(pick_python)
[ -x .venv/bin/python ] || "$python" -m venv .venv
.venv/bin/python -m pip install --quiet --disable-pip-version-check --upgrade "pip>=24"
.venv/bin/python -m pip install --quiet --disable-pip-version-check -c constraints.txt -e "$spec"
echo "$wanted" > "${stamps[0]}"
