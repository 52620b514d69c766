#!/usr/bin/env node
/**
 * A minimal HTTPS receiver for svc's webhook target, for trying svc on your own machine.
 *
 *   WEBHOOK_SECRET=whsec_… node examples/webhook-receiver.mjs --port 8443 --cert cert.pem --key key.pem
 *
 * It answers svc's verification challenge, verifies every delivery's Standard Webhooks signature
 * with the `standardwebhooks` library (what your own service would use), and prints one line per
 * request: `verified <webhook-id> <type> <subjects>` (for an MCP events subscription's delivery,
 * followed by `(MCP event <name>)`) or `rejected <reason>`. The secret is read from the
 * environment so that it stays out of the process list; it is never printed. `--help` prints the
 * usage; a wrong flag or an unreadable certificate is a one-line error and exit 2.
 */
import { readFileSync } from "node:fs";
import { createServer } from "node:https";
import { parseArgs } from "node:util";
import { Webhook } from "standardwebhooks";

const USAGE =
  "usage: WEBHOOK_SECRET=whsec_… node examples/webhook-receiver.mjs --cert cert.pem --key key.pem [--port 8443] [--host 127.0.0.1]\n";
const HELP = `${USAGE}
A Standard Webhooks receiver for svc's webhook target: answers the verification challenge and
prints one line per request, "verified <webhook-id> <type> <subjects>" (an MCP events delivery adds
"(MCP event <name>)") or "rejected <reason>".

  --cert <file>   the server certificate (PEM)
  --key <file>    its private key (PEM)
  --port <n>      the port to listen on (default 8443; 0: any free port)
  --host <addr>   the address to listen on (default 127.0.0.1)
  -h, --help      this help

WEBHOOK_SECRET (whsec_…) is the secret the deliveries are signed with.
`;

/** A usage error: one line saying what is wrong, the usage, exit 2. */
function fail(message) {
  process.stderr.write(`webhook-receiver: ${message}\n${USAGE}`);
  process.exit(2);
}

/** parseArgs' message, shortened to what was wrong. */
function argsProblem(err) {
  const quoted = /'([^']+)'/.exec(err.message)?.[1];
  if (err.code === "ERR_PARSE_ARGS_UNKNOWN_OPTION") return `unknown option ${quoted ?? err.message}`;
  if (err.code === "ERR_PARSE_ARGS_UNEXPECTED_POSITIONAL") return `unexpected argument ${quoted ?? err.message}`;
  return err.message.split(". ")[0];
}

let values;
try {
  ({ values } = parseArgs({
    options: {
      port: { type: "string", default: "8443" },
      host: { type: "string", default: "127.0.0.1" },
      cert: { type: "string" },
      key: { type: "string" },
      help: { type: "boolean", short: "h" },
    },
  }));
} catch (err) {
  fail(argsProblem(err));
}
if (values.help) {
  process.stdout.write(HELP);
  process.exit(0);
}
const secret = process.env.WEBHOOK_SECRET;
if (!values.cert) fail("--cert is required");
if (!values.key) fail("--key is required");
if (!secret) fail("WEBHOOK_SECRET is not set");
const port = Number(values.port);
if (!/^\d+$/.test(values.port) || port > 65535) fail(`--port must be 0..65535, got ${values.port}`);
const readPem = (flag, file) => {
  try {
    return readFileSync(file);
  } catch (err) {
    return fail(`cannot read the ${flag} file ${file}: ${err.code ?? err.message}`);
  }
};
const tls = { cert: readPem("--cert", values.cert), key: readPem("--key", values.key) };
let verifier;
try {
  verifier = new Webhook(secret);
} catch (err) {
  fail(`WEBHOOK_SECRET is not a Standard Webhooks secret (whsec_ and base64): ${err.message}`);
}
const MAX_BODY = 1024 * 1024;

function answer(res, status, body) {
  res.writeHead(status, body === undefined ? {} : { "content-type": "application/json" });
  res.end(body === undefined ? undefined : JSON.stringify(body));
}

/**
 * What a delivery is about: svc's envelope has `type` and `subjects` at the top; an MCP events
 * occurrence (docs/mcp-events.md) is `{eventId, name, timestamp, data: {type, subjects, payload}}`.
 */
function describe(payload) {
  const mcp = typeof payload.name === "string" && typeof payload.data === "object" && payload.data !== null;
  const event = mcp ? payload.data : payload;
  const subjects = Array.isArray(event.subjects) ? event.subjects.join(" ") : "";
  const truncated = event.truncated === true ? " (truncated)" : "";
  return `${event.type ?? "?"} ${subjects}${truncated}${mcp ? ` (MCP event ${payload.name})` : ""}`;
}

let server;
try {
  server = createServer(tls, handle);
} catch (err) {
  fail(`--cert and --key are not a usable certificate and key: ${err.message}`);
}

function handle(req, res) {
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
    console.log(`verified ${req.headers["webhook-id"]} ${describe(payload)}`);
    answer(res, 204);
  });
}
server.on("error", (err) => {
  process.stderr.write(`webhook-receiver: cannot listen on ${values.host}:${port}: ${err.message}\n`);
  process.exit(1);
});
server.listen(port, values.host, () => {
  console.log(`listening on https://localhost:${server.address().port}/`);
});
for (const sig of ["SIGINT", "SIGTERM"]) process.on(sig, () => server.close(() => process.exit(0)));
