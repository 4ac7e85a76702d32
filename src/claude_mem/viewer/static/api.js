// The worker's API, same origin: the HttpOnly viewer cookie authenticates every call.

export class ApiError extends Error {
  constructor(status, message, code) {
    super(message);
    this.status = status;
    this.code = code;
  }
}

const listeners = new Set();

// Called with the error whenever the worker says this browser is not signed in.
export function onSignedOut(listener) {
  listeners.add(listener);
}

export function query(params) {
  const search = new URLSearchParams();
  for (const [name, value] of Object.entries(params)) {
    for (const item of Array.isArray(value) ? value : [value]) {
      if (item !== undefined && item !== null && item !== "") search.append(name, String(item));
    }
  }
  const text = search.toString();
  return text ? `?${text}` : "";
}

export async function api(path, { method = "GET", params = {}, body, text = false } = {}) {
  const init = { method, credentials: "same-origin", headers: {} };
  if (body !== undefined) {
    init.body = JSON.stringify(body);
    init.headers["content-type"] = "application/json";
  }
  let response;
  try {
    response = await fetch(path + query(params), init);
  } catch (error) {
    throw new ApiError(0, `the worker did not answer (${error.message})`, "unreachable");
  }
  if (!response.ok) {
    let detail = { error: response.statusText, code: "error" };
    try {
      detail = await response.json();
    } catch {
      // not JSON: keep the status text
    }
    const error = new ApiError(response.status, detail.error, detail.code);
    if (response.status === 401) listeners.forEach((listener) => listener(error));
    throw error;
  }
  return text ? response.text() : response.json();
}
