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
  kPrunedLinkage(S: Ptr, N: number, X: Ptr, n: number, Z: Ptr): Status;
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
  kRngNormalsPair(stateA: Ptr, stateB: Ptr, outA: Ptr, outB: Ptr, n: number): void;
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
  // sims summarised in place, and Math.log's logarithm (assembly/abi/sims.ts)
  kSimulateSummary(mu: Ptr, scale: Ptr, model: number, p0: Ptr, nTest: number, N: number, W: Ptr, S: number,
    seed: bigint, runFrom: number, runCount: number, capital: number, nRows: number, blockLength: number, bi: number,
    iSpec: Ptr, fSpec: Ptr, rec: Ptr, band: Ptr, paid: Ptr, rf: number): Status;
  kFdlibmLog(x: Ptr, n: number, out: Ptr): Status;
  kNativeExp(x: Ptr, n: number, pairs: Ptr, scalar: Ptr): Status;
  kNativeLog(x: Ptr, n: number, pairs: Ptr, scalar: Ptr): Status;
  // resampling statistics of value series (assembly/abi/stats.ts)
  kStationaryBootstrap(R: Ptr, m: number, S: number, L: Ptr, seed: bigint, first: number, B: number, out: Ptr): Status;
  kColumnRanks(x: Ptr, k: number, cols: number, W: Ptr, nr: number, out: Ptr, ok: Ptr): Status;
  kSharpeDiffBootstrap(R: Ptr, m: number, S: number, base: number, blocks: Ptr, seed: bigint, M: number, dHat: Ptr,
    from: number, to: number, out: Ptr): Status;
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
  kPrunedLinkage: 5,
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
  kRngNormalsPair: 5,
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
  // sims summarised in place (assembly/abi/sims.ts)
  kSimulateSummary: 21,
  kFdlibmLog: 3,
  kNativeExp: 4,
  kNativeLog: 4,
  // resampling statistics (assembly/abi/stats.ts)
  kStationaryBootstrap: 8,
  kSharpeDiffBootstrap: 11,
  kColumnRanks: 7,
} as const satisfies { [K in keyof EngineExports]: ExportShape<EngineExports[K]> };

/**
 * How each kernel is called: its parameters in order as `"name:kind"`, what a failed status is about, and the
 * diagnostics read after the call. The one generic protocol of src/engine/protocol.ts (`invoke`) is driven by this
 * table: it begins a computation, allocates every block (outputs first, then inputs, each in parameter order),
 * copies each input in once, calls the export, checks the inputs (`verifyInputs`), copies each output out once and
 * releases the arena. A wrapper names the kernel and passes its arguments by parameter name; TypeScript derives the
 * argument and result types from the descriptor, and the compiler checks every descriptor against `EngineExports`
 * (`KernelCallsAgree` below: the same number of parameters, bigint exactly where the export takes a u64).
 *
 * Kinds (the argument a wrapper passes → what the export receives; what comes back in `value`):
 * - `f64In`, `i32In`: an array copied into a new block (the pointer); checked unchanged after the call under
 *   `verifyInputs`. `f64In?`: the same, or absent → the null pointer 0 (an optional input such as a warm start).
 * - `f64Out`, `i32Out`: a length n; a block of max(1, n) values is reserved and its first n are copied out.
 * - `f64InOrOut`: an array (copied in, as `f64In`), a length n > 0 (reserved and copied out, as `f64Out`),
 *   `{ into }` (as a length into.length, copied out into that array: e.g. a view of shared memory, no second
 *   copy), or absent / 0 → the null pointer 0.
 * - `bytesInOut`: a Uint8Array copied in, and back into the same array after the call (a state block).
 * - `i32`, `f64`: a number passed as is; `u64`: a bigint.
 *
 * `what` names the computation in a failed status's error (a wrapper may name it better, e.g. with the strategy
 * id); `columns` is the parameter whose value turns the flat index the kernel names (`lastBadIndex()`) into a column,
 * i.e. a ticker; `reads` are zero-argument exports read right after the call (e.g. `lastIterations`); `result`
 * renames the field that carries the export's return value (default `status`; for the RNG, whose exports return a
 * value). The arena and diagnostic exports, the stub runtime's and kDollarsJson (called repeatedly inside one open
 * computation by src/engine/dollars.ts) have no descriptor.
 */
export const KERNEL_CALLS = {
  // shared numerics (assembly/abi/core.ts)
  kLogReturns: { params: ["P:f64In", "T:i32", "N:i32", "out:f64Out"], what: "log-returns", columns: "N" },
  kBucketSums: {
    params: ["X:f64In", "n:i32", "N:i32", "bucket:i32In", "nb:i32", "out:f64Out"], what: "bucket sums", columns: "N",
  },
  kCovariance: {
    params: ["X:f64In", "n:i32", "N:i32", "covariance:f64Out", "means:f64Out"], what: "covariance", columns: "N",
  },
  kCorrelation: { params: ["S:f64In", "N:i32", "correlation:f64Out", "sd:f64Out"], what: "correlation", columns: "N" },
  kCholesky: { params: ["A:f64In", "N:i32", "L:f64Out"], what: "cholesky", columns: "N" },

  // weights (assembly/abi/weights.ts)
  kEwp: { params: ["N:i32", "out:f64Out"], what: "ewp" },
  kIvp: { params: ["S:f64In", "N:i32", "out:f64Out"], what: "ivp", columns: "N" },
  kGmvp: { params: ["S:f64In", "N:i32", "out:f64Out"], what: "gmvp", columns: "N" },
  kMdcp: { params: ["S:f64In", "N:i32", "out:f64Out"], what: "mdcp", columns: "N" },
  kMdp: { params: ["S:f64In", "N:i32", "out:f64Out"], what: "mdp", columns: "N" },
  kRpp: { params: ["S:f64In", "N:i32", "out:f64Out"], what: "rpp", columns: "N" },
  kHrp: { params: ["S:f64In", "N:i32", "variant:i32", "out:f64Out"], what: "hrp", columns: "N" },
  kHrpOrder: { params: ["S:f64In", "N:i32", "variant:i32", "order:i32Out", "Z:f64Out"], what: "hrp", columns: "N" },
  kPrunedLinkage: {
    params: ["S:f64In", "N:i32", "X:f64In", "n:i32", "Z:f64Out"], what: "hrp", columns: "N",
    reads: { pairs: "lastIterations" },
  },
  kShrinkCovariance: {
    params: ["X:f64In", "n:i32", "N:i32", "covariance:f64Out", "lambda:f64Out"], what: "covariance shrinkage",
    columns: "N",
  },
  kLedoitWolfCovariance: {
    params: ["X:f64In", "n:i32", "N:i32", "covariance:f64Out", "delta:f64Out"], what: "Ledoit–Wolf covariance",
    columns: "N",
  },
  kRppShrunk: { params: ["X:f64In", "n:i32", "N:i32", "out:f64Out"], what: "rpp", columns: "N" },
  kWeightSet: {
    params: ["P:f64In", "T:i32", "N:i32", "weekBucket:i32In", "nWeeks:i32", "monthBucket:i32In", "nMonths:i32",
      "covMode:i32", "hrpMode:i32", "weights:f64Out", "fallback:i32Out", "freqMask:i32", "minWeight:f64",
      "maxWeight:f64", "warm:f64In?", "slotMask:i32", "gram:f64InOrOut", "gramFrom:i32", "gramTo:i32"],
    what: "weights", columns: "N", reads: { failedSeries: "lastFailedSeries" },
  },
  kQP: {
    params: ["Q:f64In", "N:i32", "lo:f64", "hi:f64", "warm:f64In?", "out:f64Out"], what: "qp", columns: "N",
    reads: { iterations: "lastIterations", residual: "lastResidual" },
  },
  kBoundedWeights: {
    params: ["S:f64In", "N:i32", "slot:i32", "lo:f64", "hi:f64", "warm:f64In?", "out:f64Out"],
    what: "bounded weights", columns: "N", reads: { iterations: "lastIterations", residual: "lastResidual" },
  },

  // random numbers, valuation, simulation (assembly/abi/sims.ts)
  kRngSeed: { params: ["state:bytesInOut", "seed:u64"], what: "rng", result: "none" },
  kRngJump: { params: ["state:bytesInOut"], what: "rng", result: "none" },
  kRngNext: { params: ["state:bytesInOut"], what: "rng", result: "next" },
  kRngUniform: { params: ["state:bytesInOut"], what: "rng", result: "uniform" },
  kRngNormals: { params: ["state:bytesInOut", "out:f64Out", "n:i32"], what: "rng", result: "none" },
  kRngNormalsPair: {
    params: ["stateA:bytesInOut", "stateB:bytesInOut", "outA:f64Out", "outB:f64Out", "n:i32"], what: "rng", result: "none",
  },
  kRngBelow: { params: ["state:bytesInOut", "n:i32"], what: "rng", result: "below" },
  kValuePaths: {
    params: ["P:f64In", "nTest:i32", "N:i32", "W:f64In", "S:i32", "capital:f64", "out:f64Out"], what: "valuation",
    columns: "N",
  },
  kSimulateRuns: {
    params: ["mu:f64In", "scale:f64In", "model:i32", "p0:f64In", "nTest:i32", "N:i32", "W:f64In", "S:i32", "seed:u64",
      "runFrom:i32", "runCount:i32", "capital:f64", "out:f64Out", "nRows:i32", "blockLength:f64"],
    what: "simulation", columns: "N",
  },
  kSimulateCloses: {
    params: ["mu:f64In", "scale:f64In", "model:i32", "p0:f64In", "nTest:i32", "N:i32", "seed:u64", "runFrom:i32",
      "runCount:i32", "out:f64Out", "nRows:i32", "blockLength:f64"],
    what: "simulation", columns: "N",
  },

  // walk-forward valuation with rebalancing and costs (assembly/abi/rebalance.ts)
  kRebalancePaths: {
    params: ["P:f64In", "nTest:i32", "N:i32", "W:f64In", "R:i32", "S:i32", "rows:i32In", "costRate:f64",
      "capital:f64", "values:f64Out", "turnover:f64Out", "costs:f64Out"],
    what: "rebalanced valuation", columns: "N",
  },

  // the clustered strategies herc and nco, and their clustering (assembly/abi/clustered.ts)
  kHerc: { params: ["S:f64In", "N:i32", "k:i32", "out:f64Out"], what: "herc", columns: "N" },
  kNco: {
    params: ["S:f64In", "N:i32", "k:i32", "weights:f64Out", "warm:f64In?", "intra:f64Out", "inter:f64Out"],
    what: "nco", columns: "N",
  },
  kCorrelationClusters: {
    params: ["S:f64In", "N:i32", "k:i32", "labels:i32Out", "Z:f64Out"], what: "clusters", columns: "N",
    reads: { count: "lastIterations" },
  },
  // l3msr (assembly/abi/msr.ts)
  kMsr: {
    params: ["S:f64In", "X:f64In", "n:i32", "N:i32", "lo:f64", "hi:f64", "out:f64Out", "warm:f64In?"], what: "msr",
    columns: "N", reads: { fellBack: "lastMsrFellBack", iterations: "lastIterations", residual: "lastResidual" },
  },
  // l3mincvar (assembly/abi/mincvar.ts)
  kMinCvar: {
    params: ["X:f64In", "n:i32", "N:i32", "lo:f64", "hi:f64", "out:f64Out", "warm:f64In?"], what: "mincvar",
    columns: "N",
    reads: {
      cvar: "minCvarLastCvar", dual: "minCvarLastDual", var: "minCvarLastVar", scale: "minCvarLastScale",
      iterations: "lastIterations", residual: "lastResidual",
    },
  },
  // sims summarised in place (assembly/abi/sims.ts)
  kSimulateSummary: {
    params: ["mu:f64In", "scale:f64In", "model:i32", "p0:f64In", "nTest:i32", "N:i32", "W:f64In", "S:i32", "seed:u64",
      "runFrom:i32", "runCount:i32", "capital:f64", "nRows:i32", "blockLength:f64", "bi:i32", "iSpec:i32In",
      "fSpec:f64In", "rec:f64Out", "band:f64Out", "paid:f64Out", "rf:f64"],
    what: "simulation", columns: "N",
  },
  kFdlibmLog: { params: ["x:f64In", "n:i32", "out:f64Out"], what: "logarithm" },
  kNativeExp: { params: ["x:f64In", "n:i32", "pairs:f64Out", "scalar:f64Out"], what: "exponential" },
  kNativeLog: { params: ["x:f64In", "n:i32", "pairs:f64Out", "scalar:f64Out"], what: "logarithm" },
  // resampling statistics (assembly/abi/stats.ts)
  kStationaryBootstrap: {
    params: ["R:f64In", "m:i32", "S:i32", "L:f64In", "seed:u64", "first:i32", "B:i32", "out:f64Out"], what: "bootstrap",
  },
  kSharpeDiffBootstrap: {
    params: ["R:f64In", "m:i32", "S:i32", "base:i32", "blocks:i32In", "seed:u64", "M:i32", "dHat:f64In", "from:i32", "to:i32",
      "out:f64Out"],
    what: "bootstrap",
  },
  kColumnRanks: { params: ["x:f64In", "k:i32", "cols:i32", "W:i32In", "nr:i32", "out:f64Out", "ok:i32Out"], what: "order statistics" },
} as const satisfies { [K in keyof EngineExports]?: KernelCall };

/** The kinds of a kernel parameter (see `KERNEL_CALLS`). */
export type ParamKind = "f64In" | "i32In" | "f64In?" | "f64Out" | "i32Out" | "f64InOrOut" | "bytesInOut" | "i32" | "f64"
  | "u64";

/** The zero-argument number-returning exports a descriptor may read after its call. */
export type DiagnosticExport = {
  [K in keyof EngineExports]: EngineExports[K] extends () => number ? K : never;
}[keyof EngineExports];

/** One entry of `KERNEL_CALLS`. */
export interface KernelCall {
  readonly params: readonly `${string}:${ParamKind}`[];
  readonly what: string;
  readonly columns?: string;
  readonly reads?: Readonly<Record<string, DiagnosticExport>>;
  readonly result?: string;
}

/** The exports called through the generic protocol. */
export type KernelName = keyof typeof KERNEL_CALLS;

/** A descriptor's parameter name and kind. */
export type ParamName<S> = S extends `${infer N}:${string}` ? N : never;
export type KindOf<S> = S extends `${string}:${infer K}` ? K : never;

/** The WebAssembly-level argument types a descriptor's kinds make (bigint for u64, a number for everything else). */
type WasmArgs<P extends readonly string[]> = { -readonly [I in keyof P]: KindOf<P[I]> extends "u64" ? bigint : number };

type Agrees<K extends KernelName> = K extends keyof EngineExports
  ? Parameters<EngineExports[K]> extends WasmArgs<(typeof KERNEL_CALLS)[K]["params"]>
    ? WasmArgs<(typeof KERNEL_CALLS)[K]["params"]> extends Parameters<EngineExports[K]> ? true : false
    : false
  : false;

/** The descriptors that disagree with their `EngineExports` signature (none: `never`). */
type Disagreeing = { [K in KernelName]: Agrees<K> extends true ? never : K }[KernelName];

/** Compiles only while every descriptor agrees with its export's signature; else the error names the kernel. */
export const KernelCallsAgree: [Disagreeing] extends [never] ? true : Disagreeing = true;
