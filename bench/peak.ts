/**
 * Bench probe (never used by the engine): the f64x2 multiply + add peak of this machine in WebAssembly as V8
 * compiles it, the floor the Gram kernel of assembly/linalg/gemm.ts is compared with (bench/suites/distance.ts;
 * docs/method.md §4.7, issue 14).
 *
 * The module is assembled here from bytes (no toolchain, no engine export): one function
 *   peak(n: i32, m: f64) → f64
 * that runs n trips of a register-only loop over A independent lane pairs: t_i ← t_i · m (f64x2.mul) and
 * s_i ← s_i + t_i (f64x2.add). No memory traffic; 2·A independent dependency chains hide the latency of the
 * multiply and the add; per trip 4·A flops (A multiplies and A adds of two lanes). The sum of the s_i is returned
 * so that nothing is dead. m slightly below 1 keeps every value normal (no subnormal slow path).
 * `f64x2Peak` times several accumulator counts (A = 4 … 7; x64 has 16 xmm registers, V8 uses no more) and returns
 * the best, in GFLOP/s.
 */

/** Unsigned LEB128. */
function leb(n: number): number[] {
  const out: number[] = [];
  do {
    let b = n & 0x7f;
    n >>>= 7;
    if (n !== 0) b |= 0x80;
    out.push(b);
  } while (n !== 0);
  return out;
}

function section(id: number, body: number[]): number[] {
  return [id, ...leb(body.length), ...body];
}

const SIMD = 0xfd;
const F64X2_SPLAT = [SIMD, ...leb(0x14)];
const F64X2_EXTRACT_LANE0 = [SIMD, ...leb(0x21), 0];
const F64X2_ADD = [SIMD, ...leb(0xf0)];
const F64X2_MUL = [SIMD, ...leb(0xf2)];
const LOCAL_GET = 0x20, LOCAL_SET = 0x21, LOCAL_TEE = 0x22;

/** The probe module with `acc` lane-pair accumulators (see the header). */
export function peakModuleBytes(acc: number): Uint8Array<ArrayBuffer> {
  // locals: 0 = n (i32), 1 = m (f64), 2 = splat(m), 3 … 3+acc−1 = t_i, 3+acc … = s_i
  const M = 2, T = 3, S = 3 + acc;
  const code: number[] = [];
  code.push(LOCAL_GET, 1, ...F64X2_SPLAT, LOCAL_SET, M);
  for (let i = 0; i < acc; i++) code.push(LOCAL_GET, M, LOCAL_SET, T + i);
  code.push(0x02, 0x40, 0x03, 0x40); // block, loop
  for (let i = 0; i < acc; i++) {
    code.push(LOCAL_GET, S + i, LOCAL_GET, T + i, LOCAL_GET, M, ...F64X2_MUL, LOCAL_TEE, T + i, ...F64X2_ADD,
      LOCAL_SET, S + i);
  }
  // n ← n − 1; continue while n ≠ 0
  code.push(LOCAL_GET, 0, 0x41, 1, 0x6b, LOCAL_TEE, 0, 0x0d, 0, 0x0b, 0x0b);
  code.push(LOCAL_GET, S);
  for (let i = 1; i < acc; i++) code.push(LOCAL_GET, S + i, ...F64X2_ADD);
  code.push(...F64X2_EXTRACT_LANE0, 0x0b);
  const body = [1, ...leb(1 + 2 * acc), 0x7b, ...code]; // one group of v128 locals
  const bytes = [
    0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00,
    ...section(1, [1, 0x60, 2, 0x7f, 0x7c, 1, 0x7c]), // type: (i32, f64) → f64
    ...section(3, [1, 0]),
    ...section(7, [1, 4, ...Array.from("peak", (c) => c.charCodeAt(0)), 0x00, 0]),
    ...section(10, [1, ...leb(body.length), ...body]),
  ];
  return new Uint8Array(bytes);
}

/**
 * The best f64x2 multiply + add rate in GFLOP/s over accumulator counts 4 … 7, each the best of `reps` timed runs
 * of `trips` trips (after a warm-up that lets V8 tier up to TurboFan).
 */
export function f64x2Peak(trips = 20_000_000, reps = 5): { gflops: number; acc: number } {
  let best = { gflops: 0, acc: 0 };
  for (let acc = 4; acc <= 7; acc++) {
    const inst = new WebAssembly.Instance(new WebAssembly.Module(peakModuleBytes(acc)));
    const peak = inst.exports.peak as (n: number, m: number) => number;
    let sink = 0;
    for (let w = 0; w < 3; w++) sink += peak(trips >> 2, 0.9999999);
    for (let r = 0; r < reps; r++) {
      const t0 = process.hrtime.bigint();
      sink += peak(trips, 0.9999999);
      const s = Number(process.hrtime.bigint() - t0) * 1e-9;
      const gflops = (4 * acc * trips) / s / 1e9;
      if (gflops > best.gflops) best = { gflops, acc };
    }
    if (!Number.isFinite(sink)) throw new Error("peak probe: non-finite sum");
  }
  return best;
}
