/**
 * Idempotent sentinel creates: the one rule behind the `Idempotency-Key` header of
 * `POST /sentinels`, the `idempotencyKey` argument of `sentinel_watch` and the CLI's
 * `--idempotency-key`.
 * - A key is scoped to its caller (the principal): one caller's key never answers another's.
 * - The same key with the same request within {@link IDEMPOTENCY_WINDOW_MS} of the first create
 *   answers with that sentinel (same id, its current projection) and creates nothing.
 * - The same key with another request is refused with `idempotency_key_reused` (422).
 * - Creates with the same key at the same moment are serialized: the second waits for the first
 *   and gets its answer (or, when the first failed and stored nothing, creates itself).
 * - After the window, or once that sentinel is removed, the key matches nothing: a new create is made.
 * The stamp `{key, principal, fingerprint, at}` is stored in the sentinel record itself, so the
 * sentinel and its key commit in the same atomic write of sentinels.json (neither exists without
 * the other after a crash); this index is rebuilt from the records at load.
 */
import { SvcError } from "../errors.js";
import type { Clock } from "../runtime/clock.js";
import { KeyedMutex } from "./keyed-mutex.js";
import type { RequestFingerprints } from "./request-fingerprint.js";
import type { IdempotencyStamp, SentinelProjection, SentinelRecord } from "./service.js";

/** How long a key answers with the sentinel it created. */
export const IDEMPOTENCY_WINDOW_MS = 24 * 60 * 60 * 1000;
export const IDEMPOTENCY_KEY_MAX = 255;

const KEY_RULE = `1-${IDEMPOTENCY_KEY_MAX} printable ASCII characters (0x20-0x7E), not starting or ending with a space`;
const PRINTABLE = /^[\x21-\x7e](?:[\x20-\x7e]*[\x21-\x7e])?$/;

/** The key as given, or throws `invalid_input` saying what is wrong with it (the key is not a secret). */
export function checkIdempotencyKey(key: unknown): string {
  let problem: string | undefined;
  if (typeof key !== "string") problem = "must be a string";
  else if (key === "") problem = "must not be empty";
  else if (key.length > IDEMPOTENCY_KEY_MAX)
    problem = `is ${key.length} characters long; at most ${IDEMPOTENCY_KEY_MAX}`;
  else if (!PRINTABLE.test(key)) problem = `must be ${KEY_RULE}`;
  if (problem === undefined) return key as string;
  const message = `the idempotency key ${problem}`;
  throw new SvcError("invalid_input", `invalid idempotency key: ${message}`, {
    details: [{ path: "idempotencyKey", message }],
  });
}

interface Entry {
  id: string;
  fingerprint: string;
  at: number;
}

export interface CreateSteps {
  /** Creates the sentinel, storing `stamp` (when given) in its record. */
  make(stamp?: IdempotencyStamp): Promise<SentinelProjection>;
  /** The projection of the sentinel a key already created. */
  replay(sentinelId: string): Promise<SentinelProjection>;
}

export class IdempotentCreates {
  /** By scope (principal and key): the live entry. */
  private readonly entries = new Map<string, Entry>();
  /** By sentinel id: its scope, to forget it on removal. */
  private readonly scopes = new Map<string, string>();
  private readonly mutex = new KeyedMutex();

  constructor(
    private readonly clock: Clock,
    private readonly fingerprints: RequestFingerprints,
  ) {}

  /** Rebuilds the index from the stored records (the newest stamp per scope). */
  load(records: readonly SentinelRecord[]): void {
    this.entries.clear();
    this.scopes.clear();
    for (const rec of records) {
      const s = rec.idempotency;
      if (!s) continue;
      const scope = scopeOf(s.principal, s.key);
      const known = this.entries.get(scope);
      if (!known || known.at <= s.at) this.remember(scope, { id: rec.id, fingerprint: s.fingerprint, at: s.at });
    }
  }

  /** The sentinel is gone: its key matches nothing any more. */
  forget(sentinelId: string): void {
    const scope = this.scopes.get(sentinelId);
    if (scope === undefined) return;
    this.scopes.delete(sentinelId);
    if (this.entries.get(scope)?.id === sentinelId) this.entries.delete(scope);
  }

  /** Runs a create under `key` (none: a plain create). */
  async create(
    request: unknown,
    principal: string,
    key: string | undefined,
    steps: CreateSteps,
  ): Promise<SentinelProjection> {
    if (key === undefined) return steps.make();
    checkIdempotencyKey(key);
    const fingerprint = await this.fingerprints.of(request);
    const scope = scopeOf(principal, key);
    return this.mutex.run(scope, async () => {
      const hit = this.live(scope);
      if (hit) {
        if (hit.fingerprint !== fingerprint) {
          throw new SvcError(
            "idempotency_key_reused",
            `idempotency key ${JSON.stringify(key)} already created sentinel ${hit.id} from a different request within the last 24 hours; ` +
              "send the same request to get that sentinel again, or use a new key for a new sentinel",
            { details: { sentinelId: hit.id } },
          );
        }
        return steps.replay(hit.id);
      }
      const stamp: IdempotencyStamp = { key, principal, fingerprint, at: this.clock.now() };
      const created = await steps.make(stamp);
      this.remember(scope, { id: created.id, fingerprint, at: stamp.at });
      return created;
    });
  }

  /** The entry of `scope` while its window is open; an expired one is dropped. */
  private live(scope: string): Entry | undefined {
    const e = this.entries.get(scope);
    if (!e) return undefined;
    if (this.clock.now() - e.at < IDEMPOTENCY_WINDOW_MS) return e;
    this.entries.delete(scope);
    this.scopes.delete(e.id);
    return undefined;
  }

  private remember(scope: string, e: Entry): void {
    const previous = this.entries.get(scope);
    if (previous) this.scopes.delete(previous.id);
    this.entries.set(scope, e);
    this.scopes.set(e.id, scope);
  }
}

/** Principal and key as one unambiguous map key. */
function scopeOf(principal: string, key: string): string {
  return JSON.stringify([principal, key]);
}
