/**
 * The importer's option checks (`importPrices`, `importPricesToPostgres`), in the one validation vocabulary
 * (src/domain/problems.ts): a bad option is an INVALID_REQUEST whose problems point at the option
 * (`/format`), never a silently ignored or misread setting. Bad input DATA is not an error here: it is listed
 * in the import report.
 */
import { Problems } from "../../domain/problems.js";
import { IMPORT_FORMATS } from "./types.js";

/** An import's ticker prefix (`ImportOptions.prefix`): the symbols' characters and ":", at most 16. */
export const IMPORT_PREFIX_RE = /^[A-Za-z0-9.\-_^=:]{1,16}$/;

/** Throws INVALID_REQUEST listing every bad option of `importPrices`; unknown keys are refused like the engine's. */
export function checkImportOptions(options: unknown): void {
  const p = new Problems("options");
  if (options === undefined) return;
  if (typeof options !== "object" || options === null || Array.isArray(options)) {
    Problems.fail("", "options must be an object", "options");
  }
  const o = options as Record<string, unknown>;
  const accepted = ["format", "onProgress", "dryRun", "replace", "lockTimeoutMs", "prefix"];
  for (const [k, v] of Object.entries(o)) {
    if (v === undefined) continue;
    if (!accepted.includes(k)) p.add([k], `unknown option for import; accepted: ${accepted.join(", ")}`);
    else if (k === "format" && !(IMPORT_FORMATS as readonly unknown[]).includes(v)) {
      p.add([k], `must be one of ${IMPORT_FORMATS.map((f) => JSON.stringify(f)).join(", ")} (got ${JSON.stringify(v)})`);
    } else if (k === "onProgress" && typeof v !== "function") p.add([k], "must be a function");
    else if ((k === "dryRun" || k === "replace") && typeof v !== "boolean") p.add([k], `must be true or false (got ${JSON.stringify(v)})`);
    else if (k === "prefix" && !(typeof v === "string" && IMPORT_PREFIX_RE.test(v))) {
      p.add([k], `must be 1 to 16 of the characters A-Z a-z 0-9 . - _ ^ = : (e.g. "SK:"; got ${JSON.stringify(v)})`);
    } else if (k === "lockTimeoutMs" && !(typeof v === "number" && Number.isInteger(v) && v >= 0)) {
      p.add([k], `must be a whole number of milliseconds ≥ 0 (got ${JSON.stringify(v)})`);
    }
  }
  p.throwIfAny();
}
