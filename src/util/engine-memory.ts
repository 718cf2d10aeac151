/**
 * The engine memory a worker (or a library user's engine) keeps between computations by default, 256 MiB: the
 * engine's recycle threshold (src/engine/wasm.ts RECYCLE_ABOVE_BYTES) and WORKER_KEEP_MEMORY_BYTES's default
 * (src/config.ts), one number. In a module of its own, without imports, so that the engine does not load the
 * configuration reader and zod with it (≈ 100 ms of every worker's start, measured 2026-12-04).
 */
export const DEFAULT_WORKER_KEEP_MEMORY_BYTES = 256 * 2 ** 20;
