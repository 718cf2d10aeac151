/**
 * The module's ABI: the only exported entry points. Each kernel takes byte offsets into linear memory, sizes
 * (and strides where stated) and returns an i32 `Status`. The host allocates with `alloc` after `reset`.
 */
export { alloc, arenaHighWater, reset } from "./memory";
export * from "./abi/core";
export * from "./abi/weights";
export * from "./abi/sims";
export * from "./abi/rebalance";
export * from "./abi/clustered";
export * from "./abi/msr";
export * from "./abi/mincvar";
export * from "./abi/stats";
