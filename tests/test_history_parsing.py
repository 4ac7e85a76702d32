"""`git log` output that could fool a parser: messages that look like its markers or like a
patch, odd paths, binary files, huge commits and submodules, all read from real repositories."""

from __future__ import annotations

from pathlib import Path

import pytest

from claude_mem.history import gitlog
from claude_mem.history.importer import import_history
from claude_mem.store import Database
from tests.git_repos import Repo
from tests.test_history_commits import by_sha


@pytest.fixture
def repo(tmp_path: Path) -> Repo:
    return Repo(tmp_path / "odd")


def read_one(repo: Repo, sha: str) -> gitlog.Commit:
    [commit] = gitlog.read(repo.path, [sha])
    return commit


def test_a_message_holding_separators_and_a_patch_is_read_whole(repo: Repo) -> None:
    message = (
        "Explain the markers\n\n\x1e\x1fclaude-mem\x1e fake header\x1d\n"
        "diff --git a/fake.py b/fake.py\n@@ -1 +1 @@ def fake():\n+fake line\n"
        "\x1d\nThe end."
    )
    first = repo.commit({"real.py": "r = 1\n"}, message)
    second = repo.commit({"next.py": "n = 1\n"}, "Add next\n\nAfter the odd one.")
    commits = list(gitlog.read(repo.path, [second, first]))
    assert [c.sha for c in commits] == [second, first]
    assert commits[1].message == message
    assert [f.path for f in commits[1].files] == ["real.py"]
    assert commits[1].symbols == []
    assert commits[0].body == "After the odd one."


def test_odd_paths_binary_files_and_removed_lines_that_look_like_headers(repo: Repo) -> None:
    repo.commit({"db/schema.sql": "-- the accounts\nCREATE TABLE a (id INT);\n"}, "Add schema")
    names: dict[str, str | bytes | None] = {
        "with space/a b/c.txt": "x\n", 'quo"te\tand tab.txt': "y\n", "ünï/cödé.py": "z\n",
        "image.png": b"\x89PNG\r\n\x1a\n\x00\x00binary",
    }  # fmt: skip
    sha = repo.commit({**names, "db/schema.sql": "CREATE TABLE a (id INT);\n"}, "Add files")
    commit = read_one(repo, sha)
    changes = {f.path: (f.status, f.added, f.removed) for f in commit.files}
    assert changes == {
        "with space/a b/c.txt": ("added", 1, 0),
        'quo"te\tand tab.txt': ("added", 1, 0),
        "ünï/cödé.py": ("added", 1, 0),
        "image.png": ("added", 0, 0),
        "db/schema.sql": ("modified", 0, 1),  # the removed "-- the accounts" line counts
    }


def test_a_renamed_path_with_odd_bytes_keeps_both_names(repo: Repo) -> None:
    content = "".join(f"row {n}\n" for n in range(20))
    repo.commit({"old\tname.txt": content}, "Add the table")
    repo.git("mv", "old\tname.txt", "nëw name.txt")
    sha = repo.commit({}, "Rename the table")
    [change] = read_one(repo, sha).files
    assert (change.old_path, change.path, change.status) == ("old\tname.txt", "nëw name.txt",
                                                              "renamed")  # fmt: skip


def test_a_huge_commit_keeps_bounded_files_and_cuts_long_lines(
    db: Database, repo: Repo, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(gitlog, "LINE", 256)
    files: dict[str, str | bytes | None] = {f"gen/f{n:03}.py": f"v = {n}\n" for n in range(60)}
    files["bundle.min.js"] = "var a=1;" * 5000 + "\n" + "+diff --git a/x b/x\n"
    sha = repo.commit(files, "Generate the client\n\nMade by the generator.")
    commit = read_one(repo, sha)
    assert len(commit.files) == gitlog.FILES
    assert commit.more_files == 61 - gitlog.FILES
    import_history(db, str(repo.path))
    facts = by_sha(db)[sha]["facts"]
    assert f"and {61 - gitlog.FILES} more files" in facts


def test_a_submodule_change_is_a_changed_path(repo: Repo, tmp_path: Path) -> None:
    inner = Repo(tmp_path / "inner")
    inner.commit({"lib.py": "l = 1\n"}, "Add lib")
    repo.commit({"main.py": "m = 1\n"}, "Add main")
    repo.git(
        "-c",
        "protocol.file.allow=always",
        "submodule",
        "add",
        "-q",
        str(inner.path),
        "vendor/inner",
    )
    sha = repo.commit({}, "Vendor the inner library\n\nPinned for the release.")
    changes = {f.path: f.status for f in read_one(repo, sha).files}
    assert changes == {".gitmodules": "added", "vendor/inner": "added"}


def test_a_root_commit_shows_its_files_whatever_the_user_config(
    repo: Repo, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    config = tmp_path / "user-gitconfig"
    config.write_text("[log]\n\tshowRoot = false\n[diff]\n\tnoprefix = true\n\tcontext = 9\n")
    monkeypatch.setenv("HOME", str(tmp_path))
    (tmp_path / ".gitconfig").write_text(config.read_text())
    sha = repo.commit({"first.py": "def one():\n    return 1\n"}, "Add the first module")
    commit = read_one(repo, sha)
    assert [(f.path, f.status, f.added) for f in commit.files] == [("first.py", "added", 2)]


def test_a_message_that_is_not_utf8_and_a_missing_commit(repo: Repo) -> None:
    sha = repo.commit({"a.txt": "a\n"}, b"Stra\xdfe\n\n\xff\xfe raw bytes")
    assert read_one(repo, sha).message == "Stra\xdfe\n\n\xff\xfe raw bytes"
    with pytest.raises(gitlog.GitError):
        list(gitlog.read(repo.path, ["0" * 40]))
