/** The host's lists come from the enums of assembly/shared/vocabulary.ts, and every consumer reads them. */
import { describe, expect, it } from "vitest";
import { ALL_SERIES_IDS, DEFAULT_STRATEGIES, FREQUENCIES, STRATEGIES, STRATEGY_IDS } from "../../src/domain/strategies.js";
import { INITIAL_CAPITAL, TRAINING_DAYS } from "../../src/domain/strategies.js";
import {
  COVARIANCE_MODES, covarianceCode, DEFAULTS, FREQUENCY_NAMES, HRP_MODES, hrpCode, modelCode, SERIES_COUNT, SIM_DRIFTS,
  SIM_MODELS, STRATEGY_NAMES,
} from "../../src/domain/vocabulary.js";
import { DriftCode } from "../../assembly/shared/vocabulary.js";
import { checkOptions } from "../../src/pipeline/validate.js";
import { CovarianceCode } from "../../assembly/shared/vocabulary.js";
import { REBALANCE_DEFAULTS } from "../../src/pipeline/rebalance.js";

describe("the one vocabulary", () => {
  it("derives the 21 strategy ids of the PathLit order from the enums: l2d.*, l2m.*, l2w.*, strategies alphabetical", () => {
    // Written out by hand on purpose: this is the PathLit response order the derivation must reproduce.
    const pathlit = [
      "l1r.l2d.l3ewp", "l1r.l2d.l3gmvp", "l1r.l2d.l3hrp", "l1r.l2d.l3ivp", "l1r.l2d.l3mdcp", "l1r.l2d.l3mdp", "l1r.l2d.l3rpp",
      "l1r.l2m.l3ewp", "l1r.l2m.l3gmvp", "l1r.l2m.l3hrp", "l1r.l2m.l3ivp", "l1r.l2m.l3mdcp", "l1r.l2m.l3mdp", "l1r.l2m.l3rpp",
      "l1r.l2w.l3ewp", "l1r.l2w.l3gmvp", "l1r.l2w.l3hrp", "l1r.l2w.l3ivp", "l1r.l2w.l3mdcp", "l1r.l2w.l3mdp", "l1r.l2w.l3rpp",
    ];
    expect(STRATEGY_IDS).toEqual(pathlit);
    // the engine's full layout holds every strategy of the registry; PathLit's are its default selection
    expect(ALL_SERIES_IDS).toHaveLength(SERIES_COUNT);
    expect(ALL_SERIES_IDS.filter((id) => (STRATEGY_IDS as readonly string[]).includes(id))).toEqual(pathlit);
    expect([...STRATEGY_IDS].sort()).toEqual(STRATEGY_IDS);
    expect(FREQUENCIES).toBe(FREQUENCY_NAMES);
    expect(STRATEGIES).toBe(STRATEGY_NAMES);
  });

  it("lists each option's values in kernel-code order, the default first", () => {
    COVARIANCE_MODES.forEach((m, i) => expect(covarianceCode(m)).toBe(i));
    HRP_MODES.forEach((m, i) => expect(hrpCode(m)).toBe(i));
    SIM_MODELS.forEach((m, i) => expect(modelCode(m)).toBe(i));
    SIM_DRIFTS.forEach((d, i) => expect(DriftCode[d]).toBe(i));
    expect(DEFAULTS).toEqual({ covariance: COVARIANCE_MODES[0], hrp: HRP_MODES[0], model: SIM_MODELS[0], run_count: 5,
      drift: SIM_DRIFTS[0], block_length: 5 });
  });

  it("maps the covariance enum keys to host names: ledoitWolf is \"ledoit-wolf\", every other key is its own name", () => {
    expect(COVARIANCE_MODES).toEqual(["sample", "shrink", "ledoit-wolf"]);
    expect(covarianceCode("ledoit-wolf")).toBe(CovarianceCode.ledoitWolf);
    expect(covarianceCode("sample")).toBe(CovarianceCode.sample);
    expect(covarianceCode("shrink")).toBe(CovarianceCode.shrink);
    expect(covarianceCode("ledoitWolf" as never)).toBe(-1);
    expect(new Set(COVARIANCE_MODES).size).toBe(COVARIANCE_MODES.length);
  });

  it("gives library validation the same lists and defaults", () => {
    const o = checkOptions(undefined, "sims");
    expect(o).toEqual({ covariance: DEFAULTS.covariance, hrp: DEFAULTS.hrp, model: DEFAULTS.model, runCount: DEFAULTS.run_count, seed: undefined,
      drift: DEFAULTS.drift, blockLength: DEFAULTS.block_length,
      rebalance: { rule: REBALANCE_DEFAULTS.rebalance, window: REBALANCE_DEFAULTS.window, costsBps: REBALANCE_DEFAULTS.costs_bps },
      strategies: DEFAULT_STRATEGIES,
      planning: { trainingDays: TRAINING_DAYS, initialValue: INITIAL_CAPITAL, cashFlows: [], inflation: 0 } });
    for (const m of COVARIANCE_MODES) expect(checkOptions({ covariance: m }, "weights").covariance).toBe(m);
    for (const m of HRP_MODES) expect(checkOptions({ hrp: m }, "weights").hrp).toBe(m);
    for (const m of SIM_MODELS) expect(checkOptions({ model: m }, "sims").model).toBe(m);
    for (const d of SIM_DRIFTS) expect(checkOptions({ drift: d }, "sims").drift).toBe(d);
  });
});
