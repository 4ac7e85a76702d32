"""What a commit becomes: its text, type, files and symbols, and the commits that are skipped.

Each test makes a real repository with `git` and reads it with `import_history` into a real
database in the test's data dir.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from claude_mem.history.importer import HistoryStats, import_history
from claude_mem.store import Database
from tests.git_repos import Repo


@pytest.fixture
def repo(tmp_path: Path) -> Repo:
    return Repo(tmp_path / "shop")


def imported(db: Database, repo: Repo, **options: Any) -> HistoryStats:
    return import_history(db, str(repo.path), **options)


def by_sha(db: Database) -> dict[str, dict[str, Any]]:
    """Every commit read, by hash: its observation (with decoded lists), or its skip reason."""
    rows = db.read().execute(
        """SELECT g.sha, g.skipped, g.observation_id, o.* FROM git_commits g
           LEFT JOIN observations o ON o.id = g.observation_id"""
    )
    found: dict[str, dict[str, Any]] = {}
    for row in rows:
        record = dict(row)
        for name in ("facts", "concepts", "files_modified"):
            if record.get(name) is not None:
                record[name] = json.loads(record[name])
        found[record["sha"]] = record
    return found


def test_a_body_becomes_the_narrative_without_its_trailers(db: Database, repo: Repo) -> None:
    sha = repo.commit(
        {"retry.py": "RETRIES = 3\n"},
        "Cap the gateway retries\n\nThe payment gateway bans clients that retry more than\n"
        "three times a minute.\n\nSigned-off-by: Ada Lovelace <ada@example.com>\n"
        "Co-authored-by: Bob <bob@example.com>\n",
    )
    stats = imported(db, repo)
    row = by_sha(db)[sha]
    assert stats.commits == 1
    assert stats.complete
    assert row["title"] == "Cap the gateway retries"
    assert row["narrative"] == (
        "The payment gateway bans clients that retry more than\nthree times a minute."
    )
    assert "Signed-off-by" not in row["narrative"]
    assert "Co-authored" not in row["narrative"]
    assert row["subtitle"] == "commit " + sha[:7] + " · 2023-11-14 · Ada Lovelace"
    assert row["created_at"] == repo.clock * 1000
    assert f"commit {sha}" in row["facts"]
    assert "added retry.py (+1 -0)" in row["facts"]
    assert row["files_modified"] == ["retry.py"]
    assert row["source"] == "git"
    assert "history" in row["concepts"]


def test_a_subject_only_commit_is_kept_with_an_empty_narrative(db: Database, repo: Repo) -> None:
    sha = repo.commit({"cart.py": "ITEMS = []\n"}, "Add a shopping cart")
    imported(db, repo)
    row = by_sha(db)[sha]
    assert (row["title"], row["narrative"], row["type"]) == ("Add a shopping cart", "", "feature")


@pytest.mark.parametrize(
    ("message", "kind"),
    [
        ("Fix the crash on an empty cart", "bugfix"),
        ("fix(cart): an empty cart no longer divides by zero", "bugfix"),
        ("Add coupons to the checkout", "feature"),
        ("feat: coupons", "feature"),
        ("Extract the tax rules into their own module", "refactor"),
        ("refactor: one price type", "refactor"),
        ("Bump the copyright year in the footer", "change"),
        ("Keep prices in cents\n\nWe chose integers over floats: rounding lost cents.", "decision"),
        ("Pin the parser\n\nThe parser must stay at 2.x until the schema moves.", "decision"),
        ("Store carts in redis\n\nWe keep the session store in redis for now.", "decision"),
        # a repair's body explains the fix, whatever its words: no rule is set
        ("fix: totals round once\n\nThe total must never be rounded twice.", "bugfix"),
        ("Fix typo in the checkout page\n\nWe always spell it 'cancelled'.", "bugfix"),
        ("docs: typos\n\nDon't capitalise after a colon.", "change"),
        ("Fix the crash on an empty cart\n\nAn empty cart must never divide by zero.", "bugfix"),
    ],
)
def test_commits_are_typed_by_rule(db: Database, repo: Repo, message: str, kind: str) -> None:
    sha = repo.commit({"shop.py": "x = 1\n"}, message)
    imported(db, repo)
    assert by_sha(db)[sha]["type"] == kind


def test_the_symbols_a_commit_changes_are_named_with_their_file(db: Database, repo: Repo) -> None:
    before = (
        "import time\n\n\ndef retry_count():\n    return 5\n\n\n"
        "class Gateway:\n    def charge(self, cents):\n        return cents\n\n"
        "    def refund(self, cents):\n        return -cents\n"
    )
    repo.commit({"src/pay.py": before}, "Add the gateway")
    after = before.replace("return 5", "return 3").replace("return -cents", "return -abs(cents)")
    sha = repo.commit({"src/pay.py": after}, "Fix retries and refunds")
    imported(db, repo)
    facts = by_sha(db)[sha]["facts"]
    assert "touches retry_count in src/pay.py" in facts
    assert "touches refund in src/pay.py" in facts  # a method, inside its class
    assert "touches charge in src/pay.py" not in facts
    assert "changed src/pay.py (+2 -2)" in facts


def test_a_revert_is_a_decision_that_names_the_commit(db: Database, repo: Repo) -> None:
    first = repo.commit({"limits.py": "RETRIES = 5\n"}, "Raise the retry limit to 5")
    repo.commit({"other.py": "y = 1\n"}, "Add the other module")
    repo.clock += 60
    repo.git("revert", "--no-edit", first)
    sha = repo.git("rev-parse", "HEAD")
    imported(db, repo)
    row = by_sha(db)[sha]
    assert row["type"] == "decision"
    assert row["title"] == 'Revert "Raise the retry limit to 5"'
    assert f"reverts commit {first}" in row["facts"]
    assert "deleted limits.py (+0 -1)" in row["facts"]


def test_merges_without_a_body_are_skipped_and_with_one_kept(db: Database, repo: Repo) -> None:
    repo.commit({"a.py": "a = 1\n"}, "Add a")
    repo.git("checkout", "-q", "-b", "topic")
    repo.commit({"b.py": "b = 1\n"}, "Add b")
    repo.git("checkout", "-q", "main")
    repo.commit({"c.py": "c = 1\n"}, "Add c")
    repo.clock += 60
    repo.git("merge", "-q", "--no-ff", "-m", "Merge branch 'topic'", "topic")
    plain = repo.git("rev-parse", "HEAD")
    repo.git("checkout", "-q", "-b", "second", "HEAD~1")
    repo.commit({"d.py": "d = 1\n"}, "Add d")
    repo.git("checkout", "-q", "main")
    repo.clock += 60
    repo.git("merge", "-q", "--no-ff", "-m",
             "Merge the d work\n\nd goes in before the release, c and d are tested together.",
             "second")  # fmt: skip
    explained = repo.git("rev-parse", "HEAD")
    stats = imported(db, repo)
    rows = by_sha(db)
    assert rows[plain]["skipped"] == "merge"
    assert rows[plain]["observation_id"] is None
    assert rows[explained]["skipped"] is None
    assert rows[explained]["title"] == "Merge the d work"
    assert "merges 2 lines of history" in rows[explained]["facts"]
    assert stats.skipped["merge"] == 1
    assert stats.commits == 5


def test_a_rename_names_both_paths(db: Database, repo: Repo) -> None:
    body = "".join(f"line {n}\n" for n in range(30))
    repo.commit({"old name.py": body}, "Add the module")
    (repo.path / "src").mkdir()
    repo.git("mv", "old name.py", "src/new_näme.py")
    sha = repo.commit({}, "Move the module under src")
    imported(db, repo)
    row = by_sha(db)[sha]
    assert row["files_modified"] == ["src/new_näme.py", "old name.py"]
    assert "renamed old name.py → src/new_näme.py (+0 -0)" in row["facts"]
    assert row["type"] == "refactor"


def test_bot_whitespace_and_trivial_commits_are_skipped(db: Database, repo: Repo) -> None:
    repo.commit({"app.py": "def main():\n    return 1\n"}, "Add the app")
    dependabot = "dependabot[bot] <49699333+dependabot[bot]@users.noreply.github.com>"
    bump = "Bump requests from 2.31.0 to 2.32.0\n\nBumps requests."
    bot = repo.commit({"requirements.txt": "requests==2.32.0\n"}, bump, author=dependabot)
    spaces = repo.commit({"app.py": "def main():\n        return 1\n"}, "Indent with eight")
    wip = repo.commit({"app.py": "def main():\n        return 2\n"}, "wip")
    typo = repo.commit({"README.md": "Teh app\n"}, "fix typo")
    stats = imported(db, repo)
    rows = by_sha(db)
    assert rows[bot]["skipped"] == "bot"
    assert rows[spaces]["skipped"] == "format"
    assert rows[wip]["skipped"] == "trivial"
    assert rows[typo]["skipped"] == "trivial"
    assert stats.commits == 1
    assert {k: n for k, n in stats.skipped.items() if n} == {"bot": 1, "format": 1, "trivial": 2}


def test_a_fixup_folds_into_the_commit_it_amends(db: Database, repo: Repo) -> None:
    target = repo.commit({"tax.py": "RATE = 0.2\n"}, "Add the tax rate\n\nVAT for the EU.")
    repo.commit({"other.py": "o = 1\n"}, "Add the other module")
    fixup = repo.commit({"tax.py": "RATE = 0.21\n"}, "fixup! Add the tax rate")
    again = repo.commit({"tax.py": "RATE = 0.22\n"}, "fixup! fixup! Add the tax rate")
    stats = imported(db, repo)
    rows = by_sha(db)
    assert stats.skipped["folded"] == 2
    assert stats.commits == 2
    assert rows[fixup]["skipped"] == "folded"
    assert rows[fixup]["observation_id"] == rows[target]["observation_id"] is not None
    assert rows[again]["observation_id"] == rows[target]["observation_id"]


def test_a_fixup_read_in_an_earlier_batch_than_its_target_still_folds(
    db: Database, repo: Repo, monkeypatch: pytest.MonkeyPatch
) -> None:
    from claude_mem.history import importer

    monkeypatch.setattr(importer, "BATCH", 1)
    target = repo.commit({"tax.py": "RATE = 0.2\n"}, "Add the tax rate\n\nVAT for the EU.")
    fixup = repo.commit({"tax.py": "RATE = 0.21\n"}, "fixup! Add the tax rate")
    imported(db, repo)
    rows = by_sha(db)
    assert rows[fixup]["observation_id"] == rows[target]["observation_id"] is not None


def test_non_utf8_author_names_and_messages_read_correctly(
    db: Database, repo: Repo, tmp_path: Path
) -> None:
    latin = "Jos\xe9 Mu\xf1oz <jose@example.com>".encode("latin-1")
    # Raw Latin-1 bytes and no encoding header, as old tools wrote them.
    raw = repo.commit({"a.py": "a = 1\n"}, "Caf\xe9 support\n\nFor Andr\xe9.".encode("latin-1"),
                      author=latin)  # fmt: skip
    # Latin-1 with the header that says so: git re-encodes it to UTF-8 on the way out.
    (tmp_path / "message").write_bytes("Add b\n\nD\xfcsseldorf office.\n".encode("latin-1"))
    (repo.path / "b.py").write_text("b = 1\n")
    repo.git("add", "-A")
    repo.git("-c", "i18n.commitEncoding=ISO-8859-1", "commit", "-q", "-F",
             str(tmp_path / "message"), author=latin)  # fmt: skip
    declared = repo.git("rev-parse", "HEAD")
    assert "encoding ISO-8859-1" in repo.git("cat-file", "commit", declared)
    stats = imported(db, repo)
    rows = by_sha(db)
    assert stats.commits == 2
    assert rows[raw]["title"] == "Café support"
    assert rows[raw]["narrative"] == "For André."
    assert rows[raw]["subtitle"].endswith("· José Muñoz")
    assert rows[declared]["narrative"] == "Düsseldorf office."
    assert rows[declared]["subtitle"].endswith("· José Muñoz")


@pytest.mark.parametrize(
    ("subject", "skipped"),
    [("Run black", "format"), ("style: wrap long lines", "format"),
     ("Reformat the parser", "format"), ("Format code with prettier", "format"),
     ("Format the total with two decimals", None),
     ("Format dates as ISO 8601 in the export", None)],
)  # fmt: skip
def test_only_a_formatters_run_is_skipped_as_formatting(
    db: Database, repo: Repo, subject: str, skipped: str | None
) -> None:
    repo.commit({"app.py": "def total():\n    return 1\n"}, "Add the app")
    sha = repo.commit({"app.py": "def total():\n    return round(1, 2)\n"}, subject)
    imported(db, repo)
    assert by_sha(db)[sha]["skipped"] == skipped


def test_a_long_history_is_read_by_several_git_runs_each_commit_once(
    db: Database, repo: Repo, monkeypatch: pytest.MonkeyPatch
) -> None:
    from claude_mem.history import gitlog

    monkeypatch.setattr(gitlog, "CHUNK", 2)
    shas = [repo.commit({f"m{n}.py": f"X = {n}\n"}, f"Add module {n}") for n in range(5)]
    runs: list[list[str]] = []
    real = gitlog._read_part

    def counted(root: str, part: list[str]) -> Iterator[gitlog.Commit]:
        runs.append(part)
        return real(root, part)

    monkeypatch.setattr(gitlog, "_read_part", counted)
    stats = imported(db, repo)
    assert stats.commits == 5
    assert [len(part) for part in runs] == [2, 2, 1]
    assert sorted(by_sha(db)) == sorted(shas)
