/** Seeded price matrices: shared with the benchmarks (bench/prices.ts). */
export * from "../../bench/prices.js";
