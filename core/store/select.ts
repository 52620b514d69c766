/**
 * Which store a daemon runs on, from `store.url` as the config resolver settled it: the flag
 * `svc serve --store` > env `SVC_STORE_URL` > config.json `store.url` > none (the files under
 * `$SVC_HOME`). `postgres://` or `postgresql://` is team mode; anything else is refused
 * (`store_url_invalid`), naming where the value came from. Nothing here loads `pg`.
 */
import { SvcError } from "../errors.js";
import type { ConfigSnapshot } from "../config/config-service.js";
import { formatSource, type ValueSource } from "../config/resolve.js";

export type StoreChoice = { kind: "file" } | { kind: "postgres"; url: string; from: string };

const ALLOWED =
  "allowed: postgres://[user@]host[:port]/database (or postgresql://…), or no store.url at all for the files under $SVC_HOME";

/** "flag --store", "env SVC_STORE_URL", "config.json store.url". */
function fromWhere(source: ValueSource | undefined): string {
  return !source || source.kind === "config" ? "config.json store.url" : formatSource(source);
}

/** The URL as an error may show it: its password masked; nothing when it does not parse (it may hide one). */
function shown(url: string): string {
  if (!URL.canParse(url)) return "a value that is not a URL";
  const u = new URL(url);
  if (u.password) u.password = "***";
  return JSON.stringify(u.href);
}

/** The store `store.url` names, from the value and its source. */
export function chooseStore(url: string | undefined, source?: ValueSource): StoreChoice {
  if (url === undefined) return { kind: "file" };
  const from = fromWhere(source);
  const scheme = /^([a-z][a-z0-9+.-]*):/i.exec(url)?.[1]?.toLowerCase();
  if (scheme !== "postgres" && scheme !== "postgresql")
    throw new SvcError(
      "store_url_invalid",
      `${from} is ${shown(url)}, which is not a PostgreSQL URL (${scheme ? `scheme "${scheme}:"` : "no scheme"}); ${ALLOWED}`,
    );
  if (!URL.canParse(url) || !url.slice(scheme.length + 1).startsWith("//"))
    throw new SvcError("store_url_invalid", `${from} is not a well-formed PostgreSQL URL; ${ALLOWED}`);
  return { kind: "postgres", url, from };
}

/** The store of a resolved configuration (its `store.url` and where that came from). */
export function storeOfConfig(config: Pick<ConfigSnapshot, "effective" | "sources">): StoreChoice {
  return chooseStore(config.effective.store?.url, config.sources["store.url"]);
}

/**
 * `--store <url>` as given on the command line: a URL with a password is refused, since every
 * user of the machine sees a process's arguments.
 */
export function checkStoreFlag(url: string): void {
  const password = URL.canParse(url) ? new URL(url).password !== "" : /^[^:/]+:\/\/[^/?#@]*:[^/?#@]*@/.test(url);
  if (password)
    throw new SvcError(
      "store_url_invalid",
      "--store carries a password, and every user of this machine can read a process's arguments: give the URL without it and the password through PGPASSWORD or ~/.pgpass (PGPASSFILE), or put the whole URL in SVC_STORE_URL or config.json store.url",
    );
  chooseStore(url, { kind: "flag", name: "--store" });
}
