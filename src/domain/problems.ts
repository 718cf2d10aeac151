/**
 * The one validation vocabulary: every INVALID_REQUEST, from the library checks, the HTTP schemas, the store's
 * alignment and the CLI, carries its problems as `{ pointer, message }` — a JSON pointer (RFC 6901) into the input
 * (`/tickers/2`, `/closes/3/1`, `""` for the input as a whole) and a message that reads after it
 * (`must be a string`). docs/errors.md documents the shape.
 *
 * Collect with `Problems.add`, then `throwIfAny()`: one INVALID_REQUEST lists them all (at most MAX_LISTED_PROBLEMS,
 * so an error body stays small whatever the input; the total is kept in `errors_total` when the list is cut).
 */
import { folioError, isFolioError, type FolioError, type PointerProblem } from "../errors.js";

export type { PointerProblem } from "../errors.js";

/** Problems listed in one error; the rest are counted, not listed. */
export const MAX_LISTED_PROBLEMS = 20;

/** One reference token of a JSON pointer, escaped (`~` → `~0`, `/` → `~1`, RFC 6901 §3). */
export function escapeToken(token: PropertyKey): string {
  return String(token).replace(/~/g, "~0").replace(/\//g, "~1");
}

/** The JSON pointer of a path: `["tickers", 2]` → `/tickers/2`, `[]` → `""`. */
export function toPointer(path: readonly PropertyKey[]): string {
  let out = "";
  for (const t of path) out += "/" + escapeToken(t);
  return out;
}

/**
 * The INVALID_REQUEST error for a list of problems: at most MAX_LISTED_PROBLEMS are listed; when `total` (default:
 * the list's length) is larger, the detail says how many more and `errors_total` holds it. `root` names the input as
 * a whole in the detail (pointer "").
 */
export function invalidRequest(problems: readonly PointerProblem[], root = "request", total = problems.length): FolioError<"INVALID_REQUEST"> {
  const listed = problems.slice(0, MAX_LISTED_PROBLEMS).map((p) => ({ pointer: p.pointer, message: p.message }));
  const extras: Record<string, unknown> = { errors: listed };
  if (total > listed.length) extras.errors_total = total;
  return folioError("INVALID_REQUEST", { problems: listed, root, total }, extras);
}

/**
 * An INVALID_REQUEST with each listed pointer mapped by `to` (e.g. under /body, as POST /v1/jobs points at a job's
 * body, and back); the count of problems kept. Any other error as it is.
 */
export function withPointers(e: unknown, to: (pointer: string) => string): unknown {
  if (!isFolioError(e) || e.code !== "INVALID_REQUEST" || !Array.isArray(e.extras.errors)) return e;
  const listed = e.extras.errors as readonly PointerProblem[];
  const total = (e.extras.errors_total as number | undefined) ?? listed.length;
  return invalidRequest(listed.map((p) => ({ pointer: to(p.pointer), message: p.message })), "body", total);
}

/** Collects problems, then throws them as one INVALID_REQUEST. */
export class Problems {
  private readonly items: PointerProblem[] = [];
  private total = 0;

  /** @param root how the detail names the input as a whole (pointer `""`): "body", "options", "prices", … */
  constructor(private readonly root = "request") {}

  /** Add a problem at a pointer (already escaped) or at a path of tokens. */
  add(at: string | readonly PropertyKey[], message: string): this {
    // Only the listed ones are kept: a matrix with a million bad cells costs one counter, not a million objects.
    if (this.items.length < MAX_LISTED_PROBLEMS) this.items.push({ pointer: typeof at === "string" ? at : toPointer(at), message });
    this.total++;
    return this;
  }

  /** Problems added (listed or not). */
  get size(): number {
    return this.total;
  }

  get list(): readonly PointerProblem[] {
    return this.items;
  }

  toError(): FolioError<"INVALID_REQUEST"> {
    return invalidRequest(this.items, this.root, this.total);
  }

  throwIfAny(): void {
    if (this.total > 0) throw this.toError();
  }

  /** Throw one problem at once. */
  static fail(at: string | readonly PropertyKey[], message: string, root?: string): never {
    throw new Problems(root).add(at, message).toError();
  }
}
