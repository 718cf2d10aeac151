/**
 * src/engine/core.ts host-side contract of the wrappers (the kernels' numerics are tested in test/assembly/stats):
 * one copy in and one copy out (results do not alias memory a later call reuses; caller arrays are not written),
 * the throwing form names the asset, and inconsistent lengths are RangeError before any kernel runs.
 */
import { describe, expect, it } from "vitest";
import {
  bucketSums, correlation, covariance, logReturns, tryBucketSums, tryCholesky, tryCovariance,
  tryLogReturns,
} from "../../src/engine/core.js";
import { Status } from "../../src/engine/status.js";
import { FolioError } from "../../src/errors.js";
import { engine } from "../helpers/kernels.js";

const wasm = engine();

describe("typed wrappers over the shared numerics", () => {
  it("return copies: a later call does not change an earlier result, and the caller's input is not written", () => {
    const X = [0.01, 0.02, -0.01, 0.03, 0.02, -0.02];
    const before = X.slice();
    const first = covariance(wasm, X, 3, 2);
    const saved = Array.from(first.covariance);
    covariance(wasm, [1, 2, 3, 5, 8, 13], 3, 2);
    expect(Array.from(first.covariance)).toEqual(saved);
    expect(X).toEqual(before);
  });

  it("the throwing form names the asset of the kernel's flat index, with the context given", () => {
    try {
      logReturns(wasm, [10, 20, 30, 11, 0, 31], 2, 3, { what: "training log-returns", tickers: ["AAA", "BBB", "CCC"] });
      expect.unreachable();
    } catch (e) {
      expect(e).toBeInstanceOf(FolioError);
      expect((e as FolioError).extras).toEqual({ ticker: "BBB" });
    }
  });

  it("the try form returns the status and index instead of throwing", () => {
    expect(tryLogReturns(wasm, [10, 20, 30, 11, 0, 31], 2, 3)).toMatchObject({ status: Status.BadPrice, badIndex: 4 });
    expect(tryCholesky(wasm, [1, 2, 2, 1], 2).status).toBe(Status.NotPositiveDefinite);
    expect(Array.from(tryCholesky(wasm, [4, 2, 2, 5], 2).value)).toEqual([2, 0, 1, 2]);
  });

  it("bucket sums add the rows of each bucket", () => {
    const sums = bucketSums(wasm, [1, 10, 2, 20, 3, 30, 4, 40], 4, 2, [0, 0, 0, 1], 2);
    expect(Array.from(sums)).toEqual([6, 60, 4, 40]);
    expect(tryBucketSums(wasm, [1, 2], 1, 2, [0], 1).status).toBe(Status.Ok);
  });

  it("correlation has an exact unit diagonal and returns the volatilities", () => {
    const { correlation: C, sd } = correlation(wasm, [4, 1, 1, 9], 2);
    expect(Array.from(C)).toEqual([1, 1 / 6, 1 / 6, 1]);
    expect(Array.from(sd)).toEqual([2, 3]);
  });

  it("inconsistent lengths or sizes are RangeError (a caller bug), not a kernel status", () => {
    expect(() => tryCovariance(wasm, [1, 2, 3], 2, 2)).toThrow(RangeError);
    expect(() => tryCovariance(wasm, [1, 2], 1, 2)).toThrow(RangeError);
    expect(() => tryLogReturns(wasm, [1, 2, 3], 1, 3)).toThrow(RangeError);
    expect(() => tryBucketSums(wasm, [1, 2, 3, 4], 2, 2, [0], 1)).toThrow(RangeError);
    expect(() => correlation(wasm, [1, 0, 0], 2)).toThrow(RangeError);
    expect(() => tryCholesky(wasm, [1], 0)).toThrow(RangeError);
  });
});
