/**
 * assembly/random/normal.ts: Marsaglia polar normals over xoshiro256**, and the build settings the seeded streams
 * depend on. Expected values: docs/test-vectors.md §11-G (computed independently with numpy) and the plain-JS reference in
 * test/helpers/sims-reference.ts.
 */
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { nativeLog, rngStream } from "../../../src/engine/sims.js";
import { engine, rng } from "../../helpers/kernels.js";
import { PROJECT_ROOT } from "../../helpers/shared-data.js";
import { TOL } from "../../helpers/tolerances.js";
import { RefXoshiro } from "../../helpers/sims-reference.js";

const wasm = engine();

describe("Marsaglia polar normals", () => {
  it("seed 42 gives the six normals of docs/test-vectors.md §11-G bit for bit (ln is compiled into the module)", () => {
    const z = rngStream(wasm, 42n).normals(6);
    expect(Array.from(z)).toEqual([
      -0.7262191382447857, -0.21119691823195985, 0.2216227015035933, 0.5227716877560146, 0.46417731016247366,
      0.7409788916865562,
    ]);
  });

  it("the polar step's f64x2 logarithm is NativeMath.log's, bit for bit (the s of the method, near 1, the whole range, specials)", () => {
    const u = rng(44);
    const xs: number[] = [0, -0, 1, -1, Infinity, -Infinity, NaN, 5e-324, 2.2250738585072014e-308, 2.225073858507201e-308,
      1.7976931348623157e308, 0.9375, 0.9375 - 2 ** -53, 1.0647, 1 - 2 ** -53, 2 ** -104, Math.SQRT1_2, 0.5, 0.25];
    // pairs on either side of the table path's edges, in both lane orders
    for (const edge of [0.9375, 1.064697265625, 2.2250738585072014e-308]) {
      for (const d of [-2, -1, 0, 1, 2]) xs.push(edge + d * edge * 2 ** -52, 0.3, 0.3, edge + d * edge * 2 ** -52);
    }
    for (let i = 0; i < 300_000; i++) xs.push(u()); // s = a² + b² of the method: uniform on (0, 1)
    for (let i = 0; i < 50_000; i++) { const a = 2 * u() - 1, b = 2 * u() - 1; xs.push(a * a + b * b); }
    for (let i = 0; i < 50_000; i++) xs.push(Math.exp((u() - 0.5) * 1400));
    for (let i = 0; i < 10_000; i++) xs.push(u() * 1e-310, -u());
    const { pairs, scalar } = nativeLog(wasm, Float64Array.from(xs));
    const bad = xs.filter((_, i) => !Object.is(pairs[i], scalar[i]));
    expect(bad).toEqual([]);
    // and NativeMath.log is within an ulp of the host's
    expect(Math.abs(scalar[xs.indexOf(0.3)] - Math.log(0.3))).toBeLessThanOrEqual(2 ** -52);
  });

  it("the cached second variate carries over between calls: 3 + 1 + 2 draws equal 6 draws in one call", () => {
    const one = rngStream(wasm, 99n).normals(6);
    const g = rngStream(wasm, 99n);
    const parts = [...g.normals(3), ...g.normals(1), ...g.normals(2)];
    expect(parts).toEqual(Array.from(one));
  });

  it("20 000 normals agree with the plain-JS polar reference to 1e-15 relative (host ln differs by ≤ 1 ulp)", () => {
    const seed = 2024n;
    const z = rngStream(wasm, seed).normals(20_000);
    const ref = RefXoshiro.seeded(seed);
    let worst = 0;
    for (let k = 0; k < z.length; k++) {
      const r = ref.normal();
      worst = Math.max(worst, Math.abs(z[k] - r) / Math.max(Math.abs(r), 1e-300));
    }
    expect(worst).toBeLessThanOrEqual(TOL.ulps);
  });

  it("200 000 normals have mean 0, variance 1, skewness 0 and kurtosis 3 within 5 standard errors", () => {
    // Standard errors for n i.i.d. N(0,1): mean 1/√n, variance √(2/n), skewness √(6/n), kurtosis √(24/n).
    const n = 200_000;
    const z = rngStream(wasm, 123456789n).normals(n);
    let m1 = 0, m2 = 0, m3 = 0, m4 = 0;
    for (const x of z) {
      m1 += x;
      m2 += x * x;
      m3 += x * x * x;
      m4 += x * x * x * x;
    }
    m1 /= n; m2 /= n; m3 /= n; m4 /= n;
    expect(Math.abs(m1)).toBeLessThan(5 / Math.sqrt(n));
    expect(Math.abs(m2 - 1)).toBeLessThan(5 * Math.sqrt(2 / n));
    expect(Math.abs(m3)).toBeLessThan(5 * Math.sqrt(6 / n));
    expect(Math.abs(m4 - 3)).toBeLessThan(5 * Math.sqrt(24 / n));
  });

  it("the fraction of normals beyond ±1.96 is 5% within 5 binomial standard errors", () => {
    const n = 200_000;
    const z = rngStream(wasm, 31337n).normals(n);
    const tail = z.reduce((c, x) => c + (Math.abs(x) > 1.959963984540054 ? 1 : 0), 0) / n;
    expect(Math.abs(tail - 0.05)).toBeLessThan(5 * Math.sqrt((0.05 * 0.95) / n));
  });
});

describe("build settings the seeded streams depend on", () => {
  it("the release target compiles with shrinkLevel 0, which selects NativeMath's table-driven log and exp", () => {
    // With shrinkLevel ≥ 1 AssemblyScript switches ln/exp to musl's polynomials, which differ in the last bit for
    // ~3% of polar normals (measured 61 720 of 2 000 525): every seeded sims response would change.
    const cfg = JSON.parse(readFileSync(`${PROJECT_ROOT}/asconfig.json`, "utf8")) as {
      targets: { release: { shrinkLevel?: number } };
      options: { use?: string[] | string };
    };
    expect(cfg.targets.release.shrinkLevel ?? 0).toBe(0);
    expect(JSON.stringify(cfg.options.use ?? "")).not.toMatch(/Math\s*=\s*JSMath/);
  });
});
