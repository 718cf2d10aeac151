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
  highWater = 0;
}

/** The largest heap end seen at an `arenaRelease` since the last `reset` (byte offset). */
let highWater: usize = 0;

/** The current end of the heap (byte offset; allocates nothing: the probe block is freed again). */
function heapEnd(): usize {
  const p = heap.alloc(0);
  const end = p + load<usize>(p - sizeof<usize>());
  heap.free(p);
  return end;
}

/**
 * The arena's high-water mark since the last `reset()`: the largest byte offset the heap reached, whether its
 * blocks were later released (`arenaRelease` records the end before releasing) or are still live. The offset
 * only falls at a release or a reset, so this is the true peak of the computation (inputs and outputs
 * included). For the benchmarks and the memory tests (the host's protocol: src/engine/wasm.ts); O(1).
 */
export function arenaHighWater(): usize {
  if (ASC_RUNTIME != 0) return 0; // the block layout read by heapEnd is the stub runtime's
  const end = heapEnd();
  return end > highWater ? end : highWater;
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

/**
 * Arena mark/release for long kernels (kWeightSet), so scratch of one strategy is reused by the next instead of
 * growing linear memory (N = 1000: ≈ 40 MB per frequency otherwise).
 * Method: specific to the stub runtime (asconfig `runtime: stub`), whose `heap.free` discards a block only when it
 * is the last one (`ptr + mmInfo == offset`). `arenaMark` allocates an empty block; `arenaRelease` widens that
 * block's size field (the usize just before the payload) to reach the current end of the heap and frees it, which
 * moves the heap offset back to the mark. Every pointer allocated after the mark is invalid afterwards.
 * With any other runtime (`ASC_RUNTIME` ≠ 0) release is a no-op (memory then grows as without it).
 * Complexity: O(1).
 */
export function arenaMark(): usize {
  return heap.alloc(0);
}

/** Release everything allocated since `mark` (see `arenaMark`). */
export function arenaRelease(mark: usize): void {
  if (ASC_RUNTIME != 0) return; // only the stub runtime (0) has this block layout: elsewhere, release nothing
  const end = heap.alloc(0); // now the last block
  const endOffset = end + load<usize>(end - sizeof<usize>());
  if (endOffset > highWater) highWater = endOffset;
  store<usize>(mark - sizeof<usize>(), endOffset - mark);
  heap.free(mark);
}
