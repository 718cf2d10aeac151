/**
 * `alignWithFactors` (docs/method.md §7.7): the factors join the tickers (and the benchmark) by the same inner join as
 * a benchmark; a factor among the tickers or equal to the benchmark is that column; unknown factors are one
 * UNKNOWN_TICKERS naming them all.
 */
import { describe, expect, it } from "vitest";
import { alignPrices, alignWithBenchmark, alignWithFactors } from "../../src/pipeline/align.js";
import { parseIsoDay, weekday } from "../../src/domain/dates.js";
import { storeFromSeries } from "../../src/store/index.js";
import type { TickerSeries } from "../../src/store/types.js";
import { failure } from "../helpers/errors.js";

function businessDays(from: string, n: number): number[] {
  const out: number[] = [];
  for (let d = parseIsoDay(from)!; out.length < n; d++) if (weekday(d) !== 0 && weekday(d) !== 6) out.push(d);
  return out;
}
const price = (k: number, d: number): number => 100 + k + (d % 97) / 4;
function series(ticker: string, k: number, days: number[]): TickerSeries {
  return { ticker, days: Int32Array.from(days), closes: Float64Array.from(days, (d) => price(k, d)) };
}

describe("alignWithFactors", () => {
  const all = businessDays("2019-01-01", 400);
  const store = storeFromSeries([
    series("AAA", 0, all),
    series("BBB", 1, all),
    series("FAC", 2, all.slice(40).filter((_, i) => i % 7 !== 2)),
    series("IDX", 3, all.slice(10)),
  ]);

  it("shortens and thins the window as a benchmark does, the tickers' closes and the benchmark's as with the factor as benchmark", () => {
    const a = alignWithFactors(store, ["AAA", "BBB"], { factors: ["fac"], benchmark: "IDX" });
    const asBenchmark = alignWithBenchmark(store, ["AAA", "BBB", "IDX"], { benchmark: "FAC" });
    expect(Array.from(a.days)).toEqual(Array.from(asBenchmark.days));
    expect(a.tickers).toEqual(["AAA", "BBB"]);
    expect(a.factors!.map((f) => f.ticker)).toEqual(["FAC"]);
    expect(Array.from(a.factors![0].closes)).toEqual(Array.from(asBenchmark.benchmark!.closes));
    expect(Array.from(a.benchmark!.closes)).toEqual(Array.from(a.days, (d) => price(3, d)));
    const T = a.days.length;
    for (let t = 0; t < T; t++) expect([a.closes[2 * t], a.closes[2 * t + 1]]).toEqual([price(0, a.days[t]), price(1, a.days[t])]);
  });

  it("takes a factor among the tickers, or equal to the benchmark, from that column; without factors it is alignWithBenchmark", () => {
    const a = alignWithFactors(store, ["AAA", "BBB"], { factors: ["bbb", "IDX"], benchmark: "IDX" });
    expect(a.factors!.map((f) => f.ticker)).toEqual(["BBB", "IDX"]);
    expect(Array.from(a.factors![0].closes)).toEqual(Array.from(a.days, (d) => price(1, d)));
    expect(Array.from(a.factors![1].closes)).toEqual(Array.from(a.benchmark!.closes));
    const plain = alignPrices(store, ["AAA"], {});
    expect(plain.factors).toBeUndefined();
    expect(alignPrices(store, ["AAA"], { factors: ["FAC"] }).factors![0].closes.length).toBe(alignPrices(store, ["AAA", "FAC"]).dates.length);
  });

  it("names every unknown factor in one UNKNOWN_TICKERS", () => {
    const e = failure(() => alignWithFactors(store, ["AAA"], { factors: ["NOPE1", "FAC", "NOPE2"] }));
    expect(e.code).toBe("UNKNOWN_TICKERS");
    expect(JSON.stringify(e)).toMatch(/NOPE1.*NOPE2/);
  });
});
