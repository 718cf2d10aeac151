/**
 * API keys (docs/spec.md §7): the `x-api-key` header is hashed with SHA-256 and compared with every configured hash with
 * crypto.timingSafeEqual, without an early exit, so a missing, unknown or valid key costs the same work. The key is
 * never logged (the logger redacts the header); requests carry only a short id derived from the hash.
 *
 * Requests without a valid key are limited per client address (issue 20): `UNAUTHENTICATED_PER_MINUTE` per address
 * per fixed one-minute window, counted in this process only (no Redis round trip for them), past it 429 RATE_LIMITED
 * with retry-after instead of 401. Decided in onRequest, before the body is read. A valid key is never refused by
 * this limit, whatever its address did (a misconfigured client behind the same NAT must not lock out the others).
 * The address is `req.ip`: the peer, or with TRUST_PROXY the client named by X-Forwarded-For (docs/deploy.md).
 */
import { timingSafeEqual } from "node:crypto";
import type { FastifyInstance, FastifyRequest } from "fastify";
import { hashKey } from "../../config.js";
import { folioError } from "../../errors.js";

declare module "fastify" {
  interface FastifyRequest {
    /** First 16 hex digits of the SHA-256 of the caller's key (rate-limit bucket and log field); "" before auth. */
    apiKeyId: string;
  }
}

/** Constant-work check of a presented key against the configured hashes; returns the key id or undefined. */
export function checkKey(presented: string | string[] | undefined, hashes: readonly Buffer[]): string | undefined {
  const value = typeof presented === "string" ? presented : "";
  const h = hashKey(value);
  let match = 0;
  for (const k of hashes) match |= timingSafeEqual(h, k) ? 1 : 0;
  return match === 1 && value !== "" ? h.toString("hex").slice(0, 16) : undefined;
}

/** Most addresses tracked at once by `AddressWindows` (default); beyond it new addresses share one overflow bucket. */
export const MAX_TRACKED_ADDRESSES = 50_000;

/** The bucket every address shares while the table is full (so memory stays bounded and a spread flood is limited too). */
export const OVERFLOW_BUCKET = "(overflow)";

/**
 * Fixed one-minute windows per client address, in bounded memory: entries whose window has passed are swept (at most
 * once per window, and whenever the table is full), and while the table holds `maxAddresses` live entries a new
 * address is counted in the shared OVERFLOW_BUCKET instead of getting its own entry.
 */
export class AddressWindows {
  private readonly windows = new Map<string, { count: number; resetAt: number }>();
  private nextSweep = 0;

  constructor(private readonly windowMs = 60_000, private readonly maxAddresses = MAX_TRACKED_ADDRESSES) {}

  /** Addresses tracked now (tests). */
  get size(): number {
    return this.windows.size;
  }

  /** Count one request from `address`; returns the count in its window, the ms left, and the bucket used. */
  hit(address: string, now = Date.now()): { count: number; ttl: number; bucket: string } {
    if (now >= this.nextSweep) this.sweep(now);
    let bucket = address;
    let w = this.windows.get(bucket);
    if (w === undefined && this.windows.size >= this.maxAddresses) {
      this.sweep(now);
      if (this.windows.size >= this.maxAddresses) {
        bucket = OVERFLOW_BUCKET;
        w = this.windows.get(bucket);
      }
    }
    if (w === undefined || w.resetAt <= now) {
      w = { count: 0, resetAt: now + this.windowMs };
      // The overflow bucket may exceed the cap by this one entry.
      this.windows.set(bucket, w);
    }
    w.count++;
    return { count: w.count, ttl: w.resetAt - now, bucket };
  }

  private sweep(now: number): void {
    for (const [k, w] of this.windows) if (w.resetAt <= now) this.windows.delete(k);
    this.nextSweep = now + this.windowMs;
  }
}

export interface AuthOptions {
  /** Requests without a valid key per client address per minute; past it → 429 (default: unlimited, 401 each). */
  unauthenticatedPerMinute?: number;
  /** Window length (default one minute; tests shorten it). */
  windowMs?: number;
  /** Most addresses tracked (default MAX_TRACKED_ADDRESSES). */
  maxAddresses?: number;
}

/** Add the key check to every route of `scope` (an encapsulated context, e.g. the /v1 prefix). Returns the address table. */
export function installAuth(scope: FastifyInstance, hashes: readonly Buffer[], opts: AuthOptions = {}): AddressWindows | undefined {
  const auth = keyCheck(hashes, opts);
  auth.install(scope);
  return auth.addresses;
}

/** One key check (one table of keyless addresses), installable on several encapsulated scopes. */
export interface KeyCheck {
  /** The keyless requests per address (absent: no per-address limit). */
  addresses: AddressWindows | undefined;
  /** The check as the first onRequest hook of `scope`'s routes from here on. */
  install(scope: FastifyInstance): void;
}

/** The key check of `hashes`: a valid key sets `req.apiKeyId`; none or a wrong one is 401 (429 past the address limit). */
export function keyCheck(hashes: readonly Buffer[], opts: AuthOptions = {}): KeyCheck {
  const limit = opts.unauthenticatedPerMinute;
  const addresses = limit === undefined ? undefined : new AddressWindows(opts.windowMs ?? 60_000, opts.maxAddresses ?? MAX_TRACKED_ADDRESSES);
  const budget = `${limit} requests without a valid key from one address (UNAUTHENTICATED_PER_MINUTE)`;
  const check = async (req: FastifyRequest): Promise<void> => {
    const header = req.headers["x-api-key"];
    const id = checkKey(header, hashes);
    if (id === undefined) {
      if (addresses !== undefined) {
        const w = addresses.hit(req.ip ?? "");
        if (w.count > limit!) {
          const retryAfter = Math.max(1, Math.ceil(w.ttl / 1000));
          throw folioError("RATE_LIMITED", { retryAfter, budget, keyless: true }, { retryAfter });
        }
      }
      throw header === undefined || header === "" ? folioError("MISSING_API_KEY", {}) : folioError("INVALID_API_KEY", {});
    }
    req.apiKeyId = id;
    req.log = req.log.child({ key: id });
  };
  return {
    addresses,
    install(scope) {
      if (!scope.hasRequestDecorator("apiKeyId")) scope.decorateRequest("apiKeyId", "");
      scope.addHook("onRequest", check);
    },
  };
}
