/**
 * assembly/random/normal.ts `fillNormalsPair`: two runs' polar normals with the two xoshiro256** states in i64x2
 * lanes. Each lane must give the scalar stream's values bit for bit (the seeded sims bodies are pinned by hashes),
 * whatever the counts, the caches the streams start with, and wherever the lanes' rejections fall.
 */
import { describe, expect, it } from "vitest";
import { rngNormalsPair, rngStream, rngStreamFromState, type RngStream } from "../../../src/engine/sims.js";
import { engine } from "../../helpers/kernels.js";

const wasm = engine();

/** Indices where a and b differ as values (Object.is: −0 and NaN count). */
function differences(a: Float64Array, b: Float64Array): number[] {
  const out: number[] = [];
  for (let i = 0; i < Math.max(a.length, b.length); i++) if (!Object.is(a[i], b[i])) out.push(i);
  return out;
}

/** Two copies of a stream (the same state and cache), one for the two-lane call and one for the scalar reference. */
function twins(seed: bigint, jumps: number, lead: number): [RngStream, RngStream] {
  const s = rngStream(wasm, seed);
  const t = rngStream(wasm, seed);
  for (let j = 0; j < jumps; j++) { s.jump(); t.jump(); }
  // `lead` normals first: an odd lead leaves a cached variate, so the lanes start with different caches
  s.normals(lead);
  t.normals(lead);
  return [s, t];
}

describe("two-lane polar normals (fillNormalsPair)", () => {
  it("≥ 100,000 draws per lane equal two scalar streams bit for bit, and both streams continue identically", () => {
    const [a, a2] = twins(7n, 0, 0);
    const [b, b2] = twins(7n, 1, 0); // the next run's stream (one jump), as simulateSummary pairs runs r and r + 1
    const n = 100_003; // odd: the pair count of the last batch is odd and a cached variate is left in both
    const [za, zb] = rngNormalsPair(wasm, a, b, n);
    expect(differences(za, a2.normals(n))).toEqual([]);
    expect(differences(zb, b2.normals(n))).toEqual([]);
    expect(a.state()).toEqual(a2.state());
    expect(b.state()).toEqual(b2.state());
    // the caches carried: the next draws of each agree too
    expect(differences(a.normals(5), a2.normals(5))).toEqual([]);
    expect(differences(b.normals(5), b2.normals(5))).toEqual([]);
  });

  it("every count 0 … 70 and the batch edges (511 … 1,026), with either, both or neither stream holding a cache", () => {
    const counts = [...Array.from({ length: 71 }, (_, i) => i), 511, 512, 513, 514, 515, 1023, 1024, 1025, 1026];
    let checked = 0;
    for (const n of counts) {
      for (const [leadA, leadB] of [[0, 0], [1, 0], [0, 1], [1, 1], [3, 2]]) {
        const [a, a2] = twins(BigInt(1000 + n), 0, leadA);
        const [b, b2] = twins(BigInt(5000 + n), 2, leadB);
        const [za, zb] = rngNormalsPair(wasm, a, b, n);
        expect(differences(za, a2.normals(n)), `n=${n} leads ${leadA},${leadB}`).toEqual([]);
        expect(differences(zb, b2.normals(n)), `n=${n} leads ${leadA},${leadB}`).toEqual([]);
        expect(a.state()).toEqual(a2.state());
        expect(b.state()).toEqual(b2.state());
        expect(a.normals(1)[0]).toBe(a2.normals(1)[0]);
        expect(b.normals(1)[0]).toBe(b2.normals(1)[0]);
        checked++;
      }
    }
    expect(checked).toBe(counts.length * 5);
  });

  it("the rejection and uniform edges: streams whose first candidates are s = 0, s ≥ 1 and u at 0 and 1 − 2⁻⁵³", () => {
    // xoshiro256**'s output is rotl(s1·5, 7)·9: with s1 = 0 the first output is 0 (u = 0, a = −1), so the first
    // candidate has s = a² + b² ≥ 1 or exactly 1 and is rejected. Output 0 again needs s1 = 0 after the step.
    // Top-bit outputs (m ≥ 2⁵², the lane's y − 1 case) and the rest come from the states below and the long test.
    const starts: bigint[][] = [
      [1n, 0n, 0n, 0n], [0n, 0n, 1n, 0n], [0n, 0n, 0n, 1n], [1n, 2n, 3n, 4n],
      [0xFFFFFFFFFFFFFFFFn, 0n, 0xFFFFFFFFFFFFFFFFn, 0n], [0n, 0x8000000000000000n, 0n, 0n],
      [0x0123456789ABCDEFn, 0xFEDCBA9876543210n, 0n, 0n],
    ];
    // the first outputs of these states hit both halves of [0, 1): some m below and some at or above 2⁵²
    let top = 0, bottom = 0, rejected = 0;
    for (const w of starts) {
      const g = rngStreamFromState(wasm, w);
      for (let i = 0; i < 8; i++) {
        const u = g.uniform();
        if (u >= 0.5) top++; else bottom++;
      }
      const h = rngStreamFromState(wasm, w);
      const a = 2 * h.uniform() - 1, b = 2 * h.uniform() - 1;
      if (!(a * a + b * b > 0 && a * a + b * b < 1)) rejected++;
    }
    expect(top).toBeGreaterThan(0);
    expect(bottom).toBeGreaterThan(0);
    expect(rejected).toBeGreaterThan(0); // at least one start rejects its first candidate
    for (let i = 0; i < starts.length; i++) {
      for (let j = 0; j < starts.length; j++) {
        if (i === j) continue;
        for (const n of [1, 2, 3, 9, 600]) {
          const a = rngStreamFromState(wasm, starts[i]), a2 = rngStreamFromState(wasm, starts[i]);
          const b = rngStreamFromState(wasm, starts[j]), b2 = rngStreamFromState(wasm, starts[j]);
          const [za, zb] = rngNormalsPair(wasm, a, b, n);
          expect(differences(za, a2.normals(n)), `${i},${j} n=${n}`).toEqual([]);
          expect(differences(zb, b2.normals(n)), `${i},${j} n=${n}`).toEqual([]);
          expect(a.state()).toEqual(a2.state());
          expect(b.state()).toEqual(b2.state());
        }
      }
    }
  });

  it("2u − 1 without an i64 → f64 conversion: the uniforms' extremes give the scalar's a (0 → −1, 2⁵³ − 1 → 1 − 2⁻⁵²)", () => {
    // The scalar computes m·2⁻⁵² − 1; the lanes y − (2 − b) with b = m's top bit. Stream values over 100,000 pairs
    // (above) cover both b; here the arithmetic identity itself for the extremes and both sides of 2⁵².
    const scalar = (m: number) => m * 2 ** -52 - 1;
    const lanes = (m: bigint) => {
      const low = m & ((1n << 52n) - 1n);
      const y = new Float64Array(new BigUint64Array([0x3FF0000000000000n | low]).buffer)[0];
      return y - (m >> 52n === 1n ? 1 : 2);
    };
    for (const m of [0n, 1n, (1n << 52n) - 1n, 1n << 52n, (1n << 52n) + 1n, (1n << 53n) - 1n, 3n << 50n, 12345n]) {
      expect(Object.is(lanes(m), scalar(Number(m))), String(m)).toBe(true);
    }
  });
});
