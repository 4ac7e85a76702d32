#!/usr/bin/env bash
# Create .venv and install the project with pinned versions. Idempotent and quick when nothing
# changed: the install is redone only when pyproject.toml or constraints.txt change.
set -euo pipefail
cd "$(dirname "$0")/.."

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

stamp_file=.venv/.installed
wanted=$(cat pyproject.toml constraints.txt | sha256sum | cut -c1-16)
if [ -x .venv/bin/python ] && [ "$(cat "$stamp_file" 2>/dev/null)" = "$wanted" ]; then
    exit 0
fi
python=$(pick_python)
[ -x .venv/bin/python ] || "$python" -m venv .venv
.venv/bin/python -m pip install --quiet --disable-pip-version-check --upgrade "pip>=24"
.venv/bin/python -m pip install --quiet --disable-pip-version-check -c constraints.txt -e '.[dev]'
echo "$wanted" > "$stamp_file"
