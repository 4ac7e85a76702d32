// The worker's own state: health, queue and provider figures; team sync; the end of today's log.

import { api } from "./api.js";
import { duration, el, facts, list, plural, when, whenAgo } from "./dom.js";

const LOG_LINES = 300;
// The store's counted tables (store/stats.py) as a person calls them.
const COUNTED = { sessions: "Sessions", user_prompts: "Prompts", observations: "Observations",
  session_summaries: "Summaries", tool_uses: "Tool uses" };
// A provider's ledger entry (pipeline/health.py): what is shown, in this order; times are
// epoch seconds. Other fields are the ledger's own bookkeeping.
const PROVIDER_FIELDS = [
  ["consecutive_failures", "Failures in a row"],
  ["last_error_kind", "Last error kind"],
  ["last_error", "Last error"],
  ["last_failure_at", "Last failure", "time"],
  ["last_success_at", "Last success", "time"],
  ["paused_reason", "Paused for"],
  ["paused_until", "Paused until", "time"],
];

const label = (name) => COUNTED[name] ?? name.charAt(0).toUpperCase() + name.slice(1).replaceAll("_", " ");

function providerFacts(state) {
  return facts(PROVIDER_FIELDS.map(([field, term, kind]) => {
    const value = state[field];
    if (value === null || value === undefined) return [term, null];
    return [term, kind === "time" ? whenAgo(value * 1000) : String(value)];
  }));
}

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
          ["Up for", duration(health.uptime_s)],
          ["Database", `${stats.database_path} (${stats.database_bytes.toLocaleString()} bytes)`],
          ["Live viewers", stats.stream_clients],
          ["Embeddings", embeddingText(health.embedding)],
        ])),
      el("section", { class: "detail-section" }, el("h3", { text: "Memory" }),
        facts(Object.entries(stats.counts).map(([table, count]) => [label(table), count.toLocaleString()]))),
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
              el("h4", { text: name }), providerFacts(state)))
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
