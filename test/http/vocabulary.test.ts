/**
 * The one vocabulary over HTTP: /v1/info gives the option lists and defaults the web page builds its selects from;
 * the page itself restates none of them; a derived seed read from x-simulation-seed replays when sent back as a JSON
 * number; a seed number above 2^53-1 is refused, before any computation, with one message saying to send a string.
 */
import { MAX_COSTS_BPS, MAX_REBALANCE_DAYS } from "../../src/pipeline/rebalance.js";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { projectRoot } from "../../src/config.js";
import { BLOCK_LENGTH_RANGE, COVARIANCE_MODES, DEFAULTS, HRP_MODES, SIM_DRIFTS, SIM_MODELS } from "../../src/domain/vocabulary.js";
import { useTestApp } from "../helpers/app.js";
import { SHARPE_TESTS } from "../../src/report/significance.js";
import { CAPTURE_BASES } from "../../src/report/summary.js";

describe("the vocabulary over HTTP", () => {
  const t = useTestApp();
  const tickers = () => t().store.list().slice(0, 3).map((x) => x.ticker);

  it("GET /v1/info lists every option's values and the defaults, from the one vocabulary", async () => {
    const res = await t().get("/v1/info");
    expect(res.statusCode).toBe(200);
    const body = res.json() as { options: unknown; simulation: { default_model: string; default_run_count: number } };
    expect(body.options).toEqual({
      covariance: [...COVARIANCE_MODES],
      hrp: [...HRP_MODES],
      model: [...SIM_MODELS],
      drift: [...SIM_DRIFTS],
      block_length: { ...BLOCK_LENGTH_RANGE, model: "bootstrap" },
      rebalance: { calendar: ["none", "monthly", "quarterly", "annual"], every_days: { min: 1, max: MAX_REBALANCE_DAYS } },
      window: ["rolling", "expanding"],
      sharpe_test: [...SHARPE_TESTS],
      capture_basis: ["daily", "monthly"],
      costs_bps: { min: 0, max: MAX_COSTS_BPS },
      planning: {
        training_days: { min: 60, max: 2520, default: 252 }, horizon_days: { min: 1, max: 25_200 },
        initial_value: { max: 1e12, default: 100_000 }, cash_flows: { every: ["month", "quarter", "year"], max: 20 },
        inflation: { min: -0.5, max: 1 }, assumed_return: { min: -0.99, max: 10 },
      },
      defaults: {
        covariance: "sample", hrp: "paper", model: "independent", run_count: 5, drift: "historical", block_length: 5,
        rebalance: "none", window: "rolling", costs_bps: 0,
      },
    });
    expect(body.options).toMatchObject({ defaults: DEFAULTS });
    expect(body.simulation.default_model).toBe(DEFAULTS.model);
    expect(body.simulation.default_run_count).toBe(DEFAULTS.run_count);
  });

  it("the web page writes no option value into its HTML: the selects are filled from /v1/info", () => {
    const html = readFileSync(join(projectRoot(), "web", "index.html"), "utf8");
    // the page's code: its entry and every module it is split into (web/js/)
    const js = [join(projectRoot(), "web", "app.js"), ...readdirSync(join(projectRoot(), "web", "js"))
      .filter((f) => f.endsWith(".js")).map((f) => join(projectRoot(), "web", "js", f))]
      .map((f) => readFileSync(f, "utf8")).join("\n");
    for (const id of ["covariance", "hrp", "model"]) {
      const select = new RegExp(`<select id="${id}"[^>]*data-option="${id}"[^>]*></select>`);
      expect(html, id).toMatch(select);
    }
    // the capture basis (/report's capture_basis): an empty select filled from options.capture_basis
    expect(html).toMatch(/<select id="capture-basis"[^>]*data-option="capture_basis"[^>]*><\/select>/);
    expect(js).toMatch(/options\?\.capture_basis/);
    // "monthly" is also a rebalancing rule of the page's own select (and compute.js REBALANCE_RULES); "daily" is a
    // basis only, so it appears nowhere as a value
    expect(html).not.toContain(`value="${CAPTURE_BASES[0]}"`);
    expect(js).not.toContain(`"${CAPTURE_BASES[0]}"`);
    for (const v of [...COVARIANCE_MODES, ...HRP_MODES, ...SIM_MODELS]) {
      expect(html, v).not.toContain(`value="${v}"`);
      expect(js, v).not.toContain(`"${v}"`);
    }
    expect(html).not.toMatch(/id="run-count"[^>]*value=/);
    expect(js).toMatch(/api\("\/v1\/info"/);
    expect(js).toMatch(/options\.defaults/);
  });

  it("replays a derived seed sent back as a JSON number: it is at most 2^53-1", async () => {
    const body = { tickers: tickers(), run_count: 2 };
    const a = await t().post("/v1/optimiser/sims", body);
    expect(a.statusCode).toBe(200);
    const header = a.headers["x-simulation-seed"] as string;
    expect(BigInt(header)).toBeLessThanOrEqual(2n ** 53n - 1n);
    const asNumber = JSON.parse(header) as number;
    expect(Number.isSafeInteger(asNumber)).toBe(true);
    const replay = await t().post("/v1/optimiser/sims", `{"tickers": ${JSON.stringify(body.tickers)}, "run_count": 2, "seed": ${header}}`);
    expect(replay.statusCode).toBe(200);
    expect(replay.headers["x-simulation-seed"]).toBe(header);
    expect(replay.body).toBe(a.body);
  });

  it("refuses a seed number above 2^53-1 with one problem at /seed saying to send it as a decimal string", async () => {
    // 18446744073709551615 as a JSON number: JSON.parse rounds it to 2^64, so the digits are already lost.
    const res = await t().post("/v1/optimiser/sims", `{"tickers": ${JSON.stringify(tickers())}, "seed": 18446744073709551615}`);
    expect(res.statusCode).toBe(400);
    const p = res.json() as { code: string; errors: { pointer: string; message: string }[] };
    expect(p.code).toBe("INVALID_REQUEST");
    expect(p.errors).toHaveLength(1);
    expect(p.errors[0].pointer).toBe("/seed");
    expect(p.errors[0].message).toContain("send a larger seed as a decimal string");
    const asString = await t().post("/v1/optimiser/sims", { tickers: tickers(), run_count: 1, seed: "18446744073709551615" });
    expect(asString.statusCode).toBe(200);
  });

  it("validates every option before any computation: bad options with unknown tickers give INVALID_REQUEST, not 422", async () => {
    const res = await t().post("/v1/optimiser/sims", { tickers: ["NO-SUCH-TICKER"], seed: 1.5, model: "gbm", covariance: "x" });
    expect(res.statusCode).toBe(400);
    const p = res.json() as { code: string; errors: { pointer: string }[] };
    expect(p.code).toBe("INVALID_REQUEST");
    expect(p.errors.map((e) => e.pointer).sort()).toEqual(["/covariance", "/model", "/seed"]);
  });
});
