/**
 * The ABI of build/engine.wasm, declared once: every export with its TypeScript signature (`EngineExports`), and the
 * same names in one runtime table (`ENGINE_EXPORTS`: a function's arity, or the kind of a memory or global) that the
 * compiler checks against the interface and test/engine/abi.test.ts checks against `WebAssembly.Module.exports`.
 * Kernel semantics and memory layouts are documented in assembly/abi/*.ts. Only src/engine/ reads these exports.
 *
 * Types: a pointer is a byte offset into `memory` (`Ptr`); i32/f64 cross as `number`; u64 crosses as `bigint`
 * (a u64 result arrives signed: apply `BigInt.asUintN(64, ·)`); a kernel's i32 result is a `Status`.
 */
import type { Status } from "../../assembly/shared/status.js";

/** A byte offset into the module's linear memory. */
export type Ptr = number;

export interface EngineExports {
  readonly memory: WebAssembly.Memory;
  /** Runtime type information of the stub runtime (exportRuntime); unused by the host. */
  readonly __rtti_base: WebAssembly.Global;

  // arena (assembly/memory.ts)
  alloc(bytes: number): Ptr;
  reset(): void;
  /** The arena's peak byte offset since the last reset (assembly/memory.ts). */
  arenaHighWater(): number;

  // diagnostics of the last call (assembly/result.ts, assembly/abi/weights.ts)
  lastBadIndex(): number;
  lastIterations(): number;
  lastResidual(): number;
  lastFailedSeries(): number;

  // shared numerics (assembly/abi/core.ts)
  kLogReturns(P: Ptr, T: number, N: number, out: Ptr): Status;
  kBucketSums(X: Ptr, n: number, N: number, bucket: Ptr, nb: number, out: Ptr): Status;
  kCovariance(X: Ptr, n: number, N: number, out: Ptr, means: Ptr): Status;
  kCorrelation(S: Ptr, N: number, C: Ptr, sd: Ptr): Status;
  kCholesky(A: Ptr, N: number, L: Ptr): Status;

  // weights (assembly/abi/weights.ts)
  kEwp(N: number, out: Ptr): Status;
  kIvp(S: Ptr, N: number, out: Ptr): Status;
  kGmvp(S: Ptr, N: number, out: Ptr): Status;
  kMdcp(S: Ptr, N: number, out: Ptr): Status;
  kMdp(S: Ptr, N: number, out: Ptr): Status;
  kRpp(S: Ptr, N: number, out: Ptr): Status;
  kHrp(S: Ptr, N: number, variant: number, out: Ptr): Status;
  kHrpOrder(S: Ptr, N: number, variant: number, order: Ptr, Z: Ptr): Status;
  kShrinkCovariance(X: Ptr, n: number, N: number, out: Ptr, lambda: Ptr): Status;
  kLedoitWolfCovariance(X: Ptr, n: number, N: number, out: Ptr, delta: Ptr): Status;
  kRppShrunk(X: Ptr, n: number, N: number, out: Ptr): Status;
  /** The slots kWeightSet computes for a slot mask: the selected ones and the rows they read. */
  kSlotsComputed(slotMask: number, bounded: number): number;
  kWeightSet(P: Ptr, T: number, N: number, weekBucket: Ptr, nWeeks: number, monthBucket: Ptr, nMonths: number,
    covMode: number, hrpMode: number, out: Ptr, fallback: Ptr, freqMask: number, minWeight: number, maxWeight: number,
    warm: Ptr, slotMask: number, gram: Ptr, gramFrom: number, gramTo: number): Status;
  kQP(Q: Ptr, N: number, lo: number, hi: number, warm: Ptr, out: Ptr): Status;
  kBoundedWeights(S: Ptr, N: number, slot: number, lo: number, hi: number, warm: Ptr, out: Ptr): Status;

  // random numbers, valuation, simulation (assembly/abi/sims.ts)
  kRngSeed(state: Ptr, seed: bigint): void;
  kRngJump(state: Ptr): void;
  kRngNext(state: Ptr): bigint;
  kRngUniform(state: Ptr): number;
  kRngNormals(state: Ptr, out: Ptr, n: number): void;
  kRngBelow(state: Ptr, n: number): number;
  kValuePaths(P: Ptr, nTest: number, N: number, W: Ptr, S: number, capital: number, out: Ptr): Status;
  kDollarsJson(values: Ptr, n: number, keys: Ptr, width: number, out: Ptr, state: Ptr): Status;
  kSimulateRuns(mu: Ptr, scale: Ptr, model: number, p0: Ptr, nTest: number, N: number, W: Ptr, S: number,
    seed: bigint, runFrom: number, runCount: number, capital: number, out: Ptr, nRows: number,
    blockLength: number): Status;
  kSimulateCloses(mu: Ptr, scale: Ptr, model: number, p0: Ptr, nTest: number, N: number, seed: bigint,
    runFrom: number, runCount: number, out: Ptr, nRows: number, blockLength: number): Status;

  // walk-forward valuation with rebalancing and costs (assembly/abi/rebalance.ts)
  kRebalancePaths(P: Ptr, nTest: number, N: number, W: Ptr, R: number, S: number, rows: Ptr, costRate: number,
    capital: number, out: Ptr, turnover: Ptr, costs: Ptr): Status;

  // the stub runtime's exports (asconfig.json `exportRuntime`); unused by the host
  __new(size: number, id: number): Ptr;
  __pin(ptr: Ptr): Ptr;
  __unpin(ptr: Ptr): void;
  __collect(): void;

  // the clustered strategies herc and nco, and their clustering (assembly/abi/clustered.ts)
  kHerc(S: Ptr, N: number, k: number, out: Ptr): Status;
  kNco(S: Ptr, N: number, k: number, out: Ptr, warm: Ptr, intra: Ptr, inter: Ptr): Status;
  kCorrelationClusters(S: Ptr, N: number, k: number, labels: Ptr, Z: Ptr): Status;
  // l3msr, maximum Sharpe ratio (assembly/abi/msr.ts)
  kMsr(S: Ptr, X: Ptr, n: number, N: number, lo: number, hi: number, out: Ptr, warm: Ptr): Status;
  lastMsrFellBack(): number;
  // l3mincvar, minimum CVaR at 95 % (assembly/abi/mincvar.ts)
  kMinCvar(X: Ptr, n: number, N: number, lo: number, hi: number, out: Ptr, warm: Ptr): Status;
  minCvarLastCvar(): number;
  minCvarLastDual(): number;
  minCvarLastVar(): number;
  minCvarLastScale(): number;
}

/** What the runtime table records for one export: a function's arity, or "memory" / "global". */
export type ExportShape<T> = T extends (...args: infer A) => unknown ? A["length"]
  : T extends WebAssembly.Memory ? "memory" : "global";

/**
 * Every export of build/engine.wasm by name. `satisfies` makes the compiler reject a name missing from, or extra to,
 * `EngineExports`, and an arity that differs from the declared signature.
 */
export const ENGINE_EXPORTS = {
  memory: "memory",
  __rtti_base: "global",
  alloc: 1,
  reset: 0,
  arenaHighWater: 0,
  lastBadIndex: 0,
  lastIterations: 0,
  lastResidual: 0,
  lastFailedSeries: 0,
  kLogReturns: 4,
  kBucketSums: 6,
  kCovariance: 5,
  kCorrelation: 4,
  kCholesky: 3,
  kEwp: 2,
  kIvp: 3,
  kGmvp: 3,
  kMdcp: 3,
  kMdp: 3,
  kRpp: 3,
  kHrp: 4,
  kHrpOrder: 5,
  kShrinkCovariance: 5,
  kLedoitWolfCovariance: 5,
  kRppShrunk: 4,
  kWeightSet: 19,
  kSlotsComputed: 2,
  kQP: 6,
  kBoundedWeights: 7,
  kRngSeed: 2,
  kRngJump: 1,
  kRngNext: 1,
  kRngUniform: 1,
  kRngNormals: 3,
  kRngBelow: 2,
  kValuePaths: 7,
  kDollarsJson: 6,
  kSimulateRuns: 15,
  kSimulateCloses: 12,
  kRebalancePaths: 12,
  __new: 2,
  __pin: 1,
  __unpin: 1,
  __collect: 0,
  // the clustered strategies herc and nco (assembly/abi/clustered.ts)
  kHerc: 4,
  kNco: 7,
  kCorrelationClusters: 5,
  // l3msr, maximum Sharpe ratio (assembly/abi/msr.ts)
  kMsr: 8,
  lastMsrFellBack: 0,
  // l3mincvar (assembly/abi/mincvar.ts)
  kMinCvar: 7,
  minCvarLastCvar: 0,
  minCvarLastDual: 0,
  minCvarLastVar: 0,
  minCvarLastScale: 0,
} as const satisfies { [K in keyof EngineExports]: ExportShape<EngineExports[K]> };
