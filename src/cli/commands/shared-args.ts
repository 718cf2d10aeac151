/** Ticker arguments: `AAA BBB` or `AAA,BBB` (or a mix); empty pieces are dropped. */
export function splitTickers(args: string[]): string[] {
  return args.flatMap((a) => a.split(",")).map((t) => t.trim()).filter((t) => t.length > 0);
}
