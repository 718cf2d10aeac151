/**
 * Compression of a computed body inside the compute worker (src/http/encoding.ts chooses the coding; README
 * "Configuration", `COMPRESSION`): synchronous node:zlib calls, which block only this worker thread, never the event
 * loop. Brotli at quality 4 (text mode, size hint) or gzip at level 1.
 */
import { brotliCompressSync, constants, gzipSync } from "node:zlib";
import type { Coding, EncodingChoice } from "./tasks.js";

/** Bodies smaller than this stay uncompressed (unless the client refused identity). */
export const MIN_COMPRESS_BYTES = 1024;

/** The coding applied to a body of `size` bytes. */
export function codingFor(choice: EncodingChoice | undefined, size: number): Coding {
  if (choice === undefined) return "identity";
  return choice.force || size >= MIN_COMPRESS_BYTES ? choice.coding : "identity";
}

/**
 * `body` in `coding`, as a Uint8Array that owns its whole ArrayBuffer (so it can be transferred: zlib may return a
 * view into Node's shared buffer pool).
 */
export function compressBody(body: Uint8Array, coding: "br" | "gzip"): Uint8Array {
  const out = coding === "br"
    ? brotliCompressSync(body, {
      params: {
        [constants.BROTLI_PARAM_QUALITY]: 4,
        [constants.BROTLI_PARAM_MODE]: constants.BROTLI_MODE_TEXT,
        [constants.BROTLI_PARAM_SIZE_HINT]: body.byteLength,
      },
    })
    : gzipSync(body, { level: 1 });
  if (out.byteOffset === 0 && out.byteLength === out.buffer.byteLength && !(out.buffer instanceof SharedArrayBuffer)) {
    return out;
  }
  const own = new Uint8Array(out.byteLength);
  own.set(out);
  return own;
}
