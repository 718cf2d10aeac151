/**
 * assembly/random/xoshiro256.ts: SplitMix64 seeding, xoshiro256** steps and jump, uniforms.
 * Expected values: docs/test-vectors.md §11-G (computed independently with numpy), §8.4 (the published check vectors) and the
 * plain-JS reference in test/helpers/sims-reference.ts.
 */
import { describe, expect, it } from "vitest";
import { rngStream, rngStreamFromState } from "../../../src/engine/sims.js";
import { engine } from "../../helpers/kernels.js";
import { RefXoshiro, splitmix64State } from "../../helpers/sims-reference.js";

const wasm = engine();

describe("SplitMix64 seeding", () => {
  it("the first SplitMix64 output from state 0 is 0xE220A8397B1DCDAF (the published check value)", () => {
    expect(rngStream(wasm, 0n).state()[0]).toBe(0xe220a8397b1dcdafn);
  });

  it("seed 42 fills the xoshiro state with the four words of docs/test-vectors.md §11-G", () => {
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

  it("seed 42 gives the u64 outputs of docs/test-vectors.md §11-G", () => {
    const g = rngStream(wasm, 42n);
    expect([g.next(), g.next(), g.next(), g.next()]).toEqual([
      0x15780b2e0c2ec716n, 0x6104d9866d113a7en, 0xae17533239e499a1n, 0xecb8ad4703b360a1n,
    ]);
  });

  it("one jump() from seed 42 gives the state and next two outputs of docs/test-vectors.md §11-G", () => {
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
  it("seed 42 gives the uniforms of docs/test-vectors.md §11-G bit for bit", () => {
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
