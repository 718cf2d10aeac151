/**
 * The body of a sims job's part (src/jobs/sims-parts.ts), written by the worker (`encodeSimsPart`) and read by the
 * last step (`simsPartHeadBytes`, `decodeSimsPart`): f64-aligned, [G][G growth values][M][M drawn means][J][J bytes
 * of JSON, padded to 8][the block's members of the sims body]; G, M, J as f64 (little endian). The JSON holds the
 * metadata (`ResponseMeta` but the warnings) and the computation's ids, assets, seed (decimal), model, drift, block
 * length and jitter. The members come last so that Redis copies them into the body from an offset (src/jobs/redis.ts
 * `composeBody`) without the head.
 */
import type { Computation, ResponseMeta } from "./respond.js";

/** What a block's metadata carries besides its members (see the module comment). */
export interface SimsPartHead {
  growth: Float64Array;
  means: Float64Array;
  meta: ResponseMeta;
  computation: Pick<Computation, "ids" | "assets" | "model" | "drift" | "blockLength" | "choleskyJitter"> & { seed: string };
}

const F64 = 8;

/** A block's part body (module comment's layout) from `simsBlock`'s result. */
export function encodeSimsPart(head: SimsPartHead, members: Uint8Array): Uint8Array {
  const json = new TextEncoder().encode(JSON.stringify({ meta: head.meta, computation: head.computation }));
  const G = head.growth.length;
  const M = head.means.length;
  const jsonAt = (3 + G + M) * F64;
  const membersAt = jsonAt + Math.ceil(json.length / F64) * F64;
  const out = new Uint8Array(membersAt + members.length);
  const f = new Float64Array(out.buffer, 0, jsonAt / F64);
  f[0] = G;
  f.set(head.growth, 1);
  f[1 + G] = M;
  f.set(head.means, 2 + G);
  f[2 + G + M] = json.length;
  out.set(json, jsonAt);
  out.set(members, membersAt);
  return out;
}

/** The length of a part body's head (everything before its members), from its first bytes. */
export function simsPartHeadBytes(body: Uint8Array): number {
  const f = (i: number) => new DataView(body.buffer, body.byteOffset + i * F64, F64).getFloat64(0, true);
  const G = f(0);
  const M = f(1 + G);
  const J = f(2 + G + M);
  return (3 + G + M) * F64 + Math.ceil(J / F64) * F64;
}

/** A part body's head (`encodeSimsPart`): its growth, drawn means, metadata and computation. */
export function decodeSimsPart(head: Uint8Array): SimsPartHead {
  const view = new DataView(head.buffer, head.byteOffset, head.byteLength);
  const f = (i: number) => view.getFloat64(i * F64, true);
  const G = f(0);
  const growth = Float64Array.from({ length: G }, (_, i) => f(1 + i));
  const M = f(1 + G);
  const means = Float64Array.from({ length: M }, (_, i) => f(2 + G + i));
  const J = f(2 + G + M);
  const jsonAt = (3 + G + M) * F64;
  const { meta, computation } = JSON.parse(new TextDecoder().decode(head.subarray(jsonAt, jsonAt + J))) as
    Pick<SimsPartHead, "meta" | "computation">;
  return { growth, means, meta, computation };
}

