/**
 * assembly/random: SplitMix64 seeding, xoshiro256** steps and jump, uniforms and Marsaglia polar normals.
 * Expected values: MATH.md §11-G (computed independently with numpy), §8.4 (the published check vectors) and the
 * plain-JS reference in ./sims-reference.ts.
 */
import { readFileSync } from "node:fs";
import { beforeAll, describe, expect, it } from "vitest";
import { Wasm } from "../../../src/engine/wasm.js";
import { rngStream, rngStreamFromState } from "../../../src/engine/sims.js";
import { PROJECT_ROOT } from "../../helpers/shared-data.js";
import { RefXoshiro, splitmix64State } from "../../helpers/sims-reference.js";

let wasm: Wasm;
beforeAll(async () => {
  wasm = await Wasm.load();
});

describe("SplitMix64 seeding", () => {
  it("the first SplitMix64 output from state 0 is 0xE220A8397B1DCDAF (the published check value)", () => {
    expect(rngStream(wasm, 0n).state()[0]).toBe(0xe220a8397b1dcdafn);
  });

  it("seed 42 fills the xoshiro state with the four words of MATH.md §11-G", () => {
    expect(rngStream(wasm, 42n).state()).toEqual([
      0xbdd732262feb6e95n, 0x28efe333b266f103n, 0x47526757130f9f52n, 0x581ce1ff0e4ae394n,
    ]);
  });

  it("seeds at the top of the u64 range are accepted and agree with the BigInt reference", () => {
    for (const seed of [2n ** 63n, 2n ** 64n - 1n, 2n ** 53n - 1n]) {
      expect(rngStream(wasm, seed).state()).toEqual(splitmix64State(seed));
    }
  });
});

describe("xoshiro256** steps and jump", () => {
  it("from state (1, 2, 3, 4) the outputs are the published 11520, 0, 1509978240, 1215971899390074240", () => {
    const g = rngStreamFromState(wasm, [1n, 2n, 3n, 4n]);
    expect([g.next(), g.next(), g.next(), g.next()]).toEqual([11520n, 0n, 1509978240n, 1215971899390074240n]);
  });

  it("seed 42 gives the u64 outputs of MATH.md §11-G", () => {
    const g = rngStream(wasm, 42n);
    expect([g.next(), g.next(), g.next(), g.next()]).toEqual([
      0x15780b2e0c2ec716n, 0x6104d9866d113a7en, 0xae17533239e499a1n, 0xecb8ad4703b360a1n,
    ]);
  });

  it("one jump() from seed 42 gives the state and next two outputs of MATH.md §11-G", () => {
    const g = rngStream(wasm, 42n);
    g.jump();
    expect(g.state()).toEqual([0x81746704fde896b5n, 0x645e944932dae0aen, 0xf4776829231c282cn, 0x2393f9798732dba1n]);
    expect([g.next(), g.next()]).toEqual([0x50086ef83cbf4f4an, 0xba285ec21347d703n]);
  });

  it("1000 outputs and three jumps from a random seed agree with the BigInt reference", () => {
    const seed = 0x0123456789abcdefn;
    const g = rngStream(wasm, seed);
    const ref = RefXoshiro.seeded(seed);
    for (let round = 0; round < 3; round++) {
      for (let k = 0; k < 333; k++) expect(g.next()).toBe(ref.next());
      g.jump();
      ref.jump();
      expect(g.state()).toEqual(ref.s);
    }
  });
});

describe("uniforms", () => {
  it("seed 42 gives the uniforms of MATH.md §11-G bit for bit", () => {
    const g = rngStream(wasm, 42n);
    const u = [g.uniform(), g.uniform(), g.uniform(), g.uniform()];
    expect(u).toEqual([0.08386297105988216, 0.3789802506626686, 0.6800434110281394, 0.9246929453253876]);
  });

  it("each uniform is exactly (next() >> 11)·2⁻⁵³ of a parallel stream, hence in [0, 1)", () => {
    const a = rngStream(wasm, 7n);
    const b = rngStream(wasm, 7n);
    for (let k = 0; k < 200; k++) {
      const u = a.uniform();
      expect(u).toBe(Number(b.next() >> 11n) * 2 ** -53);
      expect(u >= 0 && u < 1).toBe(true);
    }
  });
});

describe("Marsaglia polar normals", () => {
  it("seed 42 gives the six normals of MATH.md §11-G bit for bit (ln is compiled into the module)", () => {
    const z = rngStream(wasm, 42n).normals(6);
    expect(Array.from(z)).toEqual([
      -0.7262191382447857, -0.21119691823195985, 0.2216227015035933, 0.5227716877560146, 0.46417731016247366,
      0.7409788916865562,
    ]);
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
    expect(worst).toBeLessThanOrEqual(1e-15);
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
