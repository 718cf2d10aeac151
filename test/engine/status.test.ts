/**
 * src/engine/status.ts: every kernel status maps to its catalogue error (src/errors.ts), naming the asset from the
 * kernel's flat index, and `valueOf` passes an Ok outcome's value through untouched.
 */
import { describe, expect, it } from "vitest";
import { checkStatus, Status, valueOf } from "../../src/engine/status.js";
import { FolioError } from "../../src/errors.js";

function thrown(f: () => unknown): FolioError {
  try {
    f();
  } catch (e) {
    expect(e).toBeInstanceOf(FolioError);
    return e as FolioError;
  }
  throw new Error("expected a FolioError");
}

const TICKERS = ["AAA", "BBB", "CCC"];

describe("kernel status → error catalogue", () => {
  it("Ok throws nothing", () => {
    expect(() => checkStatus(Status.Ok, { what: "gmvp" })).not.toThrow();
  });

  it("ZeroVariance, BadPrice and NonFinite are DEGENERATE_INPUT naming the asset of the flat index (t·N + i)", () => {
    for (const status of [Status.ZeroVariance, Status.BadPrice, Status.NonFinite]) {
      const e = thrown(() => checkStatus(status, { what: "covariance", tickers: TICKERS, badIndex: 2 * 3 + 1, columns: 3 }));
      expect(e.code, Status[status]).toBe("DEGENERATE_INPUT");
      expect(e.detail, Status[status]).toContain("BBB");
      expect(e.extras, Status[status]).toEqual({ ticker: "BBB" });
    }
  });

  it("without tickers or with index −1 the error names no asset", () => {
    expect(thrown(() => checkStatus(Status.ZeroVariance, { what: "x", badIndex: 1 })).extras).toEqual({ ticker: undefined });
    expect(thrown(() => checkStatus(Status.ZeroVariance, { what: "x", tickers: TICKERS, badIndex: -1 })).extras)
      .toEqual({ ticker: undefined });
  });

  it("BadDimensions is DEGENERATE_INPUT saying what was computed", () => {
    const e = thrown(() => checkStatus(Status.BadDimensions, { what: "valuation" }));
    expect(e.code).toBe("DEGENERATE_INPUT");
    expect(e.detail).toContain("valuation");
  });

  it("NotPositiveDefinite, NotConverged and NotCertified are SOLVER_FAILED naming the strategy and the reason", () => {
    const reasons: [Status, string][] = [
      [Status.NotPositiveDefinite, "not positive definite"],
      [Status.NotConverged, "iteration limit"],
      [Status.NotCertified, "certificate"],
    ];
    for (const [status, reason] of reasons) {
      const e = thrown(() => checkStatus(status, { what: "l1r.l2m.l3gmvp" }));
      expect(e.code).toBe("SOLVER_FAILED");
      expect(e.detail).toContain("l1r.l2m.l3gmvp");
      expect(e.detail).toContain(reason);
    }
  });

  it("an unknown status is INTERNAL_ERROR, never a crash", () => {
    expect(thrown(() => checkStatus(99, { what: "x" })).code).toBe("INTERNAL_ERROR");
  });

  it("valueOf returns the value of an Ok outcome as is, and throws the catalogue error otherwise", () => {
    const value = Float64Array.of(0.25, 0.75);
    expect(valueOf({ status: Status.Ok, badIndex: -1, value }, { what: "ivp" })).toBe(value);
    const e = thrown(() => valueOf({ status: Status.ZeroVariance, badIndex: 4, value }, { what: "ivp", tickers: TICKERS }, 3));
    expect(e.extras).toEqual({ ticker: "BBB" });
  });
});
