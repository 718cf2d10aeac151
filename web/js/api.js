// The /v1 API client: the stored key, fetch with problem+json errors, the error box.
import { $ } from "./dom.js";

export const KEY_STORAGE = "folio.apiKey";

export class ApiError extends Error {
  constructor(title, detail, status, code) {
    super(detail);
    this.title = title;
    this.detail = detail;
    this.status = status;
    this.code = code;
  }
}

export const getKey = () => localStorage.getItem(KEY_STORAGE) ?? "";

/** A request the person cancelled (the fetch was aborted: the server stops the work when the client goes away). */
export class Cancelled extends Error {
  constructor() {
    super("Cancelled");
    this.cancelled = true;
  }
}

/** `signal`: an AbortSignal (the run's Cancel button); an aborted call throws `Cancelled`. */
export async function api(path, body, key = getKey(), signal = undefined) {
  if (!key) throw new ApiError("No API key", "Enter your API key at the top of the page and press Save key.");
  let res;
  let text;
  try {
    res = await fetch(path, {
      method: body === undefined ? "GET" : "POST",
      headers: { "x-api-key": key, accept: "application/json", ...(body === undefined ? {} : { "content-type": "application/json" }) },
      body: body === undefined ? undefined : JSON.stringify(body),
      signal,
    });
    text = await res.text();
  } catch (e) {
    if (e?.name === "AbortError" || signal?.aborted) throw new Cancelled();
    throw new ApiError("Network error", `Could not reach the server (${e.message}). Is it still running?`);
  }
  let data = null;
  try {
    data = text ? JSON.parse(text) : null;
  } catch {
    data = null;
  }
  if (!res.ok) {
    // problem+json (RFC 9457): detail tells a person what to change; message repeats it for PathLit clients.
    const title = (data && data.title) || `HTTP ${res.status}`;
    const detail = (data && (data.detail || data.message)) || text.slice(0, 300) || res.statusText;
    const err = new ApiError(title, detail, res.status, data && data.code);
    if (res.status === 401 && key === getKey()) forgetRejectedKey();
    throw err;
  }
  return { data, headers: res.headers };
}

export function showError(err) {
  const box = $("error");
  box.replaceChildren();
  if (!err) {
    box.hidden = true;
    return;
  }
  const strong = document.createElement("strong");
  strong.textContent = err.status ? `${err.title} (${err.status}${err.code ? ` ${err.code}` : ""})` : err.title || "Error";
  const p = document.createElement("span");
  p.className = "error-detail";
  p.textContent = err.detail || err.message || String(err);
  box.append(strong, p);
  box.hidden = false;
}

/** A stored key the server answered 401 to: removed, and the page says so. */
export function forgetRejectedKey() {
  localStorage.removeItem(KEY_STORAGE);
  $("key-status").textContent = "The server rejected the saved key (401): it was removed from this browser.";
  $("key-status").dataset.state = "rejected";
  $("ticker-search").disabled = true;
}
