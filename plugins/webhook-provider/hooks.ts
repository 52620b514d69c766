/**
 * Repository hooks registered through `gh api repos/{o}/{r}/hooks`: one per watched repository,
 * reference-counted across sentinels (by sentinel id, so a boot-time re-watch counts once) and
 * removed with the last one. An existing hook pointing at our URL is reused (its secret updated),
 * so a restart never registers a duplicate.
 */
import type { Logger, SentinelView } from "../../core/plugin-api/index.js";
import { parseSubject, repoOfPattern, type GhCli } from "../github-common/index.js";

/** Every event GitHub sends: each is mapped (specifically or generically) and a clause's types pick what it watches. */
const HOOK_EVENTS = ["*"];
import { hookUrl, type WebhookSettings } from "./settings.js";

type Obj = Record<string, any>;

function reposOf(sentinel: SentinelView): string[] {
  const out = new Set<string>();
  for (const c of sentinel.spec.match) {
    const r = (c.subject.endsWith("*") ? undefined : parseSubject(c.subject)) ?? repoOfPattern(c.subject);
    if (r) out.add(`${r.owner}/${r.repo}`);
  }
  return [...out];
}

export class HookRegistry {
  private readonly refs = new Map<string, Set<string>>();
  private readonly ids = new Map<string, number>();
  private readonly chains = new Map<string, Promise<void>>();
  readonly errors = new Map<string, string>();

  constructor(
    private readonly gh: GhCli,
    private readonly settings: () => Promise<WebhookSettings>,
    private readonly logger: Logger,
  ) {}

  registered(): string[] {
    return [...this.ids.keys()];
  }

  watchedRepos(): string[] {
    return [...this.refs.keys()];
  }

  async watch(sentinel: SentinelView): Promise<void> {
    for (const repo of reposOf(sentinel)) {
      const set = this.refs.get(repo) ?? new Set<string>();
      const first = set.size === 0;
      set.add(sentinel.id);
      this.refs.set(repo, set);
      if (first) await this.serial(repo, () => this.ensure(repo, false));
    }
  }

  async unwatch(sentinel: SentinelView): Promise<void> {
    for (const repo of reposOf(sentinel)) {
      const set = this.refs.get(repo);
      if (!set?.delete(sentinel.id) || set.size > 0) continue;
      this.refs.delete(repo);
      await this.serial(repo, () => this.remove(repo));
    }
  }

  /** After a settings change: registers missing hooks and updates existing ones (URL, secret). */
  async sync(): Promise<void> {
    for (const repo of this.refs.keys()) await this.serial(repo, () => this.ensure(repo, true));
  }

  private serial(repo: string, fn: () => Promise<void>): Promise<void> {
    const run = (this.chains.get(repo) ?? Promise.resolve()).then(fn).catch((err: Error) => {
      this.errors.set(repo, err.message);
      this.logger.warn("webhook hook change failed", { repo, error: err.message });
    });
    this.chains.set(repo, run);
    return run;
  }

  private async ensure(repo: string, update: boolean): Promise<void> {
    if (!this.refs.has(repo)) return;
    const s = await this.settings();
    if (!s.publicBaseUrl || !s.secret) return;
    const url = hookUrl(s.publicBaseUrl);
    const config = { url, content_type: "json", insecure_ssl: "0", secret: s.secret };
    const known = this.ids.get(repo);
    const existing = known ?? (await this.find(repo, url));
    if (existing !== undefined) {
      this.ids.set(repo, existing);
      // A hook found on GitHub (left from before a restart) may carry an older secret: it is updated.
      if (update || known === undefined)
        await this.call("PATCH", `repos/${repo}/hooks/${existing}`, { active: true, events: HOOK_EVENTS, config });
    } else {
      const res = await this.call("POST", `repos/${repo}/hooks`, {
        name: "web",
        active: true,
        events: HOOK_EVENTS,
        config,
      });
      this.ids.set(repo, Number((res as Obj).id));
      this.logger.info("webhook hook registered", { repo, hook: Number((res as Obj).id) });
    }
    this.errors.delete(repo);
  }

  private async remove(repo: string): Promise<void> {
    const s = await this.settings();
    const id = this.ids.get(repo) ?? (s.publicBaseUrl ? await this.find(repo, hookUrl(s.publicBaseUrl)) : undefined);
    this.ids.delete(repo);
    if (id === undefined) return;
    await this.call("DELETE", `repos/${repo}/hooks/${id}`);
    this.errors.delete(repo);
    this.logger.info("webhook hook removed", { repo, hook: id });
  }

  private async find(repo: string, url: string): Promise<number | undefined> {
    const list = await this.call("GET", `repos/${repo}/hooks?per_page=100`);
    const hook = Array.isArray(list) ? (list as Obj[]).find((h) => h?.config?.url === url) : undefined;
    return typeof hook?.id === "number" ? hook.id : undefined;
  }

  private async call(method: "GET" | "POST" | "PATCH" | "DELETE", path: string, body?: unknown): Promise<unknown> {
    const res = await this.gh.api({ method, path, ...(body === undefined ? {} : { body }) });
    if (res.status >= 300) {
      const msg = typeof (res.body as Obj)?.message === "string" ? (res.body as Obj).message : `HTTP ${res.status}`;
      throw new Error(`gh api ${method} ${path.split("?")[0]} answered ${res.status} (${msg})`);
    }
    return res.body;
  }
}
