#!/usr/bin/env python3
"""Write README.md's settings table from the settings table in `claude_mem/settings.py`.

`.venv/bin/python scripts/gen_readme_settings.py` rewrites the block between the two marker
comments; `--check` only says whether it is current (tests/test_docs.py runs the same check).
"""

from __future__ import annotations

import sys
from pathlib import Path

from claude_mem import settings

README = Path(__file__).resolve().parents[1] / "README.md"
BEGIN = "<!-- settings table: written by scripts/gen_readme_settings.py, do not edit -->"
END = "<!-- end of settings table -->"
COMMAND = ".venv/bin/python scripts/gen_readme_settings.py"


def _default(spec: settings.Spec) -> str:
    if spec.shown_default is not None:
        return f"`{spec.shown_default}`"
    text = settings.format_value(spec.default)
    return f"`{text}`" if text else "(empty)"


def _row(spec: settings.Spec) -> str:
    what = spec.doc
    if spec.restart:
        what += " Needs `claude-mem worker restart`."
    if spec.secret:
        what += " Secret: shown masked."
    cells = (f"`{spec.key}`", _default(spec), spec.allowed(), what)
    return "| " + " | ".join(cell.replace("|", "\\|") for cell in cells) + " |"


def table() -> str:
    """The settings table in Markdown, one row per setting in the table's order."""
    rows = [_row(spec) for spec in settings.SPECS.values()]
    return "\n".join(["| setting | default | accepts | what it does |", "|---|---|---|---|", *rows])


def rewritten(readme: str) -> str:
    """`readme` with the block between the markers replaced by the current table."""
    head, found, rest = readme.partition(BEGIN)
    _, ended, tail = rest.partition(END)
    if not found or not ended:
        raise ValueError(f"README.md lacks the markers {BEGIN!r} … {END!r}")
    return f"{head}{BEGIN}\n{table()}\n{END}{tail}"


def main(argv: list[str]) -> int:
    text = README.read_text("utf-8")
    current = rewritten(text)
    if "--check" in argv:
        if current != text:
            print(f"README.md's settings table is out of date; run {COMMAND}", file=sys.stderr)
            return 1
        return 0
    README.write_text(current, "utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
