/**
 * POST /v1/optimiser/sims/summary: the sims computation answered with what a chart and a planner need instead of
 * every run's values: per series, the 5/10/25/50/75/90/95th percentile series over the runs on the band dates, the
 * distribution of the final value, the per-run statistics aggregated over runs and the planner's figures
 * (src/report/sims-summary.ts; computed in chunks of runs, src/pipeline/respond.ts `summariseSims`). Same body, validation, seed rule and headers as /sims; the
 * summary is computed in the worker from the runs' doubles (src/pipeline/respond.ts, kind "sims-summary"). A strong
 * ETag from the request, the store version and the engine version (src/http/etag.ts); If-None-Match gets 304
 * without computing. The full runs stay available from /sims.
 */
import type { FastifyInstance } from "fastify";
import type { ZodTypeProvider } from "fastify-type-provider-zod";
import { z } from "zod";
import { ALL_SERIES_IDS } from "../../domain/strategies.js";
import { SIMS_PERCENTILES } from "../../report/sims-summary.js";
import { requireJson } from "../plugins/errors.js";
import { makeSchemas, ProblemResponse } from "../schemas.js";
import type { AppContext } from "./context.js";
import { ASYNC_NOTE, JobStatus } from "./jobs.js";
import { computeHandler } from "./optimiser.js";

/** The route within the optimiser plugin (registered at /v1/optimiser). */
export const SIMS_SUMMARY_PATH = "/sims/summary";

const money = z.number().nullable();
const percentileShape = <T extends z.ZodType>(t: T) =>
  z.object(Object.fromEntries(SIMS_PERCENTILES.map((p) => [`p${p}`, t])) as Record<`p${(typeof SIMS_PERCENTILES)[number]}`, T>);

const rate = (d: string) => z.number().nullable().describe(d);
const summaryFields = {
  PATH: z.string(),
  runs: z.number().int(),
  final_value_min: money,
  final_value_median: money,
  final_value_mean: money,
  final_value_max: money,
  loss_probability: z.number().nullable(),
  mean_annualised_return: z.number().nullable(),
  mean_max_drawdown: z.number().nullable(),
  ...Object.fromEntries(SIMS_PERCENTILES.map((p) => [`final_value_p${p}`, money.describe(`The ${p}th percentile of the final value (USD).`)])),
  ...Object.fromEntries(SIMS_PERCENTILES.map((p) => [`final_value_real_p${p}`, money.describe(`The same in today's dollars (deflated by inflation).`)])),
  success_probability: rate("Share of runs never depleted before the horizon (docs/method.md §8.10)."),
  target_probability: rate("Share of runs whose final value in today's dollars is at least target_value; null without a target."),
  median_annualised_return: rate("Median over runs of the annualised time-weighted return (the portfolio without the flows)."),
  median_money_weighted_return: rate("Median over runs of the annual money-weighted return (IRR of the flows); null without flows."),
  safe_withdrawal_rate: rate("The largest inflation-adjusted yearly withdrawal, as a fraction of the initial value, paid in full in ≥ 95 % of the runs; null for a horizon under a year."),
};

export const SimsSummaryResponse = z.object({
  runs: z.number().int().describe("The number of simulated runs summarised (run_count)."),
  percentiles: z.array(z.number()).describe(`The percentiles of every band and of the final value: ${SIMS_PERCENTILES.join(", ")}.`),
  dates: z.array(z.string()).describe(
    "The band dates, YYYY-MM-DD ascending: every test date, or (runs × series × dates above 12 M) an even thinning with the first and last."),
  strategies: z.array(z.object({
    PATH: z.enum(ALL_SERIES_IDS as unknown as [string, ...string[]]),
    bands: percentileShape(z.array(money))
      .describe("Per percentile, the portfolio value (USD, rounded to cents) on each band date over the runs."),
    bands_real: percentileShape(z.array(money)).optional()
      .describe("The same in today's dollars; present when inflation is not 0."),
    final_value: percentileShape(money).extend({
      mean: money,
      loss_share: z.number().nullable().describe("Share of runs whose final value is below their first value."),
    }).describe("The distribution of the final value over the runs (USD, rounded to cents)."),
    summary: z.object(summaryFields).passthrough()
      .describe("Each run's statistics (as POST /v1/optimiser/report computes them) aggregated over the runs, and the planner's figures."),
  })).describe("The selected series in response order."),
  warnings: z.array(z.object({ code: z.string(), message: z.string() }))
    .describe("What makes the answer doubtful and the fix: implausible-drift, implausible-return, independent-model."),
});

const errorResponses = {
  400: ProblemResponse, 401: ProblemResponse, 413: ProblemResponse, 415: ProblemResponse, 422: ProblemResponse,
  429: ProblemResponse, 503: ProblemResponse, 504: ProblemResponse,
};

const DESCRIPTION =
  "The sims computation summarised for charts and planning: per series, the 5/10/25/50/75/90/95th percentile series " +
  "over the runs on each band date (linear interpolation between closest ranks, Hyndman & Fan type 7), the distribution of the " +
  "final value (those percentiles, mean, share of losing runs), and each run's statistics aggregated over the runs. " +
  "Same body, validation, seed rule and headers (x-simulation-seed, -model, -generator, x-tickers, " +
  "x-covariance-fallback) as POST /v1/optimiser/sims, whose full runs it summarises: the same request and seed " +
  "give the runs /sims returns. Strong etag: send it back in if-none-match to get 304 without a recomputation.";

export function simsSummaryRoute(scope: FastifyInstance, ctx: AppContext): void {
  const { SimsSummaryBody } = makeSchemas(ctx.limits);
  scope.withTypeProvider<ZodTypeProvider>().post(SIMS_SUMMARY_PATH, {
    config: { computeKind: "sims-summary" },
    preParsing: requireJson,
    schema: {
      summary: "Percentile bands and final-value distributions of the sims, per strategy.",
      description: DESCRIPTION + ASYNC_NOTE,
      tags: ["optimiser"],
      security: [{ apiKey: [] }],
      body: SimsSummaryBody,
      response: {
        200: SimsSummaryResponse,
        202: JobStatus,
        304: z.null().describe("Not modified: the etag sent in if-none-match is current."),
        ...errorResponses,
      },
    },
  }, computeHandler(ctx, "sims-summary", `POST /v1/optimiser${SIMS_SUMMARY_PATH}`));
}
