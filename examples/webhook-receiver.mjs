#!/usr/bin/env node
/**
 * A minimal HTTPS receiver for svc's webhook target, for trying svc on your own machine.
 *
 *   WEBHOOK_SECRET=whsec_… node examples/webhook-receiver.mjs --port 8443 --cert cert.pem --key key.pem
 *
 * It answers svc's verification challenge, verifies every delivery's Standard Webhooks signature
 * with the `standardwebhooks` library (what your own service would use), and prints one line per
 * request: `verified <webhook-id> <type> <subjects>` or `rejected <reason>`. The secret is read from
 * the environment so that it stays out of the process list; it is never printed.
 */
import { readFileSync } from "node:fs";
import { createServer } from "node:https";
import { parseArgs } from "node:util";
import { Webhook } from "standardwebhooks";

const { values } = parseArgs({
  options: {
    port: { type: "string", default: "8443" },
    host: { type: "string", default: "127.0.0.1" },
    cert: { type: "string" },
    key: { type: "string" },
  },
});
const secret = process.env.WEBHOOK_SECRET;
if (!values.cert || !values.key || !secret) {
  process.stderr.write(
    "usage: WEBHOOK_SECRET=whsec_… node examples/webhook-receiver.mjs --cert cert.pem --key key.pem [--port 8443] [--host 127.0.0.1]\n",
  );
  process.exit(2);
}
const verifier = new Webhook(secret);
const MAX_BODY = 1024 * 1024;

function answer(res, status, body) {
  res.writeHead(status, body === undefined ? {} : { "content-type": "application/json" });
  res.end(body === undefined ? undefined : JSON.stringify(body));
}

const server = createServer({ cert: readFileSync(values.cert), key: readFileSync(values.key) }, (req, res) => {
  const chunks = [];
  let size = 0;
  req.on("data", (c) => {
    size += c.length;
    if (size > MAX_BODY) req.destroy();
    else chunks.push(c);
  });
  req.on("end", () => {
    const body = Buffer.concat(chunks).toString("utf8");
    let payload;
    try {
      payload = verifier.verify(body, req.headers);
    } catch (err) {
      console.log(`rejected ${err instanceof Error ? err.message : "bad signature"}`);
      return answer(res, 401, { error: "signature did not verify" });
    }
    if (payload.type === "verification") {
      console.log(`verified challenge for subscription ${req.headers["x-mcp-subscription-id"] ?? "?"}`);
      return answer(res, 200, { challenge: payload.challenge });
    }
    console.log(`verified ${req.headers["webhook-id"]} ${payload.type ?? "?"} ${(payload.subjects ?? []).join(" ")}`);
    answer(res, 204);
  });
});
server.listen(Number(values.port), values.host, () => {
  console.log(`listening on https://localhost:${server.address().port}/`);
});
for (const sig of ["SIGINT", "SIGTERM"]) process.on(sig, () => server.close(() => process.exit(0)));
