/** One log line per request (method, path without query, status, ms), readable on a terminal; static files silent. */
import { describe, expect, it } from "vitest";
import { hashKey } from "../../src/config.js";
import { buildApp, loggerOptions } from "../../src/http/app.js";
import { defaultLogStream, pathOf, prettyLine, prettyStream } from "../../src/http/logging.js";
import { openStore } from "../../src/store/index.js";
import { ComputePool } from "../../src/workers/pool.js";
import { assertWorkerBuilt, TEST_KEY, TEST_LIMITS } from "../helpers/app.js";

describe("the log formatter", () => {
  const time = new Date(2026, 0, 2, 3, 4, 5, 67).getTime();

  it("writes a request as one line: time, method, path, status, ms and request id", () => {
    const json = JSON.stringify({ level: 30, time, pid: 1, hostname: "h", reqId: "abc-1", method: "POST", path: "/v1/optimiser/paths", status: 200, ms: 35.2, msg: "request" });
    expect(prettyLine(json)).toBe("03:04:05.067  POST /v1/optimiser/paths  200  35.2 ms  req abc-1");
  });

  it("names levels other than info, lists other fields as key=value, and puts an error's stack on the next lines", () => {
    const json = JSON.stringify({ level: 50, time, msg: "compute pool failed to load", workers: 2,
      err: { type: "Error", message: "boom", stack: "Error: boom\n    at f (a.js:1:2)\n    at g (b.js:3:4)" } });
    expect(prettyLine(json)).toBe("03:04:05.067  ERROR  compute pool failed to load  workers=2  Error: boom\n    at f (a.js:1:2)\n    at g (b.js:3:4)");
    expect(prettyLine(JSON.stringify({ level: 40, time, msg: "slow", reqId: "r" }))).toBe("03:04:05.067  WARN  slow  req r");
  });

  it("colours the status on a terminal and passes a line that is not JSON through", () => {
    const json = JSON.stringify({ level: 30, time, method: "GET", path: "/x", status: 503, ms: 1, msg: "request" });
    expect(prettyLine(json, true)).toContain("\u001b[31m503\u001b[0m");
    expect(prettyLine("plain text\n")).toBe("plain text");
  });

  it("splits what pino writes into lines, and is the default destination only on a terminal", () => {
    const out: string[] = [];
    const s = prettyStream({ write: (x: string) => out.push(x) });
    s.write(JSON.stringify({ level: 30, time, msg: "a" }) + "\n" + JSON.stringify({ level: 30, time, msg: "b" }) + "\n");
    expect(out).toEqual(["03:04:05.067  a\n", "03:04:05.067  b\n"]);
    expect(defaultLogStream({ isTTY: false, write: () => true })).toBeUndefined();
    expect(defaultLogStream({ isTTY: true, write: () => true })).toBeDefined();
  });

  it("drops query strings and fragments from paths", () => {
    expect(pathOf("/v1/info?api_key=secret#x")).toBe("/v1/info");
    expect(pathOf("/a/b#frag")).toBe("/a/b");
    expect(pathOf("/")).toBe("/");
  });
});

describe("the service's request log", () => {
  it("logs one line per API request without query or key, and nothing for the page's static files", async () => {
    assertWorkerBuilt();
    const lines: string[] = [];
    const pool = new ComputePool({ workers: 1, queueSize: 1, timeoutMs: 60_000 });
    const app = await buildApp({
      config: { limits: TEST_LIMITS, keyHashes: [hashKey(TEST_KEY)] },
      store: await openStore(),
      pool,
      logger: loggerOptions("info", { write: (l) => { lines.push(l); } }),
    });
    try {
      await app.ready();
      const requests = () => lines.map((l) => JSON.parse(l) as Record<string, unknown>).filter((o) => o.msg === "request");
      for (const url of ["/", "/app.js", "/vendor/uPlot.esm.js", "/lib/report/summary.js", "/docs/static/index.html"]) {
        const res = await app.inject({ method: "GET", url });
        expect(res.statusCode, url).toBeLessThan(400);
      }
      expect(requests(), "static files log nothing").toEqual([]);
      const info = await app.inject({ method: "GET", url: "/v1/info?token=query-secret", headers: { "x-api-key": TEST_KEY } });
      expect(info.statusCode).toBe(200);
      const missing = await app.inject({ method: "GET", url: "/no/such/page?q=1" });
      expect(missing.statusCode).toBe(404);
      const logged = requests();
      expect(logged).toHaveLength(2);
      expect(logged[0]).toMatchObject({ method: "GET", path: "/v1/info", status: 200, reqId: info.headers["x-request-id"] });
      expect(typeof logged[0].ms).toBe("number");
      expect(logged[1]).toMatchObject({ method: "GET", path: "/no/such/page", status: 404 });
      const all = lines.join("");
      expect(all).not.toContain("query-secret");
      expect(all).not.toContain(TEST_KEY);
      expect(all).not.toContain("incoming request");
    } finally {
      await app.close();
      await pool.destroy();
    }
  });
});
