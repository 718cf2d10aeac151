/**
 * The arena. The host (src/engine/wasm.ts) calls `reset()` at the start of every top-level computation, then
 * `alloc()` for every input/output block, writes inputs through views, calls a kernel, and copies results out.
 * Kernels may call `heap.alloc` for scratch; it is released by the next `reset()`.
 */

/** Allocate `bytes` bytes (16-byte aligned by the stub runtime) and return the byte offset. */
export function alloc(bytes: usize): usize {
  return heap.alloc(bytes);
}

/** Release everything allocated since the module started (stub runtime bump allocator). */
export function reset(): void {
  heap.reset();
}

/** Scratch allocation for kernels: `n` f64 values, 16-byte aligned. */
// @ts-ignore: decorator
@inline export function scratchF64(n: i32): usize {
  return heap.alloc(<usize>(n < 1 ? 1 : n) << 3);
}

/** Scratch allocation for kernels: `n` i32 values. */
// @ts-ignore: decorator
@inline export function scratchI32(n: i32): usize {
  return heap.alloc(<usize>(n < 1 ? 1 : n) << 2);
}
