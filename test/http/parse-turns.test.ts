/**
 * Large bodies parsed in turns between clients (src/http/plugins/errors.ts `ParseTurns`, issue 30 item 3): small
 * bodies at once, large ones one per event-loop turn, the clients served round robin; through the service, a flood
 * of one key's 64 KiB invalid bodies and another key's large valid body are all answered correctly.
 */
import { describe, expect, it } from "vitest";
import { ParseTurns } from "../../src/http/plugins/errors.js";
import { closeTestApp, createTestApp, TEST_KEY } from "../helpers/app.js";

const turn = () => new Promise<void>((r) => setImmediate(r));

describe("ParseTurns", () => {
  it("parses a small body at once, and large ones one per turn, round robin between clients", async () => {
    const t = new ParseTurns(100);
    const ran: string[] = [];
    for (const name of ["a1", "a2", "a3"]) t.run("A", 100, () => ran.push(name));
    t.run("B", 500, () => ran.push("b1"));
    t.run("C", 99, () => ran.push("small"));
    expect(ran).toEqual(["small"]);
    expect(t.pending).toBe(4);
    await turn();
    expect(ran).toEqual(["small", "a1"]);
    await turn();
    expect(ran).toEqual(["small", "a1", "b1"]);
    t.run("B", 100, () => ran.push("b2"));
    await turn();
    await turn();
    await turn();
    // A's queue came back after B's first; B's second joined behind A
    expect(ran).toEqual(["small", "a1", "b1", "a2", "b2", "a3"]);
    expect(t.pending).toBe(0);
    await turn();
    expect(ran).toHaveLength(6);
  });

  it("lets other work of the event loop run between two queued bodies", async () => {
    const t = new ParseTurns(1);
    const ran: string[] = [];
    // each parse holds the loop 3 ms, so a timer due in 1 ms runs between the turns, not after all of them
    const busy = (name: string) => () => {
      const t0 = Date.now();
      while (Date.now() - t0 < 3);
      ran.push(name);
    };
    for (let i = 0; i < 3; i++) t.run("A", 10, busy(`a${i}`));
    setTimeout(() => ran.push("timer"), 0);
    for (let i = 0; i < 200 && ran.length < 4; i++) await new Promise((r) => setTimeout(r, 5));
    expect(ran).toHaveLength(4);
    expect(ran.indexOf("timer")).toBeLessThan(3);
    expect(ran.indexOf("timer")).toBeGreaterThan(0);
  });
});

describe("large bodies in turns, through the service", () => {
  it("answers a flood of 64 KiB invalid bodies with their 400s and a large valid body with its 200", async () => {
    const t = await createTestApp();
    try {
      const invalid = `{"tickers":[${Array(9000).fill('"AAPL"').join(",")}]}`;
      const tickers = t.store.list().slice(0, 5).map((x) => x.ticker);
      // a valid body padded past the threshold with insignificant whitespace
      const valid = JSON.stringify({ tickers }) + " ".repeat(20_000);
      const headers = { "x-api-key": TEST_KEY, "content-type": "application/json" };
      const answers = await Promise.all([
        ...Array.from({ length: 8 }, () => t.inject({ method: "POST", url: "/v1/optimiser/paths", headers, payload: invalid })),
        t.inject({ method: "POST", url: "/v1/optimiser/weights", headers, payload: valid }),
      ]);
      for (const r of answers.slice(0, 8)) {
        expect(r.statusCode).toBe(400);
        expect(r.json().code).toBe("INVALID_REQUEST");
      }
      expect(answers[8].statusCode).toBe(200);
      expect(Object.keys(answers[8].json()).length).toBeGreaterThan(0);
    } finally {
      await closeTestApp(t);
    }
  });
});
