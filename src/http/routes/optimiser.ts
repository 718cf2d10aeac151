/**
 * POST /v1/optimiser/{weights,paths,sims,report}: the routes, their schemas and documentation. The body is validated
 * on the event loop (strict zod schema); each request is then one `ComputeExchange` (src/http/exchange.ts: conditional
 * request, cache, single flight, computation, sending), the computation and the JSON serialisation in a worker.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import type { ZodTypeProvider } from "fastify-type-provider-zod";
import { z } from "zod";
import type { ComputeKind, RequestBody } from "../../workers/tasks.js";
import { ComputeExchange, preflight } from "../exchange.js";
import { requireJson } from "../plugins/errors.js";
import {
  AnalysisResponse, makeSchemas, PathsResponse, ProblemResponse, ReportResponse, ScheduleResponse, SimsResponse, WeightsResponse,
} from "../schemas.js";
import type { AppContext } from "./context.js";
import { answerAsync, ASYNC_NOTE, JobStatus } from "./jobs.js";

const errorResponses = {
  400: ProblemResponse, 401: ProblemResponse, 413: ProblemResponse, 415: ProblemResponse, 422: ProblemResponse,
  429: ProblemResponse, 503: ProblemResponse, 504: ProblemResponse,
};

const SIMS_NOTE =
  " Headers: x-simulation-seed (the u64 seed used, decimal; send it as `seed` to replay the response byte for byte), " +
  "x-simulation-model (independent|correlated|bootstrap), x-simulation-generator (xoshiro256starstar+splitmix64+polar); " +
  "x-simulation-drift (only with drift \"zero\") and x-simulation-block-length (only with model \"bootstrap\"). " +
  "Each run draws i.i.d. normal daily log-returns with each asset's training mean and standard deviation (or, with " +
  'model "correlated", multivariate normal with the training mean vector and covariance; with model "bootstrap", ' +
  "whole training days resampled in blocks), compounds them from the " +
  "first test-day close, and values the selected portfolios on them.";
const COMMON_NOTE =
  " Headers: x-tickers (the tickers in their canonical form, request order); x-covariance-fallback (the series whose " +
  "risk parity used the shrunk covariance because equal risk contributions do not exist on the sample one); etag " +
  "(strong, from the request, the store version and the engine version: send it back in if-none-match to get 304 " +
  "without a recomputation while neither changed).";

const REBALANCE_NOTE =
  " With rebalance (a calendar rule or every k test days) the header x-rebalance-count gives the number of rebalance " +
  "dates; the body keeps its shape, its values rebalanced (docs/method.md §7.2).";

/** The handler of every compute route: one exchange of named steps (src/http/exchange.ts). */
export function computeHandler(ctx: AppContext, kind: ComputeKind, route: string) {
  // (the exchange has sent the reply when `answer` resolves)
  return async (req: FastifyRequest, reply: FastifyReply): Promise<void> => {
    // what the request must pass before it is queued or computed, however it is answered
    preflight(ctx, kind, req.body as RequestBody);
    // Prefer: respond-async (RFC 7240): the validated request becomes a job (routes/jobs.ts), 202.
    if (await answerAsync(ctx, kind, req, reply)) return;
    await new ComputeExchange(ctx, kind, route, req, reply).answer();
  };
}

/** The compute routes on `scope`, the optimiser plugin registered at /v1/optimiser (plugins/optimiser.ts). */
export function optimiserRoutes(scope: FastifyInstance, ctx: AppContext, opts: { report: boolean }): void {
  const { OptimiserBody, SimsBody: SimsSchema, AnalysisBody, ReportBody } = makeSchemas(ctx.limits);
  const r = scope.withTypeProvider<ZodTypeProvider>();

  const route = (kind: ComputeKind, summary: string, response: z.ZodType, body: z.ZodType = OptimiserBody) => {
    r.post(`/${kind}`, {
      config: { computeKind: kind },
      preParsing: requireJson,
      schema: {
        summary,
        description: summary + COMMON_NOTE + (kind === "sims" ? SIMS_NOTE : "") + (kind === "weights" ? "" : REBALANCE_NOTE) + ASYNC_NOTE,
        tags: ["optimiser"],
        security: [{ apiKey: [] }],
        body,
        response: { 200: response, 202: JobStatus, 304: z.null().describe("Not modified: the etag sent in if-none-match is current."), ...errorResponses },
      },
    }, computeHandler(ctx, kind, `POST /v1/optimiser/${kind}`));
  };

  route("weights", "The long-only weight vectors (each selected strategy × daily, weekly, monthly returns; PathLit's " +
    "seven strategies by default): series id → N weights in request ticker order.", WeightsResponse);
  route("paths", "The buy-and-hold value series of 100,000 USD over the test period, one per series.", PathsResponse);
  route("sims", "The series valued on simulated test-period prices, run_1 … run_n.", SimsResponse, SimsSchema);
  route("schedule", "The weights traded over the test period: the purchase, then each rebalance date's weights per " +
    "series (strategies and own portfolios), with each trade's turnover and costs. Buy and hold: the purchase alone.",
    ScheduleResponse);
  route("analysis", "The tables an analyst reads first, per series of the paths: calendar returns (years and months, " +
    "best and worst year), the deepest drawdown episodes with their dates, recovery and the ulcer index (docs/method.md " +
    "§7.4), significance: stationary-bootstrap intervals of the annualised return, volatility, Sharpe and maximum " +
    "drawdown, the probabilistic and deflated Sharpe ratios and the Sharpe difference to a base with its Ledoit–Wolf " +
    "HAC p-value, Holm-adjusted (§7.5), the risk attribution at each weights date (§7.6) and, with `factors`, each " +
    "series' OLS on the factors' returns with Newey–West t statistics (§7.7). Same body as /paths plus `sections`, " +
    "`top`, `confidence`, `bootstrap_runs`, `base`, `sharpe_benchmark`, `seed`, `risk_free` and `factors`.", AnalysisResponse, AnalysisBody);
  if (opts.report) {
    route("report", "Summary statistics per strategy of the paths (final value, returns, volatility, Sharpe, drawdown, " +
      "Sortino, Calmar, historical 95 % VaR and CVaR of the daily returns). With `risk_free`, Sharpe, Sortino and alpha " +
      "use excess returns (docs/method.md §7.6).",
      ReportResponse, ReportBody);
  }
}
