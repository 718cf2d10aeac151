/**
 * The engine's kernels over one WebAssembly instance: the `Kernels` the pipeline needs (src/pipeline/kernels.ts).
 * One instance per engine (and per worker thread); calls are synchronous and not re-entrant.
 */
import type { Kernels } from "../pipeline/kernels.js";
import { Wasm, type LoadOptions } from "./wasm.js";
import { computeWeightSet, computedStrategies, hrpTree, ledoitWolfCovariance, shrinkCovariance } from "./weights.js";
import { covariance } from "./core.js";
import { correlationClusters } from "./clustered.js";
import { simulateCloses, simulateRuns, simulateSummary, simulationMeans, valuePaths } from "./sims.js";
import { rebalancePaths, simulationJitter } from "./rebalance.js";
import { dollarsJsonWriter, valuePathsJson } from "./dollars.js";
import { columnRanks, sharpeDiffBootstrap, stationaryBootstrap } from "./bootstrap.js";

export interface KernelsOptions {
  /**
   * Give a large instance's memory back after every call (`Wasm.releaseMemory`, src/engine/wasm.ts). Default true:
   * a library caller's instance does not keep a large request's memory. False: the caller releases it itself (the
   * compute worker does so once it has been idle for a while, so that the parts of one split request reuse the
   * grown memory: src/workers/worker.ts, docs/decisions.md "Splitting one large request").
   */
  releaseAfterCall?: boolean;
}

export function kernelsOver(wasm: Wasm, options: KernelsOptions = {}): Kernels {
  // after each call (results copied out), a large instance gives its memory back (src/engine/wasm.ts)
  const released = options.releaseAfterCall === false ? <T>(f: () => T): T => f() : <T>(f: () => T): T => {
    try {
      return f();
    } finally {
      wasm.releaseMemory();
    }
  };
  return {
    weightSet: (input) => released(() => computeWeightSet(wasm, input)),
    computedStrategies: (strategies, bounded) => computedStrategies(wasm, strategies, bounded),
    valuePaths: (input) => released(() => valuePaths(wasm, input)),
    simulateRuns: (input) => released(() => simulateRuns(wasm, input)),
    simulateCloses: (input) => released(() => simulateCloses(wasm, input)),
    simulateSummary: (input) => released(() => simulateSummary(wasm, input)),
    rebalancePaths: (input) => released(() => rebalancePaths(wasm, input)),
    simulationJitter: (input) => released(() => simulationJitter(wasm, input)),
    simulationMeans: (input) => released(() => simulationMeans(wasm, input)),
    stationaryBootstrap: (input) => released(() => stationaryBootstrap(wasm, input)),
    sharpeDiffBootstrap: (input) => released(() => sharpeDiffBootstrap(wasm, input)),
    columnRanks: (values, k, cols, ranks) => released(() => columnRanks(wasm, values, k, cols, ranks)),
    // no release here: the writer is used (synchronously) after this returns; its blocks are small
    dollarsJson: (keys, width, n) => dollarsJsonWriter(wasm, keys, width, n),
    // the body is copied out of WebAssembly memory before the release
    valuePathsJson: (input, layout, out) => released(() => valuePathsJson(wasm, input, layout, out)),
    covarianceOf: (X, n, N, mode) => released(() => mode === "shrink" ? shrinkCovariance(wasm, X, n, N).covariance
      : mode === "ledoit-wolf" ? ledoitWolfCovariance(wasm, X, n, N).covariance : covariance(wasm, X, n, N).covariance),
    clusterTree: (cov, N, kind, variant) => released(() => kind === "hrp" ? hrpTree(wasm, cov, N, variant)
      : { Z: correlationClusters(wasm, cov, N, 0).Z }),
  };
}

/** Instantiate the WebAssembly module once and wrap it. */
export async function loadKernels(): Promise<Kernels> {
  return kernelsOver(await Wasm.load());
}

/** The kernels and the instance behind them (for a caller that decides itself when memory is given back). */
export async function loadEngine(options: LoadOptions & KernelsOptions = {}): Promise<{ wasm: Wasm; kernels: Kernels }> {
  const wasm = await Wasm.load(options);
  return { wasm, kernels: kernelsOver(wasm, options) };
}
