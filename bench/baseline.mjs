// Calibration target for the ratio targets of issue 6: bare node:http answering one PostgreSQL
// `select 1` through the same driver as Latchkey (the shared harness's `node` target measures the
// same thing), with a pool of 10 connections: its fastest here (Latchkey keeps 4, db/client.ts,
// which answers its heavier statements faster; this one answers ~5 % slower with 2 or 4).
// Started and stopped by bench/run.mjs.
//
//   DATABASE_URL=postgres://... node bench/baseline.mjs --port 3401
import http from "node:http";
import { parseArgs } from "node:util";
import postgres from "postgres";

const { values: args } = parseArgs({ options: { port: { type: "string", default: "3401" } } });
const sql = postgres(process.env.DATABASE_URL, { max: Number(process.env.PG_POOL_MAX ?? 10), onnotice: () => {} });

function send(res, status, body) {
  const text = JSON.stringify(body);
  res.writeHead(status, { "content-type": "application/json", "content-length": Buffer.byteLength(text) });
  res.end(text);
}

const server = http.createServer(async (req, res) => {
  try {
    if (req.url === "/ping") return send(res, 200, { ok: true });
    if (req.url === "/pgselect") {
      const [row] = await sql`select 1 as one`;
      return send(res, 200, { ok: true, one: row.one });
    }
    return send(res, 404, { error: "not_found" });
  } catch (error) {
    return send(res, 500, { error: String(error?.message ?? error) });
  }
});
server.keepAliveTimeout = 65_000;
server.listen(Number(args.port), "127.0.0.1");

const stop = async () => {
  server.close();
  await sql.end({ timeout: 2 });
  process.exit(0);
};
process.on("SIGTERM", stop);
process.on("SIGINT", stop);
