/**
 * One large body at a time per key (issue 20 item 3; src/http/response-budget.ts `SendTurns`): a key retrying on
 * many connections must not have the event loop write several of its large bodies at once beside other keys'
 * responses. Over real sockets (a Fastify app on 127.0.0.1 whose route sends a body of a given size and fill byte
 * through `ResponseBudget.payload`, and raw HTTP/1.1 clients that can pause, resume or go away):
 * a) a key's second large body sends nothing until its first has pushed its last byte;
 * b) another key's large body goes out while the first key's second body waits;
 * c) a waiting body whose client goes away leaves the queue and is released; the key's next body still goes out;
 * d) a reader holding the key's turn that stops reading is dropped by the read-rate rule, then the waiting body goes
 *    out (and was not itself dropped while waiting, though it read nothing for more than a window);
 * e) a small body of the key is not delayed while a large one streams;
 * plus: a waiting body's head is sent at once (a fetch client awaiting both heads before reading gets both); a
 * waiting body counts against MAX_PENDING_RESPONSE_BYTES as before; requests without a key share one lane; through
 * the real service (ComputeExchange, worker-computed sims) the turn is the request's API key's; and `SendTurns`
 * itself (FIFO per key, leaving while waiting, state removed) against a plain model under random operations
 * (fast-check).
 *
 * Order is asserted on the bodies' pushes to the response (each streamed body's `push` is observed: "A1 first",
 * "A1 last", …, in the order they happened on the one event loop) and on what the clients received at checkpoints
 * where a paused client still holds most of its body, never on sleeps alone. A paused client stops the server's
 * writes once the loopback socket buffers are full (a few MB); the bodies are 24 MiB so that most of a paused
 * client's body is still unsent, which each test checks before relying on it.
 */
import { connect, type Socket } from "node:net";
import type { Readable } from "node:stream";
import Fastify, { type FastifyInstance } from "fastify";
import fc from "fast-check";
import { afterEach, describe, expect, it } from "vitest";
import { installErrorHandling } from "../../src/http/plugins/errors.js";
import { ResponseBudget, SendTurns, STREAM_THRESHOLD, type ResponseBudgetOptions } from "../../src/http/response-budget.js";
import { closeTestApp, createTestApp, OTHER_KEY, TEST_KEY, type TestApp, until } from "../helpers/app.js";

const SIZE = 24 * 1024 * 1024;
const SMALL = 64 * 1024;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

interface Served {
  app: FastifyInstance;
  port: number;
  budget: ResponseBudget;
  /** "<id> first" / "<id> last": a streamed body's first and last push, in the order they happened. */
  events: string[];
}

let served: Served | undefined;
/** Every client socket opened by the current test (destroyed after it, so a failed test leaves no paused reader behind). */
const sockets: Socket[] = [];
afterEach(async () => {
  for (const s of sockets.splice(0)) s.destroy();
  await served?.app.close();
  served = undefined;
});

/**
 * An app whose GET /body/:id?size=&fill= sends `size` bytes of `fill` through a ResponseBudget with these options,
 * under the key in header x-key ("" without it), recording the pushes of every streamed body in `events`.
 */
async function serve(opts: Partial<ResponseBudgetOptions> = {}): Promise<Served> {
  const budget = new ResponseBudget({ maxPendingBytes: 1024 * 1024 * 1024, minReadBytesPerSecond: 0, windowMs: 1000, ...opts });
  const events: string[] = [];
  const app = Fastify({ logger: false, forceCloseConnections: true });
  installErrorHandling(app, { bodyLimit: 1024 });
  app.get<{ Params: { id: string }; Querystring: { size: string; fill: string } }>("/body/:id", (req, reply) => {
    const size = Number(req.query.size);
    const payload = budget.payload(reply, Buffer.alloc(size, Number(req.query.fill)), String(req.headers["x-key"] ?? ""));
    if (payload !== null && typeof (payload as Readable).pipe === "function") observePushes(payload as Readable, req.params.id, size, events);
    return reply.type("application/octet-stream").send(payload);
  });
  await app.listen({ host: "127.0.0.1", port: 0 });
  const address = app.server.address();
  if (address === null || typeof address === "string") throw new Error("no port");
  served = { app, port: address.port, budget, events };
  return served;
}

/** Record the first and the last data push of `stream` (the order in which the bodies are handed to the response). */
function observePushes(stream: Readable, id: string, size: number, events: string[]): void {
  const push = stream.push.bind(stream);
  let pushed = 0;
  stream.push = ((chunk: Buffer | null) => {
    if (chunk !== null) {
      if (pushed === 0) events.push(`${id} first`);
      pushed += chunk.length;
      if (pushed >= size) events.push(`${id} last`);
    }
    return push(chunk);
  }) as typeof stream.push;
}

interface Client {
  socket: Socket;
  /** Body bytes received so far (0 before the head is complete). */
  received(): number;
  /** Whether the response head has arrived. */
  headed(): boolean;
  /** At the connection's close: status, content-length, body bytes received, whether every byte was the fill. */
  done: Promise<{ status: number; contentLength: number; bodyBytes: number; allFill: boolean }>;
}

/**
 * GET /body/`id` of `size` bytes of `fill` under `key` on a raw socket (connection: close), paused from the start
 * when `paused` (nothing is read until `socket.resume()`).
 */
function get(port: number, id: string, key: string | undefined, size: number, fill: number, paused = false): Client {
  return rawRequest(port, `GET /body/${id}?size=${size}&fill=${fill} HTTP/1.1\r\nhost: 127.0.0.1\r\n` +
    `${key === undefined ? "" : `x-key: ${key}\r\n`}connection: close\r\n\r\n`, fill, paused);
}

/**
 * Send `request` (a whole HTTP/1.1 request) on a raw socket and count the response's body bytes, checking them
 * against `fill` (NaN: not checked, `allFill` is then false); paused from the start when `paused`.
 */
function rawRequest(port: number, request: string, fill: number, paused: boolean): Client {
  const socket = connect(port, "127.0.0.1");
  sockets.push(socket);
  let head = "";
  let headBuf = Buffer.alloc(0);
  let bodyBytes = 0;
  let allFill = true;
  const pattern = Buffer.alloc(256 * 1024, fill);
  const onBody = (b: Buffer) => {
    bodyBytes += b.length;
    for (let i = 0; i < b.length; i += pattern.length) {
      const part = b.subarray(i, Math.min(b.length, i + pattern.length));
      if (!part.equals(pattern.subarray(0, part.length))) allFill = false;
    }
  };
  socket.on("data", (d: Buffer) => {
    if (head !== "") return onBody(d);
    headBuf = Buffer.concat([headBuf, d]);
    const end = headBuf.indexOf("\r\n\r\n");
    if (end < 0) return;
    head = headBuf.subarray(0, end).toString("latin1");
    onBody(headBuf.subarray(end + 4));
  });
  socket.on("error", () => undefined);
  if (paused) socket.pause();
  socket.once("connect", () => socket.write(request));
  const done = new Promise<{ status: number; contentLength: number; bodyBytes: number; allFill: boolean }>((resolve) => {
    socket.once("close", () => resolve({
      status: Number(head.match(/^HTTP\/1\.1 (\d{3})/)?.[1] ?? 0),
      contentLength: Number(head.match(/\r\ncontent-length: (\d+)/i)?.[1] ?? -1),
      bodyBytes, allFill,
    }));
  });
  return { socket, received: () => bodyBytes, headed: () => head !== "", done };
}

/** Whether `later` happened after `earlier` in `events` (both present). */
function after(events: string[], later: string, earlier: string): boolean {
  const a = events.indexOf(earlier);
  const b = events.indexOf(later);
  return a >= 0 && b > a;
}

describe("one large body at a time per key", () => {
  it("a) sends a key's second large body only after its first has pushed its last byte; the waiting one counts against the budget", async () => {
    const { port, budget, events } = await serve();
    const a1 = get(port, "A1", "A", SIZE, 1, true);
    await until(() => events.includes("A1 first"), "A1 streaming");
    const a2 = get(port, "A2", "A", SIZE, 2);
    await until(() => budget.stats.waitingForTurn === 1, "A2 waiting for A's turn");
    // A2 is admitted (counted) but sends nothing while A1's paused client holds most of A1 unsent.
    expect(budget.stats.pendingBytes).toBe(2 * SIZE);
    // Its head is sent at once (status and content-length); only the body waits.
    await until(() => a2.headed(), "A2's head");
    await sleep(200);
    expect(events).not.toContain("A1 last");
    expect(events).not.toContain("A2 first");
    expect(a2.received()).toBe(0);

    a1.socket.resume();
    const [r1, r2] = await Promise.all([a1.done, a2.done]);
    expect(r1).toEqual({ status: 200, contentLength: SIZE, bodyBytes: SIZE, allFill: true });
    expect(r2).toEqual({ status: 200, contentLength: SIZE, bodyBytes: SIZE, allFill: true });
    expect(events).toEqual(["A1 first", "A1 last", "A2 first", "A2 last"]);
    expect(budget.stats).toMatchObject({ pendingBytes: 0, waitingForTurn: 0, streamed: 2, droppedSlow: 0 });
  });

  it("b) another key's large body goes out while key A's second body waits", async () => {
    const { port, budget, events } = await serve();
    const a1 = get(port, "A1", "A", SIZE, 1, true);
    await until(() => events.includes("A1 first"), "A1 streaming");
    const a2 = get(port, "A2", "A", SIZE, 2);
    await until(() => budget.stats.waitingForTurn === 1, "A2 waiting");
    const b1 = get(port, "B1", "B", SIZE, 3);
    const rb = await b1.done;
    expect(rb).toEqual({ status: 200, contentLength: SIZE, bodyBytes: SIZE, allFill: true });
    // B1 went out whole while A1 was still unfinished and A2 still waiting.
    expect(events).toEqual(["A1 first", "B1 first", "B1 last"]);
    expect(a2.received()).toBe(0);
    expect(budget.stats.waitingForTurn).toBe(1);

    a1.socket.resume();
    expect((await a1.done).bodyBytes).toBe(SIZE);
    expect(await a2.done).toEqual({ status: 200, contentLength: SIZE, bodyBytes: SIZE, allFill: true });
    expect(after(events, "A2 first", "A1 last")).toBe(true);
    expect(budget.stats).toMatchObject({ pendingBytes: 0, waitingForTurn: 0 });
  });

  it("c) a waiting body whose client goes away is released at once, and the key's next body still goes out", async () => {
    const { port, budget, events } = await serve();
    const a1 = get(port, "A1", "A", SIZE, 1, true);
    await until(() => events.includes("A1 first"), "A1 streaming");
    const a2 = get(port, "A2", "A", SIZE, 2);
    await until(() => budget.stats.waitingForTurn === 1, "A2 waiting");
    const a3 = get(port, "A3", "A", SIZE, 3);
    await until(() => budget.stats.waitingForTurn === 2, "A3 waiting");
    expect(budget.stats.pendingBytes).toBe(3 * SIZE);

    a2.socket.destroy();
    await until(() => budget.stats.waitingForTurn === 1 && budget.stats.pendingBytes === 2 * SIZE, "A2 released while waiting");
    expect(events).not.toContain("A1 last");

    a1.socket.resume();
    expect((await a1.done).bodyBytes).toBe(SIZE);
    expect(await a3.done).toEqual({ status: 200, contentLength: SIZE, bodyBytes: SIZE, allFill: true });
    expect((await a2.done).bodyBytes).toBe(0);
    expect(events).toEqual(["A1 first", "A1 last", "A3 first", "A3 last"]);
    expect(budget.stats).toMatchObject({ pendingBytes: 0, waitingForTurn: 0, droppedSlow: 0 });
  });

  it("d) a reader holding the key's turn that stops reading is dropped; the waiting body, not read for over a window, then goes out", async () => {
    const windowMs = 500;
    const { port, budget, events } = await serve({ minReadBytesPerSecond: 32 * 1024, windowMs });
    const a1 = get(port, "A1", "A", SIZE, 1, true);
    await until(() => events.includes("A1 first"), "A1 streaming");
    const a2 = get(port, "A2", "A", SIZE, 2);
    await until(() => budget.stats.waitingForTurn === 1, "A2 waiting");
    const waitingSince = Date.now();

    // A1 never reads: its first window fills the socket buffers (far above 32 KiB/s × 0.5 s), its second takes
    // nothing, and it is dropped, about two windows after its turn came. A2 meanwhile waits, reading nothing, for
    // more than a whole window: a read-rate window counted from its arrival would have dropped it.
    await until(() => budget.stats.droppedSlow === 1, "A1 dropped as a slow reader");
    expect(Date.now() - waitingSince).toBeGreaterThan(windowMs);
    expect(events).not.toContain("A1 last");

    // A2's turn came with the drop, and it goes out whole.
    expect(await a2.done).toEqual({ status: 200, contentLength: SIZE, bodyBytes: SIZE, allFill: true });
    expect(budget.stats.droppedSlow).toBe(1);
    // A1, drained at full speed now, ends short: its connection was cut.
    a1.socket.resume();
    expect((await a1.done).bodyBytes).toBeLessThan(SIZE);
    expect(events).toEqual(["A1 first", "A2 first", "A2 last"]);
    expect(budget.stats).toMatchObject({ pendingBytes: 0, waitingForTurn: 0, droppedSlow: 1 });
  });

  it("e) a small body of the key is not delayed while a large one streams and another waits", async () => {
    const { port, budget, events } = await serve();
    const a1 = get(port, "A1", "A", SIZE, 1, true);
    await until(() => events.includes("A1 first"), "A1 streaming");
    const a2 = get(port, "A2", "A", SIZE, 2);
    await until(() => budget.stats.waitingForTurn === 1, "A2 waiting");
    expect(SMALL).toBeLessThanOrEqual(STREAM_THRESHOLD);
    const small = await get(port, "S", "A", SMALL, 4).done;
    expect(small).toEqual({ status: 200, contentLength: SMALL, bodyBytes: SMALL, allFill: true });
    expect(events).toEqual(["A1 first"]);
    expect(a2.received()).toBe(0);

    a1.socket.resume();
    await Promise.all([a1.done, a2.done]);
    expect(budget.stats).toMatchObject({ pendingBytes: 0, waitingForTurn: 0 });
  });

  it("keeps the admission rule: a body that would overshoot the budget with the waiting ones is refused (503 RESPONSE_BACKLOG)", async () => {
    const { port, budget, events } = await serve({ maxPendingBytes: 2.5 * SIZE });
    const a1 = get(port, "A1", "A", SIZE, 1, true);
    await until(() => events.includes("A1 first"), "A1 streaming");
    const a2 = get(port, "A2", "A", SIZE, 2);
    await until(() => budget.stats.waitingForTurn === 1, "A2 waiting");
    // A2 waits but still counts: A1 + A2 + A3 would be 3 bodies over a budget of 2.5, for any key.
    const a3 = await get(port, "A3", "A", SIZE, 3).done;
    const b1 = await get(port, "B1", "B", SIZE, 3).done;
    expect([a3.status, b1.status]).toEqual([503, 503]);
    expect(budget.stats.refused).toBe(2);

    a1.socket.resume();
    await Promise.all([a1.done, a2.done]);
    expect(budget.stats).toMatchObject({ pendingBytes: 0, waitingForTurn: 0, streamed: 2 });
  });

  it("lets a client that awaits the heads of two concurrent requests before reading either body get both (fetch)", async () => {
    const { port, budget } = await serve();
    const fetchBody = (id: string, fill: number) =>
      fetch(`http://127.0.0.1:${port}/body/${id}?size=${SIZE}&fill=${fill}`, { headers: { "x-key": "A" } });
    let timer: NodeJS.Timeout | undefined;
    const heads = await Promise.race([
      Promise.all([fetchBody("A1", 1), fetchBody("A2", 2)]),
      new Promise<never>((_, reject) => { timer = setTimeout(() => reject(new Error("no head for the waiting body")), 10_000); }),
    ]).finally(() => clearTimeout(timer));
    // Both heads arrived while A1's body was not yet read: A2's body was still waiting.
    expect(budget.stats.waitingForTurn).toBe(1);
    for (const [i, r] of heads.entries()) {
      expect(r.status).toBe(200);
      expect(Number(r.headers.get("content-length"))).toBe(SIZE);
      const body = Buffer.from(await r.arrayBuffer());
      expect(body.equals(Buffer.alloc(SIZE, i + 1))).toBe(true);
    }
    expect(budget.stats).toMatchObject({ pendingBytes: 0, waitingForTurn: 0 });
  });

  it("gives requests without a key one shared lane", async () => {
    const { port, budget, events } = await serve();
    const n1 = get(port, "N1", undefined, SIZE, 1, true);
    await until(() => events.includes("N1 first"), "N1 streaming");
    const n2 = get(port, "N2", undefined, SIZE, 2);
    await until(() => budget.stats.waitingForTurn === 1, "N2 waiting");
    expect(n2.received()).toBe(0);
    n1.socket.resume();
    await Promise.all([n1.done, n2.done]);
    expect(events).toEqual(["N1 first", "N1 last", "N2 first", "N2 last"]);
  });
});

describe("SendTurns", () => {
  it("serves each key first come first served, one at a time, and forgets a key once it has nothing left (random operations against a plain model)", () => {
    type Op = { enter: string } | { leave: number };
    const op: fc.Arbitrary<Op> = fc.oneof(
      fc.record({ enter: fc.constantFrom("a", "b", "c") }),
      fc.record({ leave: fc.nat(40) }),
    );
    fc.assert(fc.property(fc.array(op, { maxLength: 60 }), fc.array(fc.nat(40)), (ops, finalOrder) => {
      const turns = new SendTurns();
      const started: number[] = [];
      const bodies: { key: string; leave: () => void; left: boolean }[] = [];
      // The model: per key, the bodies not yet left in arrival order; the first holds the turn.
      const holders = () => {
        const byKey = new Map<string, number[]>();
        bodies.forEach((b, i) => {
          if (!b.left) byKey.set(b.key, [...(byKey.get(b.key) ?? []), i]);
        });
        return byKey;
      };
      const check = () => {
        const byKey = holders();
        const expectedStarted = new Set<number>();
        for (const ids of byKey.values()) expectedStarted.add(ids[0]);
        // Every holder has been started; nobody not yet left is started unless it holds the turn.
        for (const i of expectedStarted) expect(started).toContain(i);
        for (const i of started) if (!bodies[i].left) expect(expectedStarted.has(i)).toBe(true);
        expect(turns.keys).toBe(byKey.size);
        expect(turns.waiting).toBe([...byKey.values()].reduce((s, ids) => s + ids.length - 1, 0));
      };
      const leaveBody = (i: number) => {
        bodies[i].leave();
        bodies[i].leave(); // idempotent
        bodies[i].left = true;
      };
      for (const o of ops) {
        if ("enter" in o) {
          const i = bodies.length;
          const body: { key: string; leave: () => void; left: boolean } = { key: o.enter, leave: () => undefined, left: false };
          bodies.push(body);
          body.leave = turns.enter(o.enter, () => {
            expect(started).not.toContain(i);
            started.push(i);
          });
        } else if (bodies.length > 0) {
          leaveBody(o.leave % bodies.length);
        }
        check();
      }
      // Everyone leaves (in a random order): no state is left behind.
      for (const k of finalOrder) if (bodies.length > 0) leaveBody(k % bodies.length);
      bodies.forEach((_, i) => leaveBody(i));
      check();
      expect(turns.keys).toBe(0);
      expect(turns.waiting).toBe(0);
      // Per key, the bodies that got the turn got it in arrival order.
      for (const key of ["a", "b", "c"]) {
        const order = started.filter((i) => bodies[i].key === key);
        expect(order).toEqual([...order].sort((x, y) => x - y));
      }
    }), { numRuns: 300 });
  });
});

describe("through the service", () => {
  let t: TestApp | undefined;
  afterEach(async () => {
    for (const s of sockets.splice(0)) s.destroy();
    if (t !== undefined) await closeTestApp(t);
    t = undefined;
  });

  it("ComputeExchange sends under the request's key: key A's second sims waits for its first, key B's goes out meanwhile", async () => {
    t = await createTestApp({ keys: [TEST_KEY, OTHER_KEY], limits: { workers: 2, queueSize: 8, responseCacheBytes: 0, compression: false } });
    await t.app.listen({ port: 0, host: "127.0.0.1" });
    const address = t.app.server.address();
    if (address === null || typeof address === "string") throw new Error("no port");
    const budget = t.app.folio.responses!;
    const sims = (key: string, seed: number, paused = false) => {
      const body = JSON.stringify({ tickers: ["SYN-FIN1", "SYN-TEC1", "SYN-UTL1"], run_count: 40, seed: String(seed) });
      return rawRequest(address.port, `POST /v1/optimiser/sims HTTP/1.1\r\nhost: 127.0.0.1\r\nx-api-key: ${key}\r\n` +
        `content-type: application/json\r\ncontent-length: ${Buffer.byteLength(body)}\r\nconnection: close\r\n\r\n${body}`, NaN, paused);
    };
    const a1 = sims(TEST_KEY, 1, true);
    await until(() => budget.stats.streamed === 1, "A1 streaming", 60_000);
    const a2 = sims(TEST_KEY, 2);
    await until(() => budget.stats.waitingForTurn === 1, "A2 waiting for A's turn", 60_000);
    const size = budget.stats.pendingBytes / 2;
    const b1 = await sims(OTHER_KEY, 3).done;
    expect(b1.status).toBe(200);
    expect(b1.bodyBytes).toBe(b1.contentLength);
    expect(b1.bodyBytes).toBeGreaterThan(STREAM_THRESHOLD);
    // B's body went out whole while A1 (paused, far larger than the socket buffers) and A2 were both still pending.
    expect(size).toBeGreaterThan(16 * 1024 * 1024);
    expect(budget.stats.pendingBytes).toBe(2 * size);
    expect(budget.stats.waitingForTurn).toBe(1);
    expect(a2.received()).toBe(0);

    a1.socket.resume();
    const [r1, r2] = await Promise.all([a1.done, a2.done]);
    for (const r of [r1, r2]) {
      expect(r.status).toBe(200);
      expect(r.bodyBytes).toBe(r.contentLength);
    }
    expect(budget.stats).toMatchObject({ pendingBytes: 0, waitingForTurn: 0, streamed: 3 });
  });
});
