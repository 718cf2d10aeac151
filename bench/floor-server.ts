/**
 * The static-body floor of the HTTP throughput bench (bench/suites/throughput.ts): Fastify answering
 * POST /floor/<coding> with bytes read once at start from FLOOR_DIR/<coding>.bin (identity, gzip, br), no compute,
 * no validation, no key. Prints {"url":…} on stdout when listening, like the service.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import Fastify from "fastify";

const dir = process.env.FLOOR_DIR!;
const bodies = new Map(["identity", "gzip", "br"].map((c) => [c, readFileSync(join(dir, `${c}.bin`))]));
const app = Fastify({ logger: false });
app.post("/floor/:coding", (req, reply) => {
  const coding = (req.params as { coding: string }).coding;
  const body = bodies.get(coding)!;
  if (coding !== "identity") reply.header("content-encoding", coding);
  void reply.type("application/json; charset=utf-8").send(body);
});
const url = await app.listen({ port: 0, host: "127.0.0.1" });
console.log(JSON.stringify({ url }));
