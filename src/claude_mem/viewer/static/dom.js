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

export function $(selector) {
  return document.querySelector(selector);
}

let dateTime = null; // made on first use: building it costs ms the first request can use

export function when(ms) {
  dateTime ??= new Intl.DateTimeFormat(undefined, { dateStyle: "medium", timeStyle: "short" });
  return el("time", { datetime: new Date(ms).toISOString(), text: dateTime.format(ms) });
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
