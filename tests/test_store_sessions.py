from __future__ import annotations

from pathlib import Path

from claude_mem.store import Database
from claude_mem.store.sessions import (
    MAX_PROMPT_CHARS,
    add_prompt,
    complete_session,
    delete_session,
    ensure_session,
    ensure_session_turn,
    find_session,
    get_session,
    last_prompt,
    list_prompts,
    list_sessions,
    prompt_is_private,
)
from tests.store_helpers import found, observation, session


def test_ensure_session_is_idempotent_per_platform_and_host_id(data_dir: Path) -> None:
    with Database() as db, db.write() as conn:
        a = ensure_session(conn, platform="claude-code", host_session_id="h", project="p")
        b = ensure_session(conn, platform="claude-code", host_session_id="h", project="other")
        c = ensure_session(conn, platform="codex", host_session_id="h", project="p")
        assert a == b != c
        assert found(get_session(conn, a))["project"] == "p"  # never renamed
        assert find_session(conn, "codex", "h") == c
        assert find_session(conn, "codex", "missing") is None


def test_ensure_session_turn_answers_the_current_prompt_and_its_privacy(data_dir: Path) -> None:
    """What a tool event needs, from the upsert itself: the session (created on first sight,
    its updated_at moved), the current prompt number and whether that prompt was private."""
    with Database() as db, db.write() as conn:

        def turn(path: str | None = None) -> tuple[int, int, bool]:
            return ensure_session_turn(conn, platform="claude-code", host_session_id="h",
                                       project="p", transcript_path=path)  # fmt: skip

        sid, number, private = turn()
        assert (number, private) == (0, False)
        assert sid == ensure_session(conn, platform="claude-code", host_session_id="h", project="p")
        add_prompt(conn, sid, "fix the export", now=1_000)
        assert turn() == (sid, 1, False)
        add_prompt(conn, sid, "<private>the reset password</private>", now=2_000)
        assert turn() == (sid, 2, True)
        assert prompt_is_private(conn, sid, 2)
        before = found(get_session(conn, sid))["updated_at"]
        turn("/t/new.jsonl")
        after = found(get_session(conn, sid))
        assert after["updated_at"] >= before
        assert after["transcript_path"] == "/t/new.jsonl"


def test_placeholder_project_is_filled_later(data_dir: Path) -> None:
    with Database() as db, db.write() as conn:
        a = ensure_session(
            conn, platform="x", host_session_id="h", project="unknown-project", cwd="/w"
        )
        ensure_session(conn, platform="x", host_session_id="h", project="real", cwd="/other")
        row = found(get_session(conn, a))
        assert (row["project"], row["cwd"]) == ("real", "/w")


def test_prompts_numbered_per_session(data_dir: Path) -> None:
    with Database() as db:
        s1, s2 = session(db, "a"), session(db, "b")
        with db.write() as conn:
            numbers = [add_prompt(conn, s1, f"prompt {i}").prompt_number for i in range(3)]
            other = add_prompt(conn, s2, "elsewhere").prompt_number
            assert numbers == [1, 2, 3]
            assert other == 1
            assert found(get_session(conn, s1))["prompt_count"] == 3
            assert found(get_session(conn, s1))["first_prompt"] == "prompt 0"
            assert found(last_prompt(conn, s1))["text"] == "prompt 2"
            assert [p["prompt_number"] for p in list_prompts(conn, session_id=s1)] == [3, 2, 1]


def test_fully_private_prompt_takes_number_but_stores_nothing(data_dir: Path) -> None:
    with Database() as db:
        sid = session(db)
        with db.write() as conn:
            first = add_prompt(conn, sid, "<private>my bank PIN is 4242</private>")
            second = add_prompt(conn, sid, "now refactor the parser")
            assert first.private
            assert not second.private
            assert (first.prompt_number, second.prompt_number) == (1, 2)
            assert prompt_is_private(conn, sid, 1)
            assert not prompt_is_private(conn, sid, 2)
            assert not prompt_is_private(conn, sid, 99)
            row = found(get_session(conn, sid))
            # The reference stored an all-private first prompt verbatim; we never do.
            assert row["first_prompt"] == "now refactor the parser"
            texts = [r[0] for r in conn.execute("SELECT text FROM user_prompts ORDER BY id")]
            assert texts == ["", "now refactor the parser"]
            dump = "".join(str(v) for r in conn.execute("SELECT * FROM sessions") for v in r)
            assert "4242" not in dump


def test_partly_private_prompt_keeps_the_rest(data_dir: Path) -> None:
    with Database() as db:
        sid = session(db)
        with db.write() as conn:
            result = add_prompt(conn, sid, "deploy it <private>password hunter2</private> now")
            assert not result.private
            assert found(last_prompt(conn, sid))["text"] == "deploy it  now"


def test_huge_prompt_is_capped(data_dir: Path) -> None:
    with Database() as db:
        sid = session(db)
        with db.write() as conn:
            add_prompt(conn, sid, "x" * (10 * 1024 * 1024))
            assert len(found(last_prompt(conn, sid))["text"]) == MAX_PROMPT_CHARS


def test_complete_and_list_sessions(data_dir: Path) -> None:
    with Database() as db:
        a = session(db, "a", project="p1")
        session(db, "b", project="p2")
        with db.write() as conn:
            assert complete_session(conn, a, reason="exit", now=5000)
            assert not complete_session(conn, 999)
            row = found(get_session(conn, a))
            assert (row["status"], row["ended_at"], row["end_reason"]) == (
                "completed",
                5000,
                "exit",
            )
            assert [s["host_session_id"] for s in list_sessions(conn, projects=("p1",))] == ["a"]
            assert len(list_sessions(conn)) == 2


def test_delete_session_cascades(data_dir: Path) -> None:
    with Database() as db:
        sid = session(db)
        observation(db, sid)
        with db.write() as conn:
            add_prompt(conn, sid, "hello")
            assert delete_session(conn, sid)
            for table in ("user_prompts", "observations"):
                assert conn.execute(f"SELECT count(*) FROM {table}").fetchone()[0] == 0
            assert conn.execute("SELECT count(*) FROM observations_fts").fetchone()[0] == 0
            assert not delete_session(conn, sid)
