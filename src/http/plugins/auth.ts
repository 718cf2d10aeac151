/**
 * API keys (docs/spec.md §7): the `x-api-key` header is hashed with SHA-256 and compared with every configured hash with
 * crypto.timingSafeEqual, without an early exit, so a missing, unknown or valid key costs the same work. The key is
 * never logged (the logger redacts the header); requests carry only a short id derived from the hash.
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

/** Add the key check to every route of `scope` (an encapsulated context, e.g. the /v1 prefix). */
export function installAuth(scope: FastifyInstance, hashes: readonly Buffer[]): void {
  if (!scope.hasRequestDecorator("apiKeyId")) scope.decorateRequest("apiKeyId", "");
  scope.addHook("onRequest", async (req: FastifyRequest) => {
    const header = req.headers["x-api-key"];
    const id = checkKey(header, hashes);
    if (id === undefined) {
      throw header === undefined || header === "" ? folioError("MISSING_API_KEY", {}) : folioError("INVALID_API_KEY", {});
    }
    req.apiKeyId = id;
    req.log = req.log.child({ key: id });
  });
}
