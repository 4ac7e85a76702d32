// The feed: prompts, observations and summaries, newest first (or ranked, while searching),
// paged by infinite scroll and kept current by live events. Cards are keyed by kind and id,
// so whatever the order of page loads and live events, a record is shown exactly once.

import { api } from "./api.js";
import { byline, el, inline, when } from "./dom.js";

const PAGE = 30;
const LIVE_BATCH_MS = 25;
const KIND_ORDER = { prompt: 0, observation: 1, summary: 2 };

export const cardKey = (kind, id) => `${kind}:${id}`;

// > 0 when a is newer than b, in the worker's own order (time, kind, id).
const newer = (a, b) =>
  a.time - b.time || KIND_ORDER[a.kind] - KIND_ORDER[b.kind] || a.id - b.id;

// The worker's one query limit (store/fulltext.py: QUERY_CHARS, _HEAD_CHARS, _JOIN; a test
// keeps them equal): a pasted text is clipped the same way before it is sent.
const QUERY_CHARS = 2000;
const HEAD_CHARS = 1200;
const JOIN = " … ";
export const clipQuery = (text) =>
  text.length <= QUERY_CHARS
    ? text
    : text.slice(0, HEAD_CHARS) + JOIN + text.slice(-(QUERY_CHARS - HEAD_CHARS - JOIN.length));

const cssName = (text) => String(text).toLowerCase().replace(/[^a-z0-9-]/g, "-");
// `history a1b2c3d`: the label of a commit read from git history (search hits carry its hash).
const historyLabel = (hit) => (hit.commit ? `history ${hit.commit.slice(0, 7)}` : "history");

export class Feed {
  constructor({ list, status, sentinel }) {
    this.list = list;
    this.status = status;
    this.sentinel = sentinel;
    this.filters = {};
    this.query = "";
    this.cards = new Map(); // key → {hit, node}
    this.order = []; // hits as shown, top to bottom
    this.offset = 0;
    this.hasMore = true;
    this.loading = null;
    this.generation = 0;
    this.painted = false;
    this.missedWhileSearching = 0;
    this.pendingLive = new Map(); // session id → Set of kinds
    this.liveTimer = null;
    new IntersectionObserver((entries) => {
      if (entries.some((entry) => entry.isIntersecting)) this.more();
    }, { rootMargin: "600px" }).observe(sentinel);
  }

  get searching() {
    return this.query.trim() !== "";
  }

  params() {
    const { project, platform, type, since, until } = this.filters;
    const params = { project, platform, since, until };
    if (type === "prompt" || type === "summary") params.kind = type;
    else if (type) params.type = type;
    if (this.searching) params.query = clipQuery(this.query.trim());
    return params;
  }

  async reload() {
    this.generation += 1;
    this.cards.clear();
    this.order = [];
    this.list.replaceChildren();
    this.offset = 0;
    this.hasMore = true;
    this.loading = null;
    this.missedWhileSearching = 0;
    await this.more();
  }

  more() {
    if (!this.loading && this.hasMore) this.loading = this.loadPage(this.generation);
    return this.loading;
  }

  async loadPage(generation) {
    this.say("Loading…");
    try {
      const page = await api("/api/search", {
        params: { ...this.params(), offset: this.offset, limit: PAGE },
      });
      if (generation !== this.generation) return;
      this.hasMore = page.has_more;
      this.offset += page.hits.length;
      const added = page.hits.filter((hit) => !this.cards.has(cardKey(hit.kind, hit.id)));
      for (const hit of added) this.place(hit, this.order.length);
      if (!this.painted && this.order.length) {
        this.painted = true;
        performance.mark("first-cards");
      }
      this.hydrate(added);
      this.sayWhere();
    } catch (error) {
      if (generation === this.generation) this.say(`Could not load memory: ${error.message}`);
      return;
    } finally {
      if (generation === this.generation) this.loading = null;
    }
    if (this.hasMore && this.sentinelVisible()) await this.more();
  }

  sentinelVisible() {
    const box = this.sentinel.getBoundingClientRect();
    return box.top < window.innerHeight + 600;
  }

  say(text) {
    this.status.textContent = text;
  }

  sayWhere() {
    const shown = this.order.length;
    let text;
    if (!shown) text = this.searching ? "Nothing matches this search." : "No memory matches.";
    else if (this.hasMore) text = `${shown.toLocaleString()} shown; scroll for more.`;
    else text = `${shown.toLocaleString()} shown: that is all.`;
    if (this.searching && clipQuery(this.query.trim()) !== this.query.trim()) {
      text += ` Query clipped to ${QUERY_CHARS.toLocaleString()} characters.`;
    }
    if (this.missedWhileSearching) {
      text += ` ${this.missedWhileSearching} new since this search: clear it to see them.`;
    }
    this.say(text);
  }

  // Show `hit` at position `index` of the list.
  place(hit, index) {
    const node = this.card(hit);
    const before = this.order[index];
    this.list.insertBefore(node, before ? this.cards.get(cardKey(before.kind, before.id)).node : null);
    this.order.splice(index, 0, hit);
    this.cards.set(cardKey(hit.kind, hit.id), { hit, node });
    return node;
  }

  card(hit) {
    const isObservation = hit.kind === "observation";
    const label = isObservation ? hit.type : hit.kind;
    const href = isObservation ? `#/observation/${hit.id}` : `#/session/${hit.session_id}`;
    const files = hit.files || [];
    return el(
      "li",
      { class: `card card-${hit.kind}`, "data-key": cardKey(hit.kind, hit.id) },
      el(
        "div",
        { class: "card-meta" },
        el("span", { class: `badge badge-${cssName(label)}`, text: label }),
        // A commit read from the project's git history, not a session's memory.
        hit.source === "git"
          ? el("span", { class: "badge badge-history", text: historyLabel(hit) })
          : null,
        el("span", { class: "project", text: hit.project }),
        byline(hit.author),
        when(hit.time),
      ),
      el("h3", { class: "card-title" }, el("a", { href }, inline(hit.title || "(untitled)"))),
      el("p", { class: "subtitle", hidden: true }),
      files.length
        ? el("p", {
            class: "files",
            text: files.slice(0, 3).join(", ") + (files.length > 3 ? ` +${files.length - 3}` : ""),
          })
        : null,
    );
  }

  // Observation cards get their subtitle and whole title (search shortens long ones) from
  // the full records, one request per page.
  async hydrate(hits) {
    const ids = hits.filter((hit) => hit.kind === "observation").map((hit) => hit.id);
    if (!ids.length) return;
    try {
      const { items } = await api("/api/observations/batch", { method: "POST", body: { ids } });
      for (const item of items) {
        const entry = this.cards.get(cardKey("observation", item.id));
        if (entry && item.title) {
          entry.node.querySelector(".card-title a").replaceChildren(...inline(item.title));
        }
        const subtitle = entry && entry.node.querySelector(".subtitle");
        if (subtitle && item.subtitle) {
          subtitle.replaceChildren(...inline(item.subtitle));
          subtitle.hidden = false;
        }
      }
    } catch {
      // cards stay without subtitles; the detail view still has them
    }
  }

  // Records the worker reports (live, or on a reconnect) that this feed may be missing.
  merge(hits) {
    const fresh = [];
    for (const hit of hits) {
      if (this.cards.has(cardKey(hit.kind, hit.id))) continue;
      const last = this.order[this.order.length - 1];
      // Older than everything loaded: paging will bring it, in its place.
      if (this.hasMore && last && newer(hit, last) < 0) continue;
      let index = this.order.findIndex((shown) => newer(hit, shown) > 0);
      if (index < 0) index = this.order.length;
      const node = this.place(hit, index);
      node.classList.add("fresh");
      this.offset += 1; // it took a place in the worker's list before the next page
      fresh.push(hit);
    }
    this.hydrate(fresh);
    if (fresh.length) this.sayWhere();
  }

  // A record was added in a session: fetch it (with the current filters) soon.
  noteLive(kind, sessionId) {
    if (this.searching) {
      this.missedWhileSearching += 1;
      this.sayWhere();
      return;
    }
    if (!this.pendingLive.has(sessionId)) this.pendingLive.set(sessionId, new Set());
    this.pendingLive.get(sessionId).add(kind);
    clearTimeout(this.liveTimer);
    this.liveTimer = setTimeout(() => this.flushLive(), LIVE_BATCH_MS);
  }

  async flushLive() {
    const pending = [...this.pendingLive];
    this.pendingLive.clear();
    await this.loading;
    const generation = this.generation;
    for (const [sessionId, kinds] of pending) {
      try {
        const page = await api("/api/search", {
          params: { ...this.params(), session_id: sessionId, kind: [...kinds], limit: 20 },
        });
        if (generation === this.generation) this.merge(page.hits);
      } catch {
        // the next event or reconnect catches up
      }
    }
  }

  // After (re)connecting: pick up what happened while the stream was not listening.
  async catchUp() {
    if (this.searching) return;
    await this.loading;
    const generation = this.generation;
    try {
      const page = await api("/api/search", { params: { ...this.params(), limit: PAGE } });
      if (generation === this.generation) this.merge(page.hits);
    } catch {
      // shown on the next page load
    }
  }

  remove(kind, id) {
    const entry = this.cards.get(cardKey(kind, id));
    if (!entry) return;
    entry.node.remove();
    this.cards.delete(cardKey(kind, id));
    this.order.splice(this.order.indexOf(entry.hit), 1);
    this.offset = Math.max(0, this.offset - 1);
    this.sayWhere();
  }

  removeWhere(test) {
    for (const { hit } of [...this.cards.values()]) {
      if (test(hit)) this.remove(hit.kind, hit.id);
    }
  }

  removeSession(sessionId) {
    this.removeWhere((hit) => hit.session_id === sessionId);
  }

  removeProject(project) {
    this.removeWhere((hit) => hit.project === project);
  }
}
