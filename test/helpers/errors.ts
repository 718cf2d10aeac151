import { FolioError } from "../../src/errors.js";

/** Run `f`, expecting it to throw a FolioError, and return that error (any other outcome fails the test). */
export function failure(f: () => unknown): FolioError {
  try {
    f();
  } catch (e) {
    if (e instanceof FolioError) return e;
    throw e;
  }
  throw new Error("expected a FolioError");
}
