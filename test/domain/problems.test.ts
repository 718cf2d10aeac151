/** The Problems builder: {pointer, message} problems (RFC 6901 pointers), one INVALID_REQUEST, a capped list. */
import { describe, expect, it } from "vitest";
import { invalidRequest, MAX_LISTED_PROBLEMS, Problems, toPointer } from "../../src/domain/problems.js";
import { FolioError, toProblem } from "../../src/errors.js";

function thrown(f: () => void): FolioError {
  try {
    f();
  } catch (e) {
    return e as FolioError;
  }
  throw new Error("did not throw");
}

describe("Problems", () => {
  it("throws nothing when no problem was added", () => {
    expect(() => new Problems().throwIfAny()).not.toThrow();
  });

  it("throws one INVALID_REQUEST listing every problem as {pointer, message}, in order", () => {
    const p = new Problems("body").add("/tickers/2", "must be a string").add(["a/b", "c~d", 0], "is odd").add("", "must be an object");
    const e = thrown(() => p.throwIfAny());
    expect(e.code).toBe("INVALID_REQUEST");
    expect(e.status).toBe(400);
    expect(e.extras).toEqual({
      errors: [
        { pointer: "/tickers/2", message: "must be a string" },
        { pointer: "/a~1b/c~0d/0", message: "is odd" },
        { pointer: "", message: "must be an object" },
      ],
    });
    expect(e.detail).toBe(
      "The request does not match the schema: /tickers/2: must be a string; /a~1b/c~0d/0: is odd; (body): must be an object.");
  });

  it("lists at most MAX_LISTED_PROBLEMS and counts the rest, so an error body stays small", () => {
    const p = new Problems();
    for (let i = 0; i < 1000; i++) p.add(`/closes/${i}`, "must be > 0");
    expect(p.size).toBe(1000);
    const e = thrown(() => p.throwIfAny());
    expect((e.extras.errors as unknown[]).length).toBe(MAX_LISTED_PROBLEMS);
    expect(e.extras.errors_total).toBe(1000);
    expect(e.detail).toMatch(new RegExp(`; and ${1000 - MAX_LISTED_PROBLEMS} more\\.$`));
    expect(JSON.stringify(toProblem(e)).length).toBeLessThan(4000);
  });

  it("builds the same error from a list (invalidRequest) as from the builder", () => {
    const list = [{ pointer: "/seed", message: "must be an integer (got 1.5)" }];
    const a = invalidRequest(list, "options");
    const b = thrown(() => Problems.fail("/seed", "must be an integer (got 1.5)", "options"));
    expect(b.detail).toBe(a.detail);
    expect(b.extras).toEqual(a.extras);
  });

  it("escapes pointer tokens as RFC 6901 says (~ first, then /)", () => {
    expect(toPointer(["~1", "/"])).toBe("/~01/~1");
    expect(toPointer([])).toBe("");
  });
});
