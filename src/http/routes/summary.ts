/**
 * POST /v1/optimiser/sims/summary: the sims computation answered with what a chart needs instead of every run's
 * values: per strategy, the 5/25/50/75/95th percentile series over the runs for each test date, the distribution of
 * the final value (those percentiles, mean, share of losing runs) and the per-run statistics aggregated over runs
 * (src/report/summary.ts `summarizeSimsDistribution`). Same body, validation, seed rule and headers as /sims; the
 * summary is computed in the worker from the runs' doubles (src/pipeline/respond.ts, kind "sims-summary"). A strong
 * ETag from the request, the store version and the engine version (src/http/etag.ts); If-None-Match gets 304
 * without computing. The full runs stay available from /sims.
 */
import type { FastifyInstance } from "fastify";
import type { ZodTypeProvider } from "fastify-type-provider-zod";
import { z } from "zod";
import { ALL_SERIES_IDS } from "../../domain/strategies.js";
import { SIMS_PERCENTILES } from "../../report/summary.js";
import { requireJson } from "../plugins/errors.js";
import { makeSchemas, ProblemResponse } from "../schemas.js";
import type { AppContext } from "./context.js";
import { computeHandler } from "./optimiser.js";

export const SIMS_SUMMARY_PATH = "/optimiser/sims/summary";

const money = z.number().nullable();
const percentileShape = <T extends z.ZodType>(t: T) =>
  z.object(Object.fromEntries(SIMS_PERCENTILES.map((p) => [`p${p}`, t])) as Record<`p${(typeof SIMS_PERCENTILES)[number]}`, T>);

export const SimsSummaryResponse = z.object({
  runs: z.number().int().describe("The number of simulated runs summarised (run_count)."),
  percentiles: z.array(z.number()).describe("The percentiles of every band and of the final value: 5, 25, 50, 75, 95."),
  dates: z.array(z.string()).describe("The test dates, YYYY-MM-DD ascending: the index of every band."),
  strategies: z.array(z.object({
    PATH: z.enum(ALL_SERIES_IDS as unknown as [string, ...string[]]),
    bands: percentileShape(z.array(money))
      .describe("Per percentile, the portfolio value (USD, rounded to cents) on each test date over the runs."),
    final_value: percentileShape(money).extend({
      mean: money,
      loss_share: z.number().nullable().describe("Share of runs whose final value is below their first value."),
    }).describe("The distribution of the final value over the runs (USD, rounded to cents)."),
    summary: z.object({
      PATH: z.string(),
      runs: z.number().int(),
      final_value_min: money,
      final_value_median: money,
      final_value_mean: money,
      final_value_max: money,
      loss_probability: z.number().nullable(),
      mean_annualised_return: z.number().nullable(),
      mean_max_drawdown: z.number().nullable(),
      final_value_p5: money,
      final_value_p25: money,
      final_value_p50: money,
      final_value_p75: money,
      final_value_p95: money,
    }).describe("Each run's statistics (as POST /v1/optimiser/report computes them) aggregated over the runs."),
  })).describe("The selected strategy series in response order."),
});

const errorResponses = {
  400: ProblemResponse, 401: ProblemResponse, 413: ProblemResponse, 415: ProblemResponse, 422: ProblemResponse,
  429: ProblemResponse, 503: ProblemResponse, 504: ProblemResponse,
};

const DESCRIPTION =
  "The sims computation summarised for charts: per strategy, the 5/25/50/75/95th percentile series over the runs " +
  "for each test date (linear interpolation between closest ranks, Hyndman & Fan type 7), the distribution of the " +
  "final value (those percentiles, mean, share of losing runs), and each run's statistics aggregated over the runs. " +
  "Same body, validation, seed rule and headers (x-simulation-seed, -model, -generator, x-tickers, " +
  "x-covariance-fallback) as POST /v1/optimiser/sims, whose full runs it summarises: the same request and seed " +
  "give the runs /sims returns. Strong etag: send it back in if-none-match to get 304 without a recomputation.";

export function simsSummaryRoute(v1: FastifyInstance, ctx: AppContext): void {
  const { SimsBody } = makeSchemas(ctx.limits);
  v1.withTypeProvider<ZodTypeProvider>().post(SIMS_SUMMARY_PATH, {
    preParsing: requireJson,
    schema: {
      summary: "Percentile bands and final-value distributions of the sims, per strategy.",
      description: DESCRIPTION,
      tags: ["optimiser"],
      security: [{ apiKey: [] }],
      body: SimsBody,
      response: {
        200: SimsSummaryResponse,
        304: z.null().describe("Not modified: the etag sent in if-none-match is current."),
        ...errorResponses,
      },
    },
  }, computeHandler(ctx, "sims-summary", `POST /v1${SIMS_SUMMARY_PATH}`));
}
