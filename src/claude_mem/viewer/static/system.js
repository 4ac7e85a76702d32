// The worker's own state: health, queue and provider figures; team sync; the end of today's log.

import { api } from "./api.js";
import { el, facts, list, plural, when } from "./dom.js";

const LOG_LINES = 300;

export async function healthView() {
  const [health, stats] = await Promise.all([api("/api/health"), api("/api/stats")]);
  const providers = Object.entries(stats.provider_health);
  return {
    title: "Health",
    body: [
      el("section", { class: "detail-section" }, el("h3", { text: "Worker" }),
        facts([
          ["Status", health.ready ? "ready" : `starting: ${health.error ?? ""}`],
          ["Version", health.version],
          ["Process", `pid ${health.pid}, port ${health.port}`],
          ["Up for", `${Math.round(health.uptime_s).toLocaleString()} s`],
          ["Database", `${stats.database_path} (${stats.database_bytes.toLocaleString()} bytes)`],
          ["Live viewers", stats.stream_clients],
          ["Embeddings", embeddingText(health.embedding)],
        ])),
      el("section", { class: "detail-section" }, el("h3", { text: "Memory" }),
        facts(Object.entries(stats.counts).map(([table, count]) => [table, count.toLocaleString()]))),
      el("section", { class: "detail-section" }, el("h3", { text: "Queue" }),
        facts([
          ["Pending", stats.queue.pending],
          ["Processing", stats.queue.processing],
          ["Dead letters", stats.queue.dead],
          ["Active consumers", stats.active_consumers],
        ])),
      el("section", { class: "detail-section" }, el("h3", { text: "Providers" }),
        facts([["Chain", stats.provider_chain.join(" → ") || "none"]]),
        providers.length
          ? providers.map(([name, state]) => el("div", { class: "provider" },
              el("h4", { text: name }),
              facts(Object.entries(state).map(([k, v]) =>
                [k, typeof v === "object" ? JSON.stringify(v) : String(v)]))))
          : el("p", { class: "hint", text: "No provider has failed since the ledger began." })),
    ],
  };
}

// The embedder's state from /api/health: a stopped model is said, with its reason.
function embeddingText(embedding) {
  if (!embedding) return "off: full-text search only";
  const { state, error, failures } = embedding;
  if (state === "failed") return `stopped, the model did not load: ${error}; search uses full text only`;
  if (state === "retrying") return `waiting for the database (${error}; ${failures} tries, retrying)`;
  return { waiting: "idle: nothing to embed yet", loading: "loading the model",
    locked: "waiting for claude-mem reindex to finish" }[state] ?? state;
}

export async function logsView() {
  const output = el("pre", { class: "logs", id: "log-lines", tabindex: "0" });
  const where = el("p", { class: "hint" });
  const refresh = async () => {
    const logs = await api("/api/logs", { params: { lines: LOG_LINES } });
    output.textContent = logs.lines.join("\n") || "(empty)";
    where.replaceChildren(`Last ${LOG_LINES} lines of ${logs.path}, at `, when(Date.now()));
    output.scrollTop = output.scrollHeight;
  };
  await refresh();
  const button = el("button", { type: "button", onclick: refresh, text: "Refresh" });
  return { title: "Logs", body: [el("div", { class: "actions" }, button), where, output], refresh };
}

// Team sync (GET /api/team/status). A worker older than team memory has no such route: the
// panel says so and the rest of the viewer is unaffected.
export async function teamView() {
  const output = el("div", { id: "team-sync" });
  const refresh = async () => {
    let status = null;
    try {
      status = await api("/api/team/status");
    } catch (error) {
      if (error.status !== 404) throw error;
    }
    output.replaceChildren(...teamSync(status));
  };
  await refresh();
  return { title: "Team sync", body: [output], refresh };
}

// The panel's content for a status (null: the worker has no team sync). Server text goes in
// as text nodes only (dom.js), as everywhere in the viewer.
export function teamSync(status) {
  if (status === null) {
    return [el("p", { class: "hint", text: "This worker has no team sync: it predates team memory." })];
  }
  if (!status.configured) {
    return [el("p", { class: "hint" },
      "No team configured: join one with ", el("code", { text: "claude-mem team join URL" }), ".")];
  }
  const errors = recentErrors(status.errors);
  return [
    el("section", { class: "detail-section" }, el("h3", { text: "Sync" }),
      facts([
        ["Server", status.server],
        ["Member", status.member],
        ["Team", status.team],
        ["Last push", status.last_push_at == null ? "never" : when(status.last_push_at)],
        ["Last pull", status.last_pull_at == null ? "never" : when(status.last_pull_at)],
        ["Lag", status.lag_s == null ? "nothing pulled yet" : `${status.lag_s.toFixed(1)} s`],
        ["Outbox", status.outbox ? `${plural(status.outbox, "record")} waiting` : "empty"],
        ["Pushed", status.pushed.toLocaleString()],
        ["Pulled", status.pulled.toLocaleString()],
      ])),
    el("section", { class: "detail-section" }, el("h3", { text: "Shared projects" }),
      list(status.shared_projects, "chips")
        ?? el("p", { class: "hint" },
          "None yet: share one with ", el("code", { text: "claude-mem team share PROJECT" }), ".")),
    el("section", { class: "detail-section" }, el("h3", { text: "Errors" }),
      status.last_error ? el("p", { class: "error", id: "team-last-error", text: status.last_error }) : null,
      errors.length
        ? el("ol", { class: "team-errors" },
          errors.map(({ at, message }) => el("li", {}, when(at), " ", message)))
        : el("p", { class: "hint", text: "No errors." })),
  ];
}

// Newest first: the worker keeps {at, message} entries oldest first.
function recentErrors(errors) {
  return [...errors].reverse();
}
