// DOM building without HTML parsing: every piece of text goes in through text nodes, so
// titles, prompts or file names that contain markup are shown, never run.

export function el(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [name, value] of Object.entries(attrs)) {
    if (value === undefined || value === null || value === false) continue;
    if (name === "class") node.className = value;
    else if (name === "text") node.textContent = String(value);
    else if (name.startsWith("on")) node.addEventListener(name.slice(2), value);
    else if (name in node && typeof value !== "string") node[name] = value;
    else node.setAttribute(name, value === true ? "" : String(value));
  }
  append(node, children);
  return node;
}

export function append(node, children) {
  for (const child of children.flat()) {
    if (child === undefined || child === null || child === false) continue;
    node.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return node;
}

// Text with its `code` spans as <code> elements (records mark identifiers and commands that
// way); the pieces go in as text nodes, so nothing in them is parsed as HTML.
const CODE_SPAN = /`([^`\n]+)`/g;
export function inline(text) {
  const source = String(text ?? "");
  const parts = [];
  let at = 0;
  for (const match of source.matchAll(CODE_SPAN)) {
    if (match.index > at) parts.push(source.slice(at, match.index));
    parts.push(el("code", { text: match[1] }));
    at = match.index + match[0].length;
  }
  if (at < source.length) parts.push(source.slice(at));
  return parts;
}

export function $(selector) {
  return document.querySelector(selector);
}

let dateTime = null; // made on first use: building it costs ms the first request can use

export function when(ms) {
  dateTime ??= new Intl.DateTimeFormat(undefined, { dateStyle: "medium", timeStyle: "short" });
  return el("time", { datetime: new Date(ms).toISOString(), text: dateTime.format(ms) });
}

let relativeTime = null;
const UNITS = [["day", 86_400], ["hour", 3_600], ["minute", 60], ["second", 1]];

// "3 minutes ago", "in 20 minutes": how far `ms` is from now, in its largest whole unit.
export function ago(ms, now = Date.now()) {
  relativeTime ??= new Intl.RelativeTimeFormat(undefined, { numeric: "auto" });
  const seconds = (ms - now) / 1000;
  const [unit, size] = UNITS.find(([, size]) => Math.abs(seconds) >= size) ?? UNITS[3];
  return relativeTime.format(Math.trunc(seconds / size), unit);
}

// A moment as the local date and time, and how long ago it was.
export function whenAgo(ms) {
  return [when(ms), ` (${ago(ms)})`];
}

// "2 hours 5 minutes": a length of time in its two largest units.
export function duration(seconds) {
  const parts = [];
  let left = Math.max(0, Math.floor(seconds));
  for (const [unit, size] of UNITS) {
    const count = Math.floor(left / size);
    left -= count * size;
    if (count && parts.length < 2) parts.push(plural(count, unit));
    else if (parts.length) break;
  }
  return parts.join(" ") || "0 seconds";
}

// "by NAME" on a record pulled from the team (its `author`); nothing on one's own records.
export function byline(author) {
  return author ? el("span", { class: "author", title: "From the team", text: `by ${author}` }) : null;
}

export function plural(count, word) {
  return `${count.toLocaleString()} ${word}${count === 1 ? "" : "s"}`;
}

// A list of strings as <ul>, or nothing when empty.
export function list(items, className) {
  if (!items || !items.length) return null;
  return el("ul", { class: className }, items.map((item) => el("li", { text: item })));
}

// Terms and their descriptions; rows whose value is empty are left out.
export function facts(rows) {
  const dl = el("dl", { class: "facts" });
  for (const [term, value] of rows) {
    if (value === undefined || value === null || value === "") continue;
    append(dl, [el("dt", { text: term }), el("dd", {}, value)]);
  }
  return dl;
}
