// The viewer page: wires the feed, the live stream, the side panel (records, settings, logs,
// health, team sync), filters, search, theme and keyboard shortcuts. Routes live in the URL hash.

import { api, onSignedOut } from "./api.js";
import { $, el } from "./dom.js";
import { Feed } from "./feed.js";
import { observationView, sessionView } from "./records.js";
import { settingsView } from "./settings.js";
import { LiveStream } from "./stream.js";
import { healthView, logsView, teamView } from "./system.js";

const LOG_REFRESH_MS = 3000;
const SEARCH_DELAY_MS = 250;
const THEME_KEY = "claude-mem-theme";

const feed = new Feed({ list: $("#feed"), status: $("#feed-status"), sentinel: $("#feed-end") });
let meta = { platforms: [], types: [], settings: [] };
let projects = [];
let panelTimer = null;
let opener = null;
let signedOut = false;

// --- theme -----------------------------------------------------------------------------------

function applyTheme(theme) {
  document.documentElement.dataset.theme = theme;
  const button = $("#theme-toggle");
  button.setAttribute("aria-pressed", String(theme === "dark"));
  button.textContent = theme === "dark" ? "Light theme" : "Dark theme";
}

function initialTheme() {
  const saved = localStorage.getItem(THEME_KEY);
  if (saved === "light" || saved === "dark") return saved;
  return matchMedia("(prefers-color-scheme: dark)").matches ? "dark" : "light";
}

$("#theme-toggle").addEventListener("click", () => {
  const next = document.documentElement.dataset.theme === "dark" ? "light" : "dark";
  localStorage.setItem(THEME_KEY, next);
  applyTheme(next);
});

// --- status line -----------------------------------------------------------------------------

const LIVE_TEXT = {
  connecting: "Connecting…",
  live: "Live",
  reconnecting: "Reconnecting…",
  offline: "Worker unreachable",
  paused: "Paused",
  "signed-out": "Not signed in",
};

function showLive(state) {
  const pill = $("#live-state");
  pill.textContent = LIVE_TEXT[state];
  pill.dataset.state = state;
}

function showQueue(queue) {
  const busy = queue.pending + queue.processing;
  const pill = $("#queue-state");
  pill.dataset.busy = String(busy > 0);
  pill.textContent = busy ? `Processing: ${busy} queued` : "Queue empty";
  const dead = $("#dead-state");
  dead.hidden = !queue.dead;
  dead.textContent = `${queue.dead} dead letter${queue.dead === 1 ? "" : "s"}`;
}

async function refreshStats() {
  try {
    showQueue((await api("/api/stats")).queue);
  } catch {
    // the stream or the next refresh tells
  }
}

// --- filters and search ----------------------------------------------------------------------

function fillSelect(select, values, allLabel) {
  const chosen = select.value;
  select.replaceChildren(
    el("option", { value: "", text: allLabel }),
    ...values.map(([value, label]) => el("option", { value, text: label })),
  );
  select.value = values.some(([value]) => value === chosen) ? chosen : "";
}

async function loadFacets() {
  [meta, { projects }] = await Promise.all([api("/api/viewer/meta"), api("/api/projects")]);
  fillSelect($("#filter-project"), projects.map((p) => [p.name, p.name]), "All projects");
  fillSelect($("#filter-platform"), meta.platforms.map((p) => [p, p]), "All platforms");
  fillSelect(
    $("#filter-type"),
    [["prompt", "Prompts"], ["summary", "Summaries"], ...meta.types.map((t) => [t, t])],
    "All kinds",
  );
}

// A date picker gives a day on the user's own calendar; the API reads a bare date as a UTC
// day, so the local day's bounds go as epoch ms.
function localDay(value, offsetDays) {
  if (!value) return "";
  const [year, month, day] = value.split("-").map(Number);
  return String(new Date(year, month - 1, day + offsetDays).getTime() - (offsetDays ? 1 : 0));
}

function readFilters() {
  feed.filters = {
    project: $("#filter-project").value,
    platform: $("#filter-platform").value,
    type: $("#filter-type").value,
    since: localDay($("#filter-since").value, 0),
    until: localDay($("#filter-until").value, 1),
  };
  feed.reload();
}

for (const id of ["#filter-project", "#filter-platform", "#filter-type", "#filter-since", "#filter-until"]) {
  $(id).addEventListener("change", readFilters);
}
$("#filters").addEventListener("reset", () => setTimeout(readFilters));

let searchTimer = null;
$("#search").addEventListener("input", () => {
  clearTimeout(searchTimer);
  searchTimer = setTimeout(() => {
    feed.query = $("#search").value;
    feed.reload();
  }, SEARCH_DELAY_MS);
});
$("#search-form").addEventListener("submit", (event) => {
  event.preventDefault();
  clearTimeout(searchTimer);
  feed.query = $("#search").value;
  feed.reload();
});

// --- the side panel --------------------------------------------------------------------------

function closePanel() {
  clearInterval(panelTimer);
  $("#panel").hidden = true;
  document.body.classList.remove("panel-open");
  if (location.hash) history.replaceState(null, "", location.pathname);
  if (opener && document.contains(opener)) opener.focus();
  opener = null;
}

async function openPanel(load) {
  clearInterval(panelTimer);
  const panel = $("#panel");
  const body = $("#panel-body");
  const from = document.activeElement;
  if (from && from !== document.body && !panel.contains(from)) opener = from;
  panel.hidden = false;
  document.body.classList.add("panel-open");
  $("#panel-title").textContent = "Loading…";
  body.replaceChildren();
  try {
    const view = await load();
    $("#panel-title").replaceChildren(...[view.title].flat()); // text, or text and <code>
    body.replaceChildren(...view.body.flat().filter(Boolean));
    if (view.refresh) panelTimer = setInterval(() => view.refresh().catch(() => {}), LOG_REFRESH_MS);
  } catch (error) {
    $("#panel-title").textContent = error.status === 404 ? "Not found" : "Could not load";
    body.replaceChildren(el("p", { class: "error", text: error.message }));
  }
  // Into the panel, unless the person has moved on while it loaded.
  if ([from, document.body].includes(document.activeElement)) $("#panel-title").focus();
}

function onDeleted(kind, id, sessionId) {
  if (kind === "session") feed.removeSession(sessionId);
  else feed.remove(kind, id);
  toast(kind === "session" ? `Session #${id} forgotten.` : `Observation #${id} forgotten.`);
  closePanel();
}

function route() {
  const [, view, id] = location.hash.match(/^#\/(\w+)(?:\/(\d+))?$/) || [];
  const ctx = { onDeleted };
  if (view === "observation" && id) openPanel(() => observationView(Number(id), ctx));
  else if (view === "session" && id) openPanel(() => sessionView(Number(id), ctx));
  else if (view === "settings") openPanel(() => settingsView(meta, projects));
  else if (view === "logs") openPanel(logsView);
  else if (view === "health") openPanel(healthView);
  else if (view === "team") openPanel(teamView);
  else if (!$("#panel").hidden) closePanel();
}

window.addEventListener("hashchange", route);
$("#panel-close").addEventListener("click", closePanel);

function toast(text) {
  const note = $("#toast");
  note.textContent = text;
  note.hidden = false;
  setTimeout(() => { note.hidden = true; }, 4000);
}

// --- live events -----------------------------------------------------------------------------

const stream = new LiveStream((event) => {
  switch (event.type) {
    case "connected":
      feed.catchUp();
      refreshStats();
      break;
    case "reset":
      feed.reload();
      break;
    case "new_observation":
      feed.noteLive("observation", event.observation.session_id);
      break;
    case "new_prompt":
      feed.noteLive("prompt", event.prompt.session_id);
      break;
    case "new_summary":
      feed.noteLive("summary", event.summary.session_id);
      break;
    case "observation_deleted":
      feed.remove("observation", event.record_id);
      break;
    case "summary_deleted": // deleted, or replaced by its session's newer version
      feed.remove("summary", event.record_id);
      break;
    case "session_deleted":
      feed.removeSession(event.record_id);
      break;
    case "project_deleted":
      feed.removeProject(event.project);
      loadFacets().catch(() => {});
      break;
    case "processing_status":
      showQueue(event.queue);
      break;
    case "session_started":
      if (!projects.some((p) => p.name === event.project)) loadFacets().catch(() => {});
      break;
    default:
      break;
  }
}, showLive);

$("#pause-live").addEventListener("click", () => {
  const button = $("#pause-live");
  if (stream.paused) stream.resume();
  else stream.pause();
  button.setAttribute("aria-pressed", String(stream.paused));
  button.textContent = stream.paused ? "Resume live" : "Pause live";
});

onSignedOut(() => {
  signedOut = true;
  stream.close();
  showLive("signed-out");
  $("#signin").hidden = false;
});

// --- keyboard --------------------------------------------------------------------------------

function moveCard(step) {
  const links = [...document.querySelectorAll("#feed .card-title a")];
  const at = links.indexOf(document.activeElement);
  const next = links[Math.max(0, Math.min(links.length - 1, at + step))];
  if (next) next.focus();
}

document.addEventListener("keydown", (event) => {
  const typing = event.target.closest("input, select, textarea, [contenteditable]");
  if (event.key === "Escape" && !$("#panel").hidden && !$("#confirm").open) {
    closePanel();
  } else if (typing || event.ctrlKey || event.metaKey || event.altKey) {
    return;
  } else if (event.key === "/") {
    event.preventDefault();
    $("#search").focus();
  } else if (event.key === "j") {
    moveCard(1);
  } else if (event.key === "k") {
    moveCard(-1);
  }
});

// --- start -----------------------------------------------------------------------------------

// The first page of the feed goes first, alone: everything else waits for it. The stream
// opens after it; its `connected` event makes the feed catch up on anything in between.
applyTheme(initialTheme());
feed.reload().finally(() => {
  if (signedOut) return;
  stream.open();
  loadFacets().then(route, route);
});
