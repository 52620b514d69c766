import { cp, mkdtemp, readFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type {
  IngestResult,
  PluginContext,
  SentinelIngress,
  SentinelView,
  SvcEvent,
} from "../../../core/plugin-api/index.js";
import { FakeClock, createRandom } from "../../../core/runtime/clock.js";
import { createMemoryLogger } from "../../../core/runtime/logger.js";
import { createGhCli, type GhCli } from "../../../plugins/github-common/index.js";
import { FIXTURES } from "../../support/paths.js";

export const FAKE_GH_BIN = join(FIXTURES, "fake-gh/bin/gh");

/** A private copy of a fake-gh fixture directory, a gh client on it, and its call log. */
export async function fakeGh(
  fixture: string,
): Promise<{ dir: string; gh: GhCli; calls(): Promise<Array<Record<string, any>>> }> {
  const dir = await mkdtemp(join(tmpdir(), "fake-gh-"));
  await cp(join(FIXTURES, "fake-gh", fixture), dir, { recursive: true });
  const log = join(dir, "calls.jsonl");
  const gh = createGhCli({ bin: FAKE_GH_BIN, env: { ...process.env, FAKE_GH_DIR: dir, FAKE_GH_LOG: log } });
  const calls = async () =>
    (await readFile(log, "utf8").catch(() => ""))
      .split("\n")
      .filter(Boolean)
      .map((l) => JSON.parse(l) as Record<string, any>);
  return { dir, gh, calls };
}

export function sentinel(id: string, subjects: string[], createdAt: number, provider = "local-gh"): SentinelView {
  return {
    id,
    status: "active",
    createdAt,
    spec: {
      match: subjects.map((subject) => ({ subject })),
      until: { kind: "never" },
      target: { kind: "session" },
      provider,
    },
  };
}

/** An in-memory stand-in for the engine's ingress: the active sentinels it is given, and what was ingested. */
export class RecordingIngress implements Partial<SentinelIngress> {
  ingested: SvcEvent[] = [];
  constructor(public sentinels: SentinelView[] = []) {}
  active(provider?: string): SentinelView[] {
    return this.sentinels.filter((s) => !provider || s.spec.provider === provider);
  }
  async ingest(_provider: string, events: SvcEvent[]): Promise<IngestResult> {
    this.ingested.push(...events);
    return { accepted: events.length, matched: [] };
  }
}

export class MemoryCredentials {
  values = new Map<string, string>();
  async get(ns: string, key: string) {
    return this.values.get(`${ns}/${key}`);
  }
  async set(ns: string, key: string, value: string) {
    this.values.set(`${ns}/${key}`, value);
  }
  async delete(ns: string, key: string) {
    this.values.delete(`${ns}/${key}`);
  }
  async has(ns: string, key: string) {
    return this.values.has(`${ns}/${key}`);
  }
}

export function pluginContext(
  services: Record<string, unknown>,
  clock = new FakeClock(),
): PluginContext & { clock: FakeClock; logger: ReturnType<typeof createMemoryLogger> } {
  const logger = createMemoryLogger();
  return {
    type: "provider",
    kind: "test",
    logger,
    clock,
    random: createRandom(clock),
    sleep: () => new Promise(() => undefined),
    home: tmpdir(),
    storageDir: tmpdir(),
    config: () => ({}),
    service: ((name: string) => {
      if (!(name in services)) throw new Error(`no service ${name}`);
      return services[name];
    }) as PluginContext["service"],
    hasService: (name) => name in services,
  };
}
