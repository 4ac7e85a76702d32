// The worker's own state: health, queue and provider figures; the end of today's log.

import { api } from "./api.js";
import { el, facts, when } from "./dom.js";

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
