/**
 * The simplex QP's Woodbury faces keep X_F's columns and M = δI + X_F X_Fᵀ as `dot`'s two lane sums between faces
 * (assembly/solvers/simplex-qp.ts `FaceSums`, `woodburyFace`): an asset appended to F is gathered and its pair added
 * in O(nf²) instead of X_F and M being formed afresh in O(nf·k) and O(nf²·k). The claim is "the same bits as forming
 * them afresh", so the reference is the engine before that change
 * (commit d7ec022, every face's M formed by one `dot` per entry): the gmvp, mdcp and mdp rows of these windows hashed
 * there. Counted on an instrumented build of the new code: N = 600 meets 360 Woodbury faces (13 formed from the
 * start, 174 with pairs appended, the rest with an odd tail only), N = 2,000 meets 1,038 (38, 492), across the three
 * frequencies; removals that reset the sums happen in both. A change of these hashes means the QP rows' bits moved.
 * Re-pinned once since: N = 2,000 at the multipliers' noise floor (docs/method.md §5.2, issue 30), which its monthly
 * solves meet (the anti-cycling rule fires there), so they stop earlier on the zero-variance face; up to that stop
 * the solve takes the same path through the same Woodbury faces as before, so the claim pinned is unchanged.
 * N = 600 never meets the floor and keeps its hash from d7ec022.
 */
import { createHash } from "node:crypto";
import { describe, expect, it } from "vitest";
import { createEngine } from "../../../src/index.js";
import { factorPrices } from "../../helpers/prices.js";

const PINNED: [N: number, seed: number, sha256: string][] = [
  [600, 1, "045f57ad0563b7120a2152347120c3acc973c42904cca5c5ebd53f7d6c40cd92"],
  [2000, 3000, "7fa7f145cb4285ba72c70f267b584cb1d0f9101a8314b15a825f7a666955787a"],
];

describe("Woodbury faces with M's lane sums kept between faces: the same bits as M formed afresh", () => {
  for (const [N, seed, sha] of PINNED) {
    it(`gmvp, mdcp and mdp at N = ${N} (seed ${seed}, T = 253): the rows hashed before the change`, async () => {
      const engine = await createEngine();
      const r = engine.weightsReport(factorPrices(253, N, seed), { strategies: ["gmvp", "mdcp", "mdp"] });
      expect(createHash("sha256").update(JSON.stringify(r.weights)).digest("hex")).toBe(sha);
    }, 60_000);
  }
});
