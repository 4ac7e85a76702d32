"""Claude Code's http hooks as Claude Code sees them: the POST round trip to a real worker.

    .venv/bin/python bench/http_hook_bench.py [--runs 500]

Starts `python -m claude_mem.worker run` on a free loopback port in a temporary data dir,
registers a session (what the UserPromptSubmit command hook does), then POSTs Claude Code's
own PostToolUse payload to `/api/hooks/claude-code/PostToolUse` with the hook token header:
the worker runs the same adapter and handler as the command hook and stores the event before
it answers. Each POST opens a fresh TCP connection (Claude Code sends one request per hook and
cannot count on a kept-alive one); the kept-alive figure, one connection for every POST, is
shown beside it. Then the PreToolUse Read gate: a Read of a file memory knows, answered with
its timeline (a new session each time: the gate speaks once per file per session), and a Read
of a file memory does not know. For scale, the same events posted straight to the ingest route
a command hook calls. Floor (hooks issue): PostToolUse p50 ≤ 2 ms, fresh connection.

    .venv/bin/python bench/http_hook_bench.py --baseline DIR [--runs 500]

An A/B on a loaded machine: DIR holds another tree's `src` (`git archive main src | tar -x -C
DIR`); a worker of each runs side by side and the PostToolUse POSTs alternate between them in
batches, so both see the same load. Prints each one's p50 and CPU per POST, and their ratio.
"""

from __future__ import annotations

import argparse
import contextlib
import http.client
import json
import os
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

from claude_mem.worker.client import WorkerUnavailable, request
from claude_mem.worker.token import HOOK_HEADER
from worker_start_bench import worker_on

FLOOR_MS = 2.0


def payload(session: str, n: int, cwd: str) -> dict[str, object]:
    """A PostToolUse as Claude Code 2.1 sends it (tests/fixtures/agent-hooks)."""
    return {
        "session_id": session,
        "transcript_path": f"{cwd}/.transcript.jsonl",
        "cwd": cwd,
        "permission_mode": "default",
        "hook_event_name": "PostToolUse",
        "tool_name": "Bash",
        "tool_input": {"command": f"pytest tests/test_mod_{n % 50}.py -q", "description": "Run"},
        "tool_response": {
            "stdout": "collected 12 items\n" + "." * 12 + f"\n12 passed in 0.{n % 9}s\n" * 20,
            "stderr": "",
            "interrupted": False,
            "isImage": False,
        },
        "tool_use_id": f"toolu_bench_{n:08d}",
    }


def post(conn: http.client.HTTPConnection, event: str, body: bytes, token: str) -> bytes:
    conn.request("POST", f"/api/hooks/claude-code/{event}", body,
                 {"content-type": "application/json", HOOK_HEADER: token})  # fmt: skip
    response = conn.getresponse()
    answer = response.read()
    if response.status != 200:
        raise RuntimeError(f"{event}: HTTP {response.status} {answer[:200]!r}")
    return answer


def timed(port: int, event: str, bodies: list[bytes], token: str, *, fresh: bool) -> list[float]:
    """Round trips in ms; `fresh`: a new connection per POST, else one kept alive."""
    kept = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    out = []
    for body in bodies:
        start = time.perf_counter()
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10) if fresh else kept
        post(conn, event, body, token)
        if fresh:
            conn.close()
        out.append((time.perf_counter() - start) * 1000)
    kept.close()
    return out


def cpu_ms(pid: int) -> float:
    """The process's user + system CPU time so far (ms): what a POST costs the worker, a figure
    a loaded machine stretches far less than a round trip."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) * 1000 / os.sysconf("SC_CLK_TCK")


def ms(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[int(q * (len(ordered) - 1))]


def wait_ready(port: int) -> None:
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        try:
            if request("GET", "/api/readiness", port=port, timeout=1).status == 200:
                return
        except WorkerUnavailable:
            pass
        time.sleep(0.02)
    raise RuntimeError("worker never became ready")


def remember(data: str, project: Path, path: Path) -> None:
    """One observation that modified `path`, older than the file: the gate has a timeline."""
    os.environ["CLAUDE_MEM_DATA_DIR"] = data
    from claude_mem.records import Observation  # noqa: PLC0415 - after the data dir is set
    from claude_mem.store import Database  # noqa: PLC0415
    from claude_mem.store.observations import insert_observation  # noqa: PLC0415
    from claude_mem.store.sessions import ensure_session  # noqa: PLC0415

    with Database() as db, db.write() as conn:
        sid = ensure_session(conn, platform="claude-code", host_session_id="past",
                             project=project.name)  # fmt: skip
        insert_observation(conn, Observation(
            session_id=sid, project=project.name, type="change",
            title="Batch retries are capped at 60 seconds", files_modified=[str(path)],
            created_at=int(time.time() * 1000) + 60_000,
        ))  # fmt: skip


BATCH = 50  # POSTs to one worker before the A/B turns to the other


def alternate(baseline: Path, runs: int, env: dict[str, str]) -> None:
    """This tree's worker and `baseline`'s, side by side, fresh-connection POSTs alternated."""
    trees = {"this tree": str(Path(__file__).resolve().parent.parent / "src"),
             "baseline": str(baseline.resolve() / "src")}  # fmt: skip
    with contextlib.ExitStack() as stack:
        workers = {}
        for name, src in trees.items():
            data, root = (stack.enter_context(tempfile.TemporaryDirectory()) for _ in "dr")
            project = Path(root) / "ledger"
            project.mkdir()
            proc, port = stack.enter_context(worker_on(data, {**env, "PYTHONPATH": src}))
            workers[name] = (Path(data), project, proc, port)
        for data, project, _, port in workers.values():
            wait_ready(port)
            init = {"host_session_id": "bench", "platform": "claude-code", "cwd": str(project),
                    "prompt": "run the tests and fix what fails"}  # fmt: skip
            token = (data / "worker.token").read_text().strip()
            done = request("POST", "/api/sessions/init", port=port, token=token,
                           body=json.dumps(init).encode())  # fmt: skip
            assert done.status == 200, done.body
        times: dict[str, list[float]] = {name: [] for name in workers}
        cpu: dict[str, float] = dict.fromkeys(workers, 0.0)
        sent = 0
        for turn in range(max(runs // BATCH, 1) + 1):  # the first round warms both up
            for name in list(workers) if turn % 2 else list(workers)[::-1]:
                data, project, proc, port = workers[name]
                bodies = [json.dumps(payload("bench", sent + n, str(project))).encode()
                          for n in range(BATCH)]  # fmt: skip
                sent += BATCH
                before = cpu_ms(proc.pid)
                got = timed(port, "PostToolUse", bodies,
                            (data / "hook.token").read_text().strip(), fresh=True)  # fmt: skip
                if turn:
                    times[name] += got
                    cpu[name] += cpu_ms(proc.pid) - before
    print("| figure | value |\n|---|---|")
    for name, values in times.items():
        print(f"| PostToolUse http round trip, fresh connection, {name} ({len(values):,}) | "
              f"p50 {ms(values, 0.5):.2f} ms, p95 {ms(values, 0.95):.2f} ms, "
              f"worker CPU per POST {cpu[name] / len(values):.2f} ms |")  # fmt: skip
    ratio = ms(times["this tree"], 0.5) / ms(times["baseline"], 0.5)
    cpu_ratio = (cpu["this tree"] / len(times["this tree"])) / (
        cpu["baseline"] / len(times["baseline"])
    )
    print(f"\nthis tree / baseline: p50 {ratio:.2f}, worker CPU per POST {cpu_ratio:.2f} "
          f"(load average {os.getloadavg()[0]:.1f})")  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=500)
    parser.add_argument("--baseline", type=Path, help="another tree's src/ to run beside this one")
    args = parser.parse_args()
    env = {**os.environ, "CLAUDE_MEM_EMBEDDING_MODEL": "none"}
    if args.baseline is not None:
        alternate(args.baseline, args.runs, env)
        return
    with tempfile.TemporaryDirectory() as data, tempfile.TemporaryDirectory() as root:
        project = Path(root) / "ledger"
        project.mkdir()
        known = project / "batch.py"
        known.write_text("# Payments post in batches; each batch retries.\n" * 80)
        unknown = project / "other.py"
        unknown.write_text("# Nothing remembered about this one.\n" * 80)
        with worker_on(data, env) as (proc, port):
            wait_ready(port)
            api_token = (Path(data) / "worker.token").read_text().strip()
            hook_token = (Path(data) / "hook.token").read_text().strip()
            init = {"host_session_id": "bench", "platform": "claude-code", "cwd": str(project),
                    "prompt": "run the tests and fix what fails"}  # fmt: skip
            done = request("POST", "/api/sessions/init", port=port, token=api_token,
                           body=json.dumps(init).encode())  # fmt: skip
            assert done.status == 200, done.body
            remember(data, project, known)
            bodies = [json.dumps(payload("bench", n, str(project))).encode()
                      for n in range(2 * args.runs + 20)]  # fmt: skip
            timed(port, "PostToolUse", bodies[:20], hook_token, fresh=True)  # warm-up
            cpu_before = cpu_ms(proc.pid)
            fresh = timed(port, "PostToolUse", bodies[20 : 20 + args.runs], hook_token, fresh=True)
            cpu_per_post = (cpu_ms(proc.pid) - cpu_before) / args.runs
            kept = timed(port, "PostToolUse", bodies[20 + args.runs :], hook_token, fresh=False)
            # The same events straight to the ingest route a command hook calls: what the
            # adapter, the handler and the in-process hop add on top of it.
            direct = []
            for n in range(args.runs):
                event = {"platform": "claude-code", "host_session_id": "bench", "cwd": str(project),
                         **{k: v for k, v in payload("bench", n, str(project)).items()
                            if k in ("tool_name", "tool_input", "tool_response")},
                         "tool_use_id": f"toolu_direct_{n:08d}"}  # fmt: skip
                body = json.dumps(event).encode()
                start = time.perf_counter()
                done = request("POST", "/api/sessions/observations", port=port, body=body,
                               token=api_token)  # fmt: skip
                direct.append((time.perf_counter() - start) * 1000)
                assert done.status == 200, done.body

            def read(path: Path, n: int) -> bytes:
                body = {**payload(f"read-{path.name}-{n}", n, str(project)),
                        "hook_event_name": "PreToolUse", "tool_name": "Read",
                        "tool_input": {"file_path": str(path)}}  # fmt: skip
                body.pop("tool_response")
                return json.dumps(body).encode()

            runs = max(args.runs // 5, 20)
            gate_bodies = [read(known, n) for n in range(runs)]
            conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
            answer = json.loads(post(conn, "PreToolUse", read(known, -1), hook_token))
            conn.close()
            context = answer.get("hookSpecificOutput", {}).get("additionalContext", "")
            assert "Batch retries are capped" in context, answer
            gate = timed(port, "PreToolUse", gate_bodies, hook_token, fresh=True)
            miss = timed(port, "PreToolUse", [read(unknown, n) for n in range(runs)],
                         hook_token, fresh=True)  # fmt: skip
            stats = request("GET", "/api/stats", port=port, token=api_token).json()

    def row(name: str, values: list[float]) -> str:
        return (f"| {name} ({len(values):,}) | p50 {ms(values, 0.5):.2f} ms, "
                f"p95 {ms(values, 0.95):.2f} ms |")  # fmt: skip

    print("| figure | value |\n|---|---|")
    print(row("PostToolUse http round trip, fresh connection", fresh))
    print(row("PostToolUse http round trip, kept-alive connection", kept))
    print(row("the same event on /api/sessions/observations (a command hook's call)", direct))
    print(f"| worker CPU per PostToolUse POST (fresh connection) | {cpu_per_post:.2f} ms |")
    print(row("PreToolUse Read gate, a remembered file (timeline answered)", gate))
    print(row("PreToolUse Read gate, a file memory does not know", miss))
    print(f"| events stored (sanity) | {stats['counts']['tool_uses']:,} |")
    p50 = ms(fresh, 0.5)
    verdict = "meets" if p50 <= FLOOR_MS else "MISSES"
    print(f"\nPostToolUse p50 {p50:.2f} ms (fresh connection) {verdict} the {FLOOR_MS:g} ms floor.")


if __name__ == "__main__":
    main()
