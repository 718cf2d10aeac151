/**
 * The engine's call protocol, written once (docs/conventions.md §3) and driven by the descriptors of
 * src/engine/abi.ts (`KERNEL_CALLS`). One `invoke` is one computation:
 *   1. begin: reset the arena (every pointer from before is invalid);
 *   2. reserve every output block, then copy every input in (one copy in per buffer), each in parameter order;
 *   3. call the export with the pointers and scalars in the descriptor's order;
 *   4. check the inputs (`verifyInputs`: throws naming the kernel if one changed), read `lastBadIndex()` and the
 *      descriptor's diagnostics;
 *   5. copy every output out (one copy out per buffer: into a new array, or into the caller's array for an
 *      `f64InOrOut` given as `{ into }`) and every state block back;
 *   6. release: the arena returns to its mark (empty, as `begin` left it), also when a step threw.
 * `invoke` returns the kernel's status untouched (an `Outcome`); `call` throws the catalogue error of a failed
 * status (src/engine/status.ts) with the descriptor's `what` unless the wrapper names it.
 *
 * Allocation: none besides the blocks in WebAssembly memory, the copies out and the result object; the argument
 * vector of each export is built once per thread and reused (calls are synchronous and not re-entrant).
 */
import type { Status } from "../../assembly/shared/status.js";
import {
  KERNEL_CALLS, type EngineExports, type KernelCall, type KernelName, type KindOf, type ParamKind, type ParamName,
  type Ptr,
} from "./abi.js";
import { type Naming, type Outcome, valueOf } from "./status.js";
import { arenaOf, type Arena, type Wasm } from "./wasm.js";

type Params<K extends KernelName> = (typeof KERNEL_CALLS)[K]["params"][number];

type OptionalKind = "f64In?" | "f64InOrOut";
type OutKind = "f64Out" | "i32Out" | "f64InOrOut";

/** What a wrapper passes for a parameter of this kind. */
type ArgOf<Kind> = Kind extends "f64In" | "i32In" ? ArrayLike<number>
  : Kind extends "f64In?" ? ArrayLike<number> | undefined
  : Kind extends "f64InOrOut" ? ArrayLike<number> | number | OutInto | undefined
  : Kind extends "bytesInOut" ? Uint8Array
  : Kind extends "u64" ? bigint
  : number;

/** An output copied into the caller's array (e.g. a view of shared memory) instead of a new one. */
export interface OutInto {
  into: Float64Array;
}

/** What comes back for an output parameter of this kind. */
type OutOf<Kind> = Kind extends "f64Out" ? Float64Array
  : Kind extends "i32Out" ? Int32Array
  : Float64Array | undefined;

/** The arguments of kernel K by parameter name (optional inputs may be left out). */
export type KernelArgs<K extends KernelName> =
  & { [S in Params<K> as KindOf<S> extends OptionalKind ? never : ParamName<S>]: ArgOf<KindOf<S>> }
  & { [S in Params<K> as KindOf<S> extends OptionalKind ? ParamName<S> : never]?: ArgOf<KindOf<S>> };

/** The outputs of kernel K by parameter name, as copied out. */
export type KernelOutputs<K extends KernelName> = {
  [S in Params<K> as KindOf<S> extends OutKind ? ParamName<S> : never]: OutOf<KindOf<S>>;
};

type Reads<K extends KernelName> = (typeof KERNEL_CALLS)[K] extends { reads: infer R } ? { [D in keyof R]: number }
  : unknown;

type ResultField<K extends KernelName> = (typeof KERNEL_CALLS)[K] extends { result: infer F extends string } ? F
  : "status";

/** The export's return value under the descriptor's `result` name (`status` for a kernel); none for "none". */
type Result<K extends KernelName> = ResultField<K> extends "none" ? unknown
  : { [F in ResultField<K>]: ReturnType<EngineExports[K]> };

/** One computation's outcome: the status (or result), the index it named, the outputs and the diagnostics. */
export type Invocation<K extends KernelName> = Result<K> & { badIndex: number; value: KernelOutputs<K> } & Reads<K>;

/** A descriptor compiled once per thread: kinds as small integers, the argument vector reused by every call. */
interface Plan {
  readonly name: KernelName;
  readonly names: readonly string[];
  readonly kinds: readonly number[];
  readonly argv: (number | bigint)[];
  /** Parameter positions allocated first (outputs, state blocks), then the rest. */
  readonly order: readonly number[];
  readonly reads: readonly (readonly [string, keyof EngineExports])[];
  readonly result: string;
}

const KIND: Record<ParamKind, number> = {
  "f64In": 0, "i32In": 1, "f64In?": 2, "f64Out": 3, "i32Out": 4, "f64InOrOut": 5, "bytesInOut": 6, "i32": 7,
  "f64": 8, "u64": 9,
};
const F64_IN = 0, I32_IN = 1, F64_IN_OPT = 2, F64_OUT = 3, I32_OUT = 4, F64_IN_OR_OUT = 5, BYTES = 6;

const plans = new Map<string, Plan>();

function planOf(name: KernelName): Plan {
  let p = plans.get(name);
  if (p === undefined) {
    const d: KernelCall = KERNEL_CALLS[name];
    const names = d.params.map((s) => s.slice(0, s.indexOf(":")));
    const kinds = d.params.map((s) => KIND[s.slice(s.indexOf(":") + 1) as ParamKind]);
    const first = (k: number) => k === F64_OUT || k === I32_OUT || k === BYTES;
    const idx = kinds.map((_, i) => i);
    p = {
      name, names, kinds, argv: new Array<number | bigint>(kinds.length).fill(0),
      order: [...idx.filter((i) => first(kinds[i])), ...idx.filter((i) => !first(kinds[i]))],
      reads: Object.entries(d.reads ?? {}) as [string, keyof EngineExports][],
      result: d.result ?? "status",
    };
    plans.set(name, p);
  }
  return p;
}

/** The length asked for an output parameter (an f64InOrOut given as a length or `{ into }`; 0 otherwise). */
function outLength(kind: number, arg: unknown): number {
  if (kind === F64_OUT || kind === I32_OUT) return arg as number;
  if (kind !== F64_IN_OR_OUT) return 0;
  return typeof arg === "number" ? arg : isInto(arg) ? arg.into.length : 0;
}

function isInto(arg: unknown): arg is OutInto {
  return typeof arg === "object" && arg !== null && "into" in arg;
}

/**
 * Run kernel `name` through the protocol (see the header) without throwing on its status: the status (or the
 * descriptor's `result`), `badIndex`, the outputs by parameter name and the descriptor's diagnostics. Throws only
 * for what is not a status: a kernel that changed an input (`verifyInputs`) or the runtime's abort.
 */
export function invoke<K extends KernelName>(wasm: Wasm, name: K, args: KernelArgs<K>): Invocation<K> {
  return run(arenaOf(wasm), planOf(name), args as unknown as Record<string, unknown>) as Invocation<K>;
}

/** The whole protocol for one plan (see the header). */
function run(a: Arena, p: Plan, given: Record<string, unknown>): Record<string, unknown> {
  a.begin();
  try {
    const ret = start(a, p, given);
    const k = a.k;
    const r: Record<string, unknown> = {};
    if (p.result !== "none") r[p.result] = ret;
    r.badIndex = k.lastBadIndex();
    for (const [field, getter] of p.reads) r[field] = (k[getter] as () => number)();
    const value: Record<string, unknown> = {};
    const { names, kinds, argv } = p;
    for (let i = 0; i < kinds.length; i++) {
      const kind = kinds[i];
      const arg = given[names[i]];
      if (kind === F64_OUT) value[names[i]] = a.takeF64(argv[i] as Ptr, arg as number);
      else if (kind === I32_OUT) value[names[i]] = a.takeI32(argv[i] as Ptr, arg as number);
      else if (kind === F64_IN_OR_OUT) {
        const n = outLength(kind, arg);
        if (isInto(arg)) {
          if (n > 0) arg.into.set(a.f64(argv[i] as Ptr, n));
          value[names[i]] = arg.into;
        } else value[names[i]] = n > 0 ? a.takeF64(argv[i] as Ptr, n) : undefined;
      } else if (kind === BYTES) a.takeBytes(argv[i] as Ptr, arg as Uint8Array);
    }
    r.value = value;
    return r;
  } finally {
    a.release();
  }
}

/** Steps 2–4 of the protocol on a begun arena: allocate, copy in, call, verify; the export's return value. */
function start(a: Arena, p: Plan, given: Record<string, unknown>): unknown {
  const { names, kinds, argv, order } = p;
  for (const i of order) {
    const kind = kinds[i];
    const arg = given[names[i]];
    switch (kind) {
      case F64_IN: argv[i] = a.f64In(arg as ArrayLike<number>); break;
      case I32_IN: argv[i] = a.i32In(arg as ArrayLike<number>); break;
      case F64_IN_OPT: argv[i] = arg === undefined ? 0 : a.f64In(arg as ArrayLike<number>); break;
      case F64_OUT: argv[i] = a.f64Out(arg as number); break;
      case I32_OUT: argv[i] = a.i32Out(arg as number); break;
      case F64_IN_OR_OUT: {
        const n = outLength(kind, arg);
        argv[i] = n > 0 ? a.f64Out(n) : typeof arg === "object" && !isInto(arg) ? a.f64In(arg as ArrayLike<number>) : 0;
        break;
      }
      case BYTES: argv[i] = a.bytesInOut(arg as Uint8Array); break;
      default: argv[i] = arg as number | bigint;
    }
  }
  const ret = (a.k[p.name] as (...x: (number | bigint)[]) => unknown)(...argv);
  a.verify(p.name);
  return ret;
}

/** The pointers of an open computation's outputs, by parameter name. */
export type KernelPointers<K extends KernelName> = { [F in keyof KernelOutputs<K>]: Ptr };

/**
 * Steps 1–4 only: the computation stays open, its outputs in WebAssembly memory (pointers valid until the next
 * `begin`), for a caller that goes on computing from them there (src/engine/dollars.ts writes the response body
 * from the values). The caller ends it; nothing is copied out and the arena is not released.
 */
export function invokeInPlace<K extends KernelName>(wasm: Wasm, name: K, args: KernelArgs<K>):
  Outcome<KernelPointers<K>> {
  const a = arenaOf(wasm);
  const p = planOf(name);
  const given = args as unknown as Record<string, unknown>;
  a.begin();
  const status = start(a, p, given) as Status;
  const value: Record<string, Ptr> = {};
  for (let i = 0; i < p.kinds.length; i++) {
    if (outLength(p.kinds[i], given[p.names[i]]) > 0 || p.kinds[i] === F64_OUT || p.kinds[i] === I32_OUT) {
      value[p.names[i]] = p.argv[i] as Ptr;
    }
  }
  return { status, badIndex: a.badIndex, value: value as KernelPointers<K> };
}

/**
 * `invoke`, then the catalogue error of a failed status (src/engine/status.ts): named `naming` (default: the
 * descriptor's `what`), an index turned into a ticker through the descriptor's `columns` parameter. The outputs.
 */
export function call<K extends KernelName>(wasm: Wasm, name: K, args: KernelArgs<K>, naming?: Naming):
  KernelOutputs<K> {
  const o = invoke(wasm, name, args) as unknown as Outcome<KernelOutputs<K>>;
  return valueOf(o, naming ?? { what: KERNEL_CALLS[name].what }, columnsOf(name, args));
}

/** The value of the descriptor's `columns` parameter in `args` (undefined without one). */
export function columnsOf<K extends KernelName>(name: K, args: KernelArgs<K>): number | undefined {
  const c = (KERNEL_CALLS[name] as KernelCall).columns;
  return c === undefined ? undefined : (args as unknown as Record<string, number>)[c];
}

/** An outcome whose value is one of the outputs (`o.value[key]`), the rest (status, index, diagnostics) kept. */
export function pick<T extends { value: object }, F extends keyof T["value"]>(o: T, key: F):
  Omit<T, "value"> & { value: T["value"][F] } {
  return { ...o, value: (o.value as T["value"])[key] } as Omit<T, "value"> & { value: T["value"][F] };
}

/** The protocol around an export that computes nothing (`lastFailedSeries` ignores the pointers it is given). */
const PROBE: Plan = {
  name: "lastFailedSeries" as KernelName, names: ["data", "out"], kinds: [F64_IN, F64_OUT], argv: [0, 0], order: [1, 0],
  reads: [], result: "status",
};

/**
 * The boundary alone, through the same protocol as every kernel: `data` copied in and `nOut` f64 reserved and copied
 * out around one export call that computes nothing (src/engine/core.ts `boundaryRoundTrip`, the bench's measure).
 */
export function probe(wasm: Wasm, data: ArrayLike<number>, nOut: number): Float64Array {
  return (run(arenaOf(wasm), PROBE, { data, out: nOut }).value as { out: Float64Array }).out;
}
