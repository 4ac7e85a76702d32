"""Supersede, don't pile up: a newer memory that decides or changes the same thing as an
older current one in its project marks the older `superseded_by` the newer (kept, never
deleted; its `valid_to` then ends where the newer's `valid_from` begins, store/schema.py), so
search ranks the current one first, context shows only it, and a search `as_of` a date finds
what held then. Only an older one is replaced, in time as well as in id (an import may store
an earlier record after later ones): a record never supersedes a newer one.

`settle(conn, obs_id)` runs in the write transaction that inserted `obs_id`, right after the
insert. "The same thing" is judged on words alone (`claude_mem.subjects`), because vectors
come later:

- a decision matches an older current decision that names one of its symbols (a newer rule
  about the same function is the rule now, whatever words announce it); otherwise when the
  `subject:` keys naming symbols, if both have some, share one (and so do those naming
  files), and the rules' content words overlap (at least `NAMED_SHARED` words and
  `NAMED_OVERLAP` with a shared named subject; otherwise at least `TOPIC_SHARED` words and a
  `TOPIC_OVERLAP` share of all their words, or within one session, where a discussion refines
  its rule, of the fewer words);
- a unit of work (bugfix, feature, refactor, change) matches an older one only when it is
  clearly the same: the same type, the same files modified, compatible named subjects, and
  at least `UNIT_SHARED` words and `UNIT_OVERLAP` in common, generic edit words and path
  parts left out.

Within one session a decision is a discussion, not a history: a newer decision matching an
older one of its own session is folded into it (the older row takes the newer content, the
facts and concepts of both, and the newer's time and turn; the newer row is deleted after its
tool events are relinked), so one current row states the final rule and every link that
pointed at the older row still holds. Everything else it matches is superseded. A revert is
a newer decision like any other: it supersedes the one it reverts.
"""

from __future__ import annotations

import re
import sqlite3
from typing import Any

from claude_mem.records import Observation
from claude_mem.store.observations import content_hash, get_observation
from claude_mem.store.rows import dump_list, row_dict, row_dicts
from claude_mem.subjects import content_words, jaccard, overlap, subjects
from claude_mem.vocabulary import HISTORY_SOURCE

CANDIDATES = 200  # newest current rows of the family compared with a new one
NAMED_SHARED, NAMED_OVERLAP = 1, 0.4
TOPIC_SHARED, TOPIC_OVERLAP = 2, 0.5
UNIT_SHARED, UNIT_OVERLAP = 3, 0.6
UNIT_TYPES = frozenset({"bugfix", "feature", "refactor", "change"})
FOLDED_FACTS = 16  # a unit's facts and its follow-up's
CONTINUED_TYPES = (*sorted(UNIT_TYPES), "discovery")  # what a follow-up turn may finish
FOLDED_NARRATIVE_CHARS = 900
# Words any edit's title may use: they say that something changed, not what.
_GENERIC = frozenset(
    content_words(
        "edit edited add added remove removed change changed update updated fix fixed modify "
        "modified create created write wrote rewrote line lines file files code function test "
        "tests new old"
    )
)
_NAMED = re.compile(r"[._/()]")  # a path or identifier, not topic words
_FILE = re.compile(r"/|\.[a-z][a-z0-9]{0,5}$")


def settle(conn: sqlite3.Connection, obs_id: int) -> int:
    """Mark what observation `obs_id` replaces as superseded; the id that now holds its
    content (another one when it was folded into its session's earlier decision, and
    `obs_id` then no longer exists). Idempotent; a missing or superseded row is left alone."""
    new = get_observation(conn, obs_id)
    if new is None or new["superseded_by"] is not None:
        return obs_id
    family = _family(new["type"])
    if not family:
        return obs_id
    marks = ", ".join("?" * len(family))
    older = row_dicts(
        conn.execute(
            f"""SELECT * FROM observations
                WHERE project = ? AND type IN ({marks}) AND id < ? AND superseded_by IS NULL
                    AND created_at <= ?
                ORDER BY id DESC LIMIT ?""",
            (new["project"], *family, obs_id, new["created_at"], CANDIDATES),
        )
    )
    matches = [old for old in older if same_thing(new, old)]
    survivor = obs_id
    mine = [old for old in matches if old["session_id"] == new["session_id"]]
    if new["type"] == "decision" and mine:
        survivor = _fold(conn, new, mine[0])
    replaced = [old["id"] for old in matches if old["id"] != survivor]
    if replaced:
        conn.execute(
            f"""UPDATE observations SET superseded_by = ?
                WHERE id IN ({", ".join("?" * len(replaced))}) AND superseded_by IS NULL""",
            (survivor, *replaced),
        )
    return survivor


def settle_in_time(conn: sqlite3.Connection, obs_id: int) -> None:
    """`settle` for a decision read from history, which may be stored after sessions that
    came later: against the sessions' current decisions of its project, it is superseded by
    the newest later one about the same thing, and supersedes the earlier ones."""
    new = get_observation(conn, obs_id)
    if new is None or new["type"] != "decision":
        return
    others = row_dicts(
        conn.execute(
            """SELECT * FROM observations WHERE project = ? AND type = 'decision'
                AND source != ? AND superseded_by IS NULL AND id != ?
                ORDER BY created_at DESC LIMIT ?""",
            (new["project"], HISTORY_SOURCE, obs_id, CANDIDATES),
        )
    )
    later = [o for o in others if o["created_at"] > new["created_at"] and same_thing(o, new)]
    if later:
        conn.execute(
            "UPDATE observations SET superseded_by = ? WHERE id = ?", (later[0]["id"], obs_id)
        )
        return
    earlier = [
        o["id"] for o in others if o["created_at"] <= new["created_at"] and same_thing(new, o)
    ]
    if earlier:
        conn.execute(
            f"""UPDATE observations SET superseded_by = ?
                WHERE id IN ({", ".join("?" * len(earlier))})""",
            (obs_id, *earlier),
        )


def _family(kind: str) -> tuple[str, ...]:
    """The types a row of type `kind` may supersede: decisions decide, units change."""
    if kind == "decision":
        return ("decision",)
    return (kind,) if kind in UNIT_TYPES else ()


def _words(row: dict[str, Any], leave_out: set[str]) -> set[str]:
    # A commit's subtitle is its hash, date and author: no words of what it decides.
    subtitle = "" if row.get("source") == HISTORY_SOURCE else row["subtitle"]
    return set(content_words(f"{row['title']} {subtitle}")) - leave_out


def _named(row: dict[str, Any]) -> tuple[set[str], set[str]]:
    """The row's subject keys that name (symbols, files)."""
    keys = [key for key in subjects(row["concepts"]) if _NAMED.search(key)]
    files = {key for key in keys if _FILE.search(key)}
    return set(keys) - files, files


def same_thing(new: dict[str, Any], old: dict[str, Any]) -> bool:
    """Whether `new` decides or changes what `old` did (module docstring)."""
    (symbols_new, files_new), (symbols_old, files_old) = _named(new), _named(old)
    for mine, theirs in ((symbols_new, symbols_old), (files_new, files_old)):
        if mine and theirs and not mine & theirs:
            return False  # different symbols, or different files
    if new["type"] == "decision" and symbols_new & symbols_old:
        return True  # a rule about the same symbol: the newer one is the rule now
    named_new, named_old = symbols_new | files_new, symbols_old | files_old
    leave_out = set(content_words(" ".join([*named_new, *named_old])))
    unit = new["type"] != "decision"
    if unit:
        files = set(new["files_modified"])
        if not files or files != set(old["files_modified"]) or new["type"] != old["type"]:
            return False
        leave_out |= _GENERIC | set(content_words(" ".join(files)))
    words_new, words_old = _words(new, leave_out), _words(old, leave_out)
    shared = len(words_new & words_old)
    if unit:
        return shared >= UNIT_SHARED and overlap(words_new, words_old) >= UNIT_OVERLAP
    if named_new & named_old:
        return shared >= NAMED_SHARED and overlap(words_new, words_old) >= NAMED_OVERLAP
    # In one session the later rule refines the earlier: it may say much more, not less.
    within = overlap if new["session_id"] == old["session_id"] else jaccard
    return shared >= TOPIC_SHARED and within(words_new, words_old) >= TOPIC_OVERLAP


def _fold(conn: sqlite3.Connection, new: dict[str, Any], old: dict[str, Any]) -> int:
    """The older decision of the session takes the newer one's content; the newer row goes.
    The older id, or the newer one when a same-content row stands in the way (then the
    older is superseded instead)."""
    narrative = new["narrative"]
    if old["title"] and old["title"] != new["title"]:
        narrative = f"{narrative}\nEarlier in the discussion: {old['title']}".strip()
    return _merge(conn, new, old, title=new["title"], subtitle=new["subtitle"],
                  narrative=narrative, lead=new)  # fmt: skip


def continue_unit(conn: sqlite3.Connection, obs_id: int) -> int:
    """Fold observation `obs_id`, a turn that only finished the session's previous unit of
    work (committed it, ran its tests again), into that unit: the unit keeps its title and
    gains the follow-up's facts, files and tool events. The id that holds it now (`obs_id`
    when the session has no earlier unit)."""
    new = get_observation(conn, obs_id)
    if new is None:
        return obs_id
    marks = ", ".join("?" * len(CONTINUED_TYPES))
    old = row_dict(
        conn.execute(
            f"""SELECT * FROM observations WHERE session_id = ? AND id < ? AND type IN ({marks})
                AND superseded_by IS NULL ORDER BY id DESC LIMIT 1""",
            (new["session_id"], obs_id, *CONTINUED_TYPES),
        ).fetchone()
    )
    if old is None:
        return obs_id
    narrative = f"{old['narrative']}\nThen: {new['title']}".strip()
    return _merge(conn, new, old, title=old["title"], subtitle=old["subtitle"],
                  narrative=narrative, lead=old)  # fmt: skip


def _merge(
    conn: sqlite3.Connection,
    new: dict[str, Any],
    old: dict[str, Any],
    *,
    title: str,
    subtitle: str,
    narrative: str,
    lead: dict[str, Any],
) -> int:
    """`old` takes `title`, `subtitle`, `narrative`, the facts, concepts and files of both
    (`lead`'s first, and its turn and time), and the newer one's tool events and links; `new`
    goes. The older id, or the newer one when a same-content row stands in the way (nothing
    merged then)."""
    follow = old if lead is new else new
    if len(narrative) > FOLDED_NARRATIVE_CHARS:
        narrative = narrative[: FOLDED_NARRATIVE_CHARS - 1].rstrip() + "…"
    merged = Observation(
        session_id=old["session_id"],
        project=old["project"],
        type=old["type"],
        title=title,
        subtitle=subtitle,
        narrative=narrative,
        facts=list(dict.fromkeys([*lead["facts"], *follow["facts"]]))[:FOLDED_FACTS],
        concepts=list(dict.fromkeys([*lead["concepts"], *follow["concepts"]])),
        files_read=list(dict.fromkeys([*lead["files_read"], *follow["files_read"]])),
        files_modified=list(dict.fromkeys([*lead["files_modified"], *follow["files_modified"]])),
    )
    digest = content_hash(merged)
    taken = conn.execute(
        "SELECT 1 FROM observations WHERE session_id = ? AND content_hash = ? AND id NOT IN (?, ?)",
        (old["session_id"], digest, old["id"], new["id"]),
    ).fetchone()
    if taken:
        return int(new["id"])
    conn.execute(
        "UPDATE tool_uses SET observation_id = ? WHERE observation_id = ?", (old["id"], new["id"])
    )
    conn.execute("UPDATE observations SET superseded_by = ? WHERE superseded_by = ?",
                 (old["id"], new["id"]))  # fmt: skip
    conn.execute("DELETE FROM observations WHERE id = ?", (new["id"],))
    conn.execute(
        """UPDATE observations SET title = ?, subtitle = ?, narrative = ?, facts = ?,
               concepts = ?, files_read = ?, files_modified = ?, content_hash = ?,
               prompt_number = ?, created_at = ?, valid_from = ?, generated_by = ?,
               discovery_tokens = discovery_tokens + ?
           WHERE id = ?""",
        (merged.title, merged.subtitle, merged.narrative, dump_list(merged.facts),
         dump_list(merged.concepts), dump_list(merged.files_read),
         dump_list(merged.files_modified), digest, lead["prompt_number"], lead["created_at"],
         lead["created_at"], new["generated_by"], new["discovery_tokens"], old["id"]),
    )  # fmt: skip
    return int(old["id"])
