/**
 * Spawn idempotency (SPEC.md spawn.dedupe). A spawn's key is its explicit `idempotencyKey`, or,
 * under `dedupe: always` without one, one derived from the spawning caller (its parent session, or
 * none), the adapter, the label and a SHA-256 of the initial prompt (a spawn without a prompt
 * derives none). A key lives as long as the session it names: while that session is live (or
 * still provisioning) a second spawn with the key returns it (`deduped: true`); once it has ended
 * the key is free. Keys are held in memory (sessions do not survive a daemon restart either).
 */
import { createHash } from "node:crypto";

const sha256 = (s: string) => createHash("sha256").update(s).digest("hex");

export function spawnKey(
  policy: "always" | "on-request",
  req: { idempotencyKey?: string; dedupe?: boolean; adapter: string; label?: string; prompt?: string },
  parentId: string | undefined,
): string | undefined {
  if (req.dedupe === false) return undefined;
  if (req.idempotencyKey) return `key:${req.idempotencyKey}`;
  if (policy !== "always" || !req.prompt) return undefined;
  return `derived:${sha256(JSON.stringify([parentId ?? null, req.adapter, req.label ?? null, sha256(req.prompt)]))}`;
}

export class SpawnKeys {
  private readonly keys = new Map<string, string>();

  /** The session holding `key`, when `isLive` says it still runs; a stale entry is dropped. */
  holder(key: string, isLive: (sessionId: string) => boolean): string | undefined {
    const id = this.keys.get(key);
    if (id && isLive(id)) return id;
    if (id) this.keys.delete(key);
    return undefined;
  }

  claim(key: string, sessionId: string): void {
    this.keys.set(key, sessionId);
  }

  release(sessionId: string): void {
    for (const [k, id] of this.keys) if (id === sessionId) this.keys.delete(k);
  }
}
