/**
 * The peer bench's raw system, the limit: one process POSTing the same envelope to the receiver
 * with undici, 16 in flight, each POST signed the Standard Webhooks way (its own webhook-id).
 */
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { Agent } from "undici";
import { buildEnvelope } from "../../../plugins/webhook-target/envelope.js";
import { benchEvent, postConcurrently, SECRET, TLS } from "../webhook-rig.js";
import { serveParent } from "./ipc.js";
import { secretKey, signedHeaders } from "./sign.js";

const agent = new Agent({ connect: { ca: await readFile(join(TLS, "ca.crt")) } });
const key = secretKey(SECRET);
const body = buildEnvelope("snt_bench", benchEvent("evt_sample", 0, 8), Date.now()).toString("utf8");

serveParent({
  /** POSTs `n` times (webhook-ids `<prefix>_<i>`) to `url`, 16 in flight; answers with the ms taken. */
  async post(req) {
    const { url, n, prefix } = req as unknown as { url: string; n: number; prefix: string };
    const t0 = performance.now();
    await postConcurrently(agent, url, n, body, (i) => signedHeaders(key, `${prefix}_${i}`, body));
    return { ms: performance.now() - t0 };
  },
});
