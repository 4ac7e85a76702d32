"""Tests for the cwd -> project resolver, on real folders and real git repositories."""

from __future__ import annotations

import ast
import dataclasses
import os
import re
import shutil
import string
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from claude_mem import project
from claude_mem.project import (
    IGNORE_FILE,
    UNKNOWN_PROJECT,
    ProjectIdentity,
    matches_exclusion,
    parse_patterns,
    resolve_project,
)
from tests.scaling import assert_linear

needs_git = pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")

HOME = "/home/dev"


def git(cwd: Path, *args: str) -> None:
    """Run git isolated from the developer's and the system's configuration."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    env.update(GIT_CONFIG_GLOBAL=os.devnull, GIT_CONFIG_NOSYSTEM="1")
    config = [
        "-c",
        "user.name=Test",
        "-c",
        "user.email=test@example.com",
        "-c",
        "init.defaultBranch=main",
        "-c",
        "protocol.file.allow=always",
        "-c",
        "commit.gpgsign=false",
    ]
    subprocess.run(["git", *config, *args], cwd=cwd, env=env, check=True, capture_output=True)


def make_repo(path: Path) -> Path:
    """A real repository with one commit (worktrees and submodules need a commit)."""
    path.mkdir(parents=True)
    git(path, "init", "-q")
    (path / "README.md").write_text("hello\n", encoding="utf-8")
    git(path, "add", "README.md")
    git(path, "commit", "-q", "-m", "initial")
    return path


class Layout:
    """proj (with vendor/lib submodule) and a linked worktree of proj in elsewhere/feature."""

    def __init__(self, base: Path) -> None:
        self.base = base
        self.main = make_repo(base / "proj")
        (self.main / "src" / "deep" / "er").mkdir(parents=True)
        self.lib_origin = make_repo(base / "lib-origin")
        git(self.main, "submodule", "add", "-q", str(self.lib_origin), "vendor/lib")
        self.sub = self.main / "vendor" / "lib"
        self.worktree = base / "elsewhere" / "feature"
        git(self.main, "worktree", "add", "-q", "-b", "feature", str(self.worktree))
        (self.worktree / "src" / "deep").mkdir(parents=True)


@pytest.fixture(scope="module")
def layout(tmp_path_factory: pytest.TempPathFactory) -> Layout:
    if shutil.which("git") is None:
        pytest.skip("git is not installed")
    return Layout(tmp_path_factory.mktemp("repos").resolve())


@pytest.fixture
def fresh_layout(tmp_path: Path) -> Layout:
    """A private layout for tests that add ignore files."""
    if shutil.which("git") is None:
        pytest.skip("git is not installed")
    return Layout(tmp_path.resolve() / "layout")


@pytest.fixture(autouse=True)
def clear_caches() -> None:
    """Time measurements must include compiling, not hit a previous test's cache."""
    project._parse_glob.cache_clear()
    project._regex.cache_clear()


# --- empty and odd inputs --------------------------------------------------------------


@pytest.mark.parametrize("cwd", [None, "", "   ", "\t\n"])
def test_missing_cwd_is_unknown_project(cwd: str | None) -> None:
    identity = resolve_project(cwd, excluded="**")
    assert identity == ProjectIdentity(
        name=UNKNOWN_PROJECT,
        all_projects=(UNKNOWN_PROJECT,),
        root=None,
        parent_root=None,
        excluded=False,
        excluded_reason=None,
    )


def test_filesystem_root_has_no_name() -> None:
    identity = resolve_project("/")
    assert identity.name == UNKNOWN_PROJECT
    assert identity.all_projects == (UNKNOWN_PROJECT,)
    assert identity.root == "/"
    assert identity.parent_root is None


def test_identity_is_frozen() -> None:
    identity = resolve_project("/tmp")
    with pytest.raises(dataclasses.FrozenInstanceError):
        identity.name = "other"  # type: ignore[misc]  # frozen: what is tested


# --- plain folders ---------------------------------------------------------------------


def test_plain_folder_uses_its_basename(tmp_path: Path) -> None:
    folder = tmp_path / "notes"
    folder.mkdir()
    identity = resolve_project(folder)
    assert identity.name == "notes"
    assert identity.all_projects == ("notes",)
    assert identity.root == str(folder)
    assert identity.parent_root is None
    assert not identity.excluded


def test_path_is_normalised(tmp_path: Path) -> None:
    folder = tmp_path / "notes"
    (folder / "x").mkdir(parents=True)
    messy = f"{tmp_path}//notes/./x/../"
    assert resolve_project(messy).root == str(folder)


def test_tilde_expands_to_home_parameter(tmp_path: Path) -> None:
    (tmp_path / "code").mkdir()
    identity = resolve_project("~/code", home=str(tmp_path))
    assert identity.root == str(tmp_path / "code")
    assert identity.name == "code"


def test_relative_cwd_is_made_absolute(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "rel").mkdir()
    monkeypatch.chdir(tmp_path)
    assert resolve_project("rel").root == str(tmp_path / "rel")


def test_nonexistent_path_falls_back_to_basename(tmp_path: Path) -> None:
    missing = tmp_path / "does" / "not" / "exist"
    identity = resolve_project(str(missing))
    assert identity.name == "exist"
    assert identity.root == str(missing)
    assert not identity.excluded


def test_pathlike_is_accepted(tmp_path: Path) -> None:
    assert resolve_project(tmp_path / "p").name == "p"


def test_unicode_and_spaces_in_plain_folder(tmp_path: Path) -> None:
    folder = tmp_path / "mes projets" / "café ☕ プロジェクト"
    folder.mkdir(parents=True)
    identity = resolve_project(str(folder))
    assert identity.name == "café ☕ プロジェクト"
    assert identity.root == str(folder)


def test_ignore_file_in_plain_folder(tmp_path: Path) -> None:
    folder = tmp_path / "private"
    folder.mkdir()
    (folder / IGNORE_FILE).write_text("", encoding="utf-8")
    identity = resolve_project(folder)
    assert identity.excluded
    assert identity.excluded_reason == f"ignore-file:{folder / IGNORE_FILE}"
    assert identity.name == "private"  # still identified, just skipped


def test_ignore_file_only_counts_in_the_project_folder(tmp_path: Path) -> None:
    (tmp_path / IGNORE_FILE).write_text("", encoding="utf-8")
    (tmp_path / "child").mkdir()
    assert not resolve_project(tmp_path / "child").excluded


def test_ignore_directory_is_not_an_ignore_file(tmp_path: Path) -> None:
    (tmp_path / "p" / IGNORE_FILE).mkdir(parents=True)
    assert not resolve_project(tmp_path / "p").excluded


# --- real git repositories -------------------------------------------------------------


@needs_git
def test_repo_top_level(layout: Layout) -> None:
    identity = resolve_project(layout.main)
    assert identity.name == "proj"
    assert identity.all_projects == ("proj",)
    assert identity.root == str(layout.main)
    assert identity.parent_root is None
    assert not identity.excluded


@needs_git
@pytest.mark.parametrize("sub", ["src", "src/deep/er", ".git", ".git/refs/heads", "gone/away"])
def test_repo_subdirectories_share_identity(layout: Layout, sub: str) -> None:
    assert resolve_project(layout.main / sub) == resolve_project(layout.main)


@needs_git
def test_worktree_is_named_after_parent(layout: Layout) -> None:
    identity = resolve_project(layout.worktree)
    assert identity.name == "proj/feature"
    assert identity.all_projects == ("proj", "proj/feature")
    assert identity.all_projects[-1] == identity.name
    assert identity.root == str(layout.worktree)
    assert identity.parent_root == str(layout.main)


@needs_git
def test_worktree_subdirectory(layout: Layout) -> None:
    assert resolve_project(layout.worktree / "src" / "deep") == resolve_project(layout.worktree)


@needs_git
def test_submodule_is_its_own_project(layout: Layout) -> None:
    assert (layout.sub / ".git").is_file()
    identity = resolve_project(layout.sub)
    assert identity.name == "lib"
    assert identity.all_projects == ("lib",)
    assert identity.root == str(layout.sub)
    assert identity.parent_root is None
    # The folder holding the submodule still belongs to the superproject.
    assert resolve_project(layout.main / "vendor").name == "proj"


@needs_git
def test_resolver_never_spawns_processes(layout: Layout, monkeypatch: pytest.MonkeyPatch) -> None:
    def forbidden(*_args: object, **_kwargs: object) -> None:
        raise AssertionError("resolve_project must not spawn processes")

    monkeypatch.setattr(subprocess, "Popen", forbidden)
    monkeypatch.setattr(os, "posix_spawn", forbidden, raising=False)
    monkeypatch.setattr(os, "fork", forbidden, raising=False)
    assert resolve_project(layout.worktree, excluded="~/x/**").name == "proj/feature"


@needs_git
def test_few_stat_calls(layout: Layout, monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[str] = []
    real_stat = os.stat

    def counting_stat(path: str, *args: object, **kwargs: object) -> os.stat_result:
        calls.append(path)
        return real_stat(path, *args, **kwargs)  # type: ignore[arg-type]  # os.stat's own arguments

    monkeypatch.setattr(os, "stat", counting_stat)
    resolve_project(layout.worktree / "src" / "deep")
    # two levels up to the `.git` file, one for the gitdir's commondir read, two ignore files
    assert len(calls) <= 6


@needs_git
def test_unicode_and_spaces_in_repo_and_worktree(tmp_path: Path) -> None:
    main = make_repo(tmp_path / "my prøject")
    worktree = tmp_path / "trees" / "wt ☃ 2"
    git(main, "worktree", "add", "-q", "-b", "snow", str(worktree))
    assert resolve_project(main).name == "my prøject"
    identity = resolve_project(worktree)
    assert identity.name == "my prøject/wt ☃ 2"
    assert identity.all_projects == ("my prøject", "my prøject/wt ☃ 2")


@needs_git
def test_ignore_file_in_repo_root(fresh_layout: Layout) -> None:
    marker = fresh_layout.main / IGNORE_FILE
    marker.write_text("", encoding="utf-8")
    identity = resolve_project(fresh_layout.main / "src" / "deep")
    assert identity.excluded
    assert identity.excluded_reason == f"ignore-file:{marker}"
    assert identity.name == "proj"


@needs_git
def test_ignore_file_in_worktree(fresh_layout: Layout) -> None:
    marker = fresh_layout.worktree / IGNORE_FILE
    marker.write_text("", encoding="utf-8")
    assert resolve_project(fresh_layout.worktree).excluded_reason == f"ignore-file:{marker}"
    assert not resolve_project(fresh_layout.main).excluded  # the main checkout is unaffected


@needs_git
def test_ignore_file_in_main_repo_covers_worktrees(fresh_layout: Layout) -> None:
    marker = fresh_layout.main / IGNORE_FILE
    marker.write_text("", encoding="utf-8")
    identity = resolve_project(fresh_layout.worktree / "src")
    assert identity.excluded
    assert identity.excluded_reason == f"ignore-file:{marker}"


@needs_git
def test_ignore_file_in_superproject_does_not_cover_submodule(fresh_layout: Layout) -> None:
    (fresh_layout.main / IGNORE_FILE).write_text("", encoding="utf-8")
    assert not resolve_project(fresh_layout.sub).excluded


@needs_git
def test_glob_takes_precedence_over_ignore_file(fresh_layout: Layout) -> None:
    (fresh_layout.main / IGNORE_FILE).write_text("", encoding="utf-8")
    identity = resolve_project(fresh_layout.main, excluded="proj")
    assert identity.excluded_reason == "glob:proj"


@needs_git
def test_path_glob_on_main_repo_excludes_its_worktrees(layout: Layout) -> None:
    pattern = f"{layout.main}/**"
    identity = resolve_project(layout.worktree, excluded=pattern)
    assert identity.excluded
    assert identity.excluded_reason == f"glob:{pattern}"


@needs_git
def test_basename_glob_matches_repo_root_from_subdirectory(layout: Layout) -> None:
    cwd = layout.main / "src" / "deep"
    assert resolve_project(cwd, excluded="pro?").excluded_reason == "glob:pro?"
    assert resolve_project(cwd, excluded="de*").excluded_reason == "glob:de*"
    assert not resolve_project(cwd, excluded="src").excluded  # ancestors' names do not count


# --- hand-made `.git` files ------------------------------------------------------------


@pytest.mark.parametrize(
    "content",
    [
        b"",
        b"\x00\xff\xfe garbage",
        b"gitdir:",
        b"gitdir:   \n",
        b"not a gitdir line\ngitdir: /elsewhere\n",
        b"gitdir: /definitely/not/here\n",
        b"gitdir: bad\x00path\n",
        b"gitdir: " + b"x" * 10_000,
    ],
)
def test_malformed_git_file_is_own_top_level(tmp_path: Path, content: bytes) -> None:
    repo = tmp_path / "odd"
    (repo / "sub").mkdir(parents=True)
    (repo / ".git").write_bytes(content)
    identity = resolve_project(repo / "sub")
    assert identity.name == "odd"
    assert identity.root == str(repo)
    assert identity.parent_root is None


def test_git_file_with_empty_commondir_is_own_repo(tmp_path: Path) -> None:
    gitdir = tmp_path / "meta"
    gitdir.mkdir()
    (gitdir / "commondir").write_text("\n", encoding="utf-8")
    repo = tmp_path / "solo"
    repo.mkdir()
    (repo / ".git").write_text(f"gitdir: {gitdir}\n", encoding="utf-8")
    assert resolve_project(repo).all_projects == ("solo",)


def test_hand_made_worktree_with_relative_gitdir(tmp_path: Path) -> None:
    gitdir = tmp_path / "main" / ".git" / "worktrees" / "w1"
    gitdir.mkdir(parents=True)
    (gitdir / "commondir").write_text("../..\r\n", encoding="utf-8")
    worktree = tmp_path / "trees" / "topic"
    worktree.mkdir(parents=True)
    (worktree / ".git").write_text("gitdir: ../../main/.git/worktrees/w1\n", encoding="utf-8")
    identity = resolve_project(worktree)
    assert identity.name == "main/topic"
    assert identity.all_projects == ("main", "main/topic")
    assert identity.parent_root == str(tmp_path / "main")


def test_worktree_of_bare_repo_is_named_after_the_repo(tmp_path: Path) -> None:
    gitdir = tmp_path / "proj.git" / "worktrees" / "dev"
    gitdir.mkdir(parents=True)
    (gitdir / "commondir").write_text("../..\n", encoding="utf-8")
    worktree = tmp_path / "dev"
    worktree.mkdir()
    (worktree / ".git").write_text(f"gitdir: {gitdir}\n", encoding="utf-8")
    identity = resolve_project(worktree)
    assert identity.name == "proj/dev"
    assert identity.parent_root == str(tmp_path / "proj.git")


def test_git_directory_wins_over_outer_repo(tmp_path: Path) -> None:
    (tmp_path / "outer" / ".git").mkdir(parents=True)
    (tmp_path / "outer" / "inner" / ".git").mkdir(parents=True)
    (tmp_path / "outer" / "inner" / "x").mkdir()
    assert resolve_project(tmp_path / "outer" / "inner" / "x").name == "inner"
    assert resolve_project(tmp_path / "outer" / "y").name == "outer"


# --- patterns --------------------------------------------------------------------------


def test_parse_patterns_trims_and_drops_empty_items() -> None:
    assert parse_patterns(" a , ,b/**,,  ~/c  ,a") == ("a", "b/**", "~/c")
    assert parse_patterns("") == ()
    assert parse_patterns(" , ,") == ()


@pytest.mark.parametrize(
    ("pattern", "path", "expected"),
    [
        # `*` stays within one segment
        ("scratch-*", "/tmp/scratch-42", True),
        ("scratch-*", "/tmp/my-scratch-42", False),
        ("*", "/tmp/anything", True),
        ("/tmp/*/x", "/tmp/a/x", True),
        ("/tmp/*/x", "/tmp/a/b/x", False),
        ("/tmp/a*c", "/tmp/ab/c", False),
        ("/tmp/a*c", "/tmp/abbc", True),
        # `**` crosses segments, and as a whole segment also matches zero of them
        ("/tmp/**/secret", "/tmp/secret", True),
        ("/tmp/**/secret", "/tmp/a/b/secret", True),
        ("/tmp/**/secret", "/tmp/a/b/secretive", False),
        ("/tmp/**/secret", "/var/secret", False),
        ("/tmp/a**z", "/tmp/a/b/z", True),
        ("/tmp/a**z", "/tmp/abz", True),
        ("**/node_modules", "/x/y/node_modules/pkg", True),
        ("/tmp/***/x", "/tmp/q/x", True),
        ("/tmp/**/**/x", "/tmp/x", True),
        # `?` is exactly one character, never "/"
        ("proj-?", "/w/proj-1", True),
        ("proj-?", "/w/proj-12", False),
        ("proj-?", "/w/proj-", False),
        ("/w/a?c", "/w/a/c", False),
        ("/w/a?c", "/w/abc", True),
        # `~` is the home parameter
        ("~/work/secret/**", f"{HOME}/work/secret/sub/dir", True),
        ("~/work/secret/**", f"{HOME}/work/secret", True),
        ("~/work/secret", f"{HOME}/work/secret/sub/dir", True),
        ("~/work/secret", f"{HOME}/work/secret2", False),
        ("~/work/secret", "/other/work/secret", False),
        ("~", f"{HOME}/anything", True),
        ("~", "/srv/anything", False),
        ("~/*", f"{HOME}", False),
        ("~/*", f"{HOME}/a/b/c", True),
        # backslashes are separators
        ("~\\work\\secret", f"{HOME}/work/secret/x", True),
        ("\\tmp\\*\\x", "/tmp/a/x", True),
        # trailing slash and relative path patterns
        ("~/work/secret/", f"{HOME}/work/secret/x", True),
        ("work/secret", f"{HOME}/work/secret/x", True),
        ("work/secret", f"{HOME}/homework/secret", False),
        # everything else is literal
        ("a+b(c)", "/x/a+b(c)", True),
        ("a+b(c)", "/x/aab(c)", False),
        ("[ab]", "/x/a", False),
        ("[ab]", "/x/[ab]", True),
        ("a.c", "/x/abc", False),
        ("^x$|.*", "/x/y", False),
        # spaces and unicode
        ("my project", "/x/my project", True),
        ("/x/my proj*/**", "/x/my project/src", True),
        ("café-*", "/x/café-ü", True),
        ("/", "/any/thing", True),
        ("/**", "/any/thing", True),
    ],
)
def test_glob_semantics(pattern: str, path: str, expected: bool) -> None:
    result = matches_exclusion(path, pattern, home=HOME)
    assert result == (pattern if expected else None)


def test_comma_list_returns_first_matching_pattern() -> None:
    patterns = " nope ,, ~/work/** ,  scratch-*  "
    assert matches_exclusion(f"{HOME}/work/a", patterns, home=HOME) == "~/work/**"
    assert matches_exclusion("/tmp/scratch-1", patterns, home=HOME) == "scratch-*"
    assert matches_exclusion("/tmp/other", patterns, home=HOME) is None


def test_matches_exclusion_edge_inputs() -> None:
    assert matches_exclusion("", "**") is None
    assert matches_exclusion("/x", "") is None
    assert matches_exclusion("/x", " , ") is None
    assert matches_exclusion("~/code/x", "~/code", home=HOME) == "~/code"


def test_home_defaults_to_user_home(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))
    assert matches_exclusion(str(tmp_path / "a" / "b"), "~/a") == "~/a"
    identity = resolve_project(tmp_path / "a" / "b", excluded="~/a")
    assert identity.excluded_reason == "glob:~/a"


def test_home_with_glob_characters_is_literal() -> None:
    home = "/home/we*ird?"
    assert matches_exclusion("/home/we*ird?/x", "~/x", home=home) == "~/x"
    assert matches_exclusion("/home/weXXirdY/x", "~/x", home=home) is None


def test_resolve_excludes_by_path_glob_for_nested_cwd(tmp_path: Path) -> None:
    cwd = tmp_path / "work" / "secret" / "sub" / "dir"
    cwd.mkdir(parents=True)
    for pattern in ("~/work/secret/**", "~/work/secret", "~/work/*"):
        identity = resolve_project(cwd, excluded=f"other, {pattern}", home=str(tmp_path))
        assert identity.excluded
        assert identity.excluded_reason == f"glob:{pattern}"
        assert identity.name == "dir"
    assert not resolve_project(cwd, excluded="~/work/public/**", home=str(tmp_path)).excluded


def test_resolve_basename_glob_uses_cwd_and_root(tmp_path: Path) -> None:
    cwd = tmp_path / "scratch-7"
    cwd.mkdir()
    assert resolve_project(cwd, excluded="scratch-*").excluded_reason == "glob:scratch-*"
    # A basename pattern does not look at ancestors of a plain folder.
    child = cwd / "inner"
    child.mkdir()
    assert not resolve_project(child, excluded="scratch-*").excluded


# --- hostile input ---------------------------------------------------------------------


def deep(n: int) -> str:
    """A path n folders deep."""
    return "/" + "a/" * n + "b"


def segment(n: int) -> str:
    """One folder name of n characters."""
    return "a" * n


# id, (pattern, path) of size n, n (paths of 4 KB, patterns up to 10 KB)
HOSTILE: list[tuple[str, Callable[[int], tuple[str, str]], int]] = [
    ("stars, deep path", lambda n: ("**********a", deep(n) + "c"), 2000),
    ("stars, long name", lambda n: ("**********a", "/x/" + segment(n) + "b"), 4000),
    ("rooted stars", lambda n: ("/**********a", "/" + segment(n) + "/b"), 4000),
    ("*a x40", lambda n: ("*a" * 40 + "b", "/x/" + segment(n)), 4000),
    ("?* x40", lambda n: ("?*" * 40 + "b", "/x/" + segment(n)), 4000),
    ("/** a* x40", lambda n: ("/**" + "a*" * 40 + "b", "/" + segment(n)), 4000),
    ("/**a x40", lambda n: ("/**a" * 40 + "b", "/" + segment(n)), 4000),
    ("/**x*y*z", lambda n: ("/**x*y*z", "/" + "x" * n), 4000),
    ("/**x*y**z", lambda n: ("/**x*y**z", "/" + "x" * n), 4000),
    ("/**/a x40", lambda n: ("/**/a" * 40 + "/b", deep(n) + "c"), 2000),
    ("/**/a* x40", lambda n: ("/**/a*" * 40 + "/b", deep(n) + "c"), 2000),
    ("*/ x200", lambda n: ("/" + "*/" * 200 + "b", deep(n) + "c"), 2000),
    ("10 KB of *a", lambda n: ("*a" * n, "/x/" + segment(4000)), 5000),
    ("10 KB of /**a", lambda n: ("/**a" * n, deep(2000)), 2500),
    ("10 KB of ?", lambda n: ("/" + "?" * n, "/x/" + segment(4000)), 10_000),
    ("10 KB of collapsing **/", lambda n: ("**/" * n, deep(2000)), 3400),
]


def match_cold(case: tuple[str, str]) -> None:
    """Both entry points on a pattern not seen before (the glob and regex caches emptied)."""
    pattern, path = case
    re.purge()
    project._parse_glob.cache_clear()
    project._regex.cache_clear()
    matches_exclusion(path, pattern, home=HOME)
    resolve_project(path, excluded=pattern, home=HOME)


@pytest.mark.parametrize(("make", "n"), [c[1:] for c in HOSTILE], ids=[c[0] for c in HOSTILE])
def test_hostile_patterns_are_linear(make: Callable[[int], tuple[str, str]], n: int) -> None:
    """Guards against backtracking blow-ups: 8x the path (or pattern) costs ~8x, not more."""
    assert_linear(match_cold, make, n)


def test_hostile_patterns_still_match_correctly() -> None:
    assert matches_exclusion("/x/" + "a" * 50 + "b", "*a" * 20 + "b") is not None
    assert matches_exclusion("/" + "x" * 4000 + "/y/z", "/**x*y*z") is None
    assert matches_exclusion("/" + "x" * 4000 + "yz", "/**x*y*z") is not None
    assert matches_exclusion("/q/" + "x" * 4000 + "yz/w", "/**x*y**z") is not None
    assert matches_exclusion("/a" * 50 + "/b", "/**/a" * 40 + "/b") is not None


# --- properties ------------------------------------------------------------------------

SEGMENT = st.text(
    alphabet=string.ascii_letters + string.digits + "-_. é中", min_size=1, max_size=12
).filter(lambda s: s.strip(". ") != "")


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(segments=st.lists(SEGMENT, min_size=1, max_size=6), create=st.booleans())
def test_resolve_never_raises(tmp_path: Path, segments: list[str], create: bool) -> None:
    path = tmp_path.joinpath(*segments)
    if create:
        path.mkdir(parents=True, exist_ok=True)
    identity = resolve_project(str(path), excluded="*.tmp, ~/x/**", home=HOME)
    assert identity.name
    assert identity.all_projects[-1] == identity.name
    assert identity.root is not None
    assert os.path.isabs(identity.root)


@settings(max_examples=200, deadline=None)
@given(pattern=st.text(max_size=40), path=st.text(max_size=40))
def test_matching_never_raises(pattern: str, path: str) -> None:
    result = matches_exclusion(path, pattern, home=HOME)
    assert result is None or result in parse_patterns(pattern)


# Patterns are trimmed, so literal names here do not start or end with whitespace.
TRIMMED_SEGMENT = SEGMENT.map(str.strip).filter(lambda s: s.strip(".") != "")


@settings(max_examples=100, deadline=None)
@given(segments=st.lists(TRIMMED_SEGMENT, min_size=1, max_size=6))
def test_literal_path_pattern_matches_itself_and_below(segments: list[str]) -> None:
    path = "/" + "/".join(segments)
    assert matches_exclusion(path, path) == path
    assert matches_exclusion(path + "/child", path) == path
    assert matches_exclusion(path + "x", path) is None


# --- hook constraints ------------------------------------------------------------------


def test_module_imports_only_the_standard_library() -> None:
    tree = ast.parse(Path(project.__file__).read_text(encoding="utf-8"))
    imported: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            imported.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            imported.add(node.module.split(".")[0])
    assert imported <= set(sys.stdlib_module_names) | {"__future__"}
    assert "subprocess" not in imported
