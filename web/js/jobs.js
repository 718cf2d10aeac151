// Long work as a job (issue 31; POST /v1/jobs, docs/spec.md "Jobs"): the request is sent with
// `Prefer: respond-async`, the job's id goes into the page's URL (`job=<id>`), its progress (parts done) is shown
// while it runs, and its result is the synchronous route's body. A reload of that URL resumes the same job (the
// form is restored from the URL and run again: the first long call of the same route polls the job instead of
// submitting a new one); Cancel deletes the job on the server.
import { api, ApiError, Cancelled, getKey } from "./api.js";

/** A request is long (run as a job) from this many simulated ticker-runs, or this many tickers on any route. */
export const LONG_TICKER_RUNS = 100_000;
export const LONG_TICKERS = 1000;
const POLL_MS = 400;

/** The job named by the URL the page was opened with (a reload of a running or finished job's page). */
let resumable = new URLSearchParams(location.search).get("job");

/** Whether a call is long enough to run as a job: many tickers, or a sims summary of many runs. */
export function isLong(path, body) {
  if (!body || !Array.isArray(body.tickers)) return false;
  if (body.tickers.length >= LONG_TICKERS) return true;
  return path.endsWith("/sims/summary") && (body.run_count ?? 0) * body.tickers.length >= LONG_TICKER_RUNS;
}

/** The page's URL with `job=<id>` (or without it: null), keeping the request's own query. */
function setJobInUrl(id) {
  const q = new URLSearchParams(location.search);
  if (id) q.set("job", id);
  else q.delete("job");
  const s = q.toString();
  history.replaceState(null, "", s ? `?${s}` : location.pathname);
}

/** A fetch with the stored key; JSON answer or an ApiError from the problem document. */
async function call(method, path, signal) {
  const res = await fetch(path, { method, headers: { "x-api-key": getKey(), accept: "application/json" }, signal });
  const data = await res.json().catch(() => null);
  if (!res.ok) throw new ApiError(data?.title ?? `HTTP ${res.status}`, data?.detail ?? res.statusText, res.status, data?.code);
  return data;
}

/** The job to poll for `route`: the one in the URL when it is this route's and still known, else a new one. */
async function jobFor(path, body, signal) {
  const route = path.replace(/^\/v1\/optimiser\//, "");
  if (resumable) {
    const id = resumable;
    resumable = null;
    const known = await call("GET", `/v1/jobs/${encodeURIComponent(id)}`, signal).catch(() => null);
    if (known && known.route === route && known.state !== "cancelled" && known.state !== "failed") return known;
  }
  const res = await fetch(path, {
    method: "POST",
    headers: { "x-api-key": getKey(), "content-type": "application/json", accept: "application/json", prefer: "respond-async" },
    body: JSON.stringify(body),
    signal,
  });
  const data = await res.json().catch(() => null);
  if (res.status !== 202) {
    throw new ApiError(data?.title ?? `HTTP ${res.status}`, data?.detail ?? res.statusText, res.status, data?.code);
  }
  return data;
}

/**
 * Run one call as a job: `onProgress(status)` after each poll (its `parts`: done of total). Resolves like `api`
 * ({data, headers} of the result); an aborted `signal` cancels the job (DELETE) and throws Cancelled.
 */
export async function jobApi(path, body, signal, onProgress) {
  let job;
  try {
    job = await jobFor(path, body, signal);
    setJobInUrl(job.id);
    for (;;) {
      onProgress?.(job);
      if (job.state === "completed") break;
      if (job.state === "failed") {
        const p = job.problem ?? {};
        throw new ApiError(p.title ?? "Job failed", p.detail ?? "The job failed.", p.status, p.code);
      }
      if (job.state === "cancelled") throw new Cancelled();
      await new Promise((resolve, reject) => {
        const t = setTimeout(resolve, POLL_MS);
        signal?.addEventListener("abort", () => {
          clearTimeout(t);
          reject(new Cancelled());
        }, { once: true });
      });
      job = await call("GET", `/v1/jobs/${encodeURIComponent(job.id)}`, signal);
    }
    return await api(`/v1/jobs/${encodeURIComponent(job.id)}/result`, undefined, undefined, signal);
  } catch (e) {
    // Cancel (the run's signal): the job is deleted on the server; a page going away (reload) leaves it running
    if (signal?.aborted || e?.cancelled) {
      if (job) {
        await call("DELETE", `/v1/jobs/${encodeURIComponent(job.id)}`).catch(() => null);
        setJobInUrl(null);
      }
      throw new Cancelled();
    }
    throw e;
  }
}

/**
 * A line for the run's status: the job's state, parts done and the time left the server estimates (docs/spec.md
 * "Jobs": from the parts done, or "at least" the cost model's lower bound).
 */
export function jobStep(job) {
  const parts = job.parts ? ` · ${job.parts.done} of ${job.parts.total} parts done` : "";
  const e = job.estimate;
  const left = e ? ` · ${e.basis === "cost" ? "at least " : "about "}${timeText(e.ms_left)} left` : "";
  return `job ${job.state}${parts}${left}`;
}

/** A duration for people: seconds under two minutes, else minutes (whole). */
function timeText(ms) {
  const s = Math.max(1, Math.round(ms / 1000));
  return s < 120 ? `${s} s` : `${Math.round(s / 60)} min`;
}
