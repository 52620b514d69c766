/**
 * The indexed matcher. Clauses are indexed by subject: exact subjects in a map, prefix subjects
 * (trailing `*`) in a character trie. For an event, each of its subjects costs one map lookup plus
 * one walk down the trie (as long as the subject), so the cost per event follows the number of
 * clauses that actually share a subject with it, not the number of sentinels.
 */
import picomatch from "picomatch";

export interface IndexedClause {
  sentinelId: string;
  /** The clause subject as given (`github:acme/api#42`, `github:acme/*`). */
  subject: string;
  /** Type globs: the clause's own, or the provider's defaultTypes(subject). */
  types: string[];
}

interface Entry {
  sentinelId: string;
  test: (type: string) => boolean;
}

interface TrieNode {
  children: Map<string, TrieNode>;
  entries: Entry[];
}

const globCache = new Map<string, (s: string) => boolean>();

/** A compiled matcher for type globs (`*` crosses dots: `github.*` matches `github.pull_request.closed`). */
export function typeMatcher(globs: string[]): (type: string) => boolean {
  const key = globs.join("\u0000");
  let fn = globCache.get(key);
  if (!fn) {
    fn = globs.includes("*") ? () => true : picomatch(globs, { dot: true });
    if (globCache.size > 10_000) globCache.clear();
    globCache.set(key, fn);
  }
  return fn;
}

/** Whether a clause subject matches one event subject (exact, or prefix when it ends with `*`). */
export function subjectMatches(clauseSubject: string, eventSubject: string): boolean {
  return clauseSubject.endsWith("*")
    ? eventSubject.startsWith(clauseSubject.slice(0, -1))
    : clauseSubject === eventSubject;
}

export class SentinelIndex {
  private readonly exact = new Map<string, Entry[]>();
  private readonly root: TrieNode = { children: new Map(), entries: [] };
  private readonly bySentinel = new Map<string, IndexedClause[]>();

  get size(): number {
    return this.bySentinel.size;
  }

  /** Indexes the clauses of one sentinel (replacing any earlier ones). */
  add(sentinelId: string, clauses: IndexedClause[]): void {
    this.remove(sentinelId);
    this.bySentinel.set(sentinelId, clauses);
    for (const c of clauses) {
      const entry: Entry = { sentinelId, test: typeMatcher(c.types) };
      if (c.subject.endsWith("*")) this.node(c.subject.slice(0, -1), true)!.entries.push(entry);
      else {
        const list = this.exact.get(c.subject);
        if (list) list.push(entry);
        else this.exact.set(c.subject, [entry]);
      }
    }
  }

  remove(sentinelId: string): void {
    const clauses = this.bySentinel.get(sentinelId);
    if (!clauses) return;
    this.bySentinel.delete(sentinelId);
    for (const c of clauses) {
      if (c.subject.endsWith("*")) {
        const node = this.node(c.subject.slice(0, -1), false);
        if (node) node.entries = node.entries.filter((e) => e.sentinelId !== sentinelId);
      } else {
        const list = this.exact.get(c.subject)?.filter((e) => e.sentinelId !== sentinelId);
        if (list?.length) this.exact.set(c.subject, list);
        else this.exact.delete(c.subject);
      }
    }
  }

  /** Ids of the sentinels with a clause matching the event (OR over clauses and subjects). */
  match(event: { type: string; subjects: readonly string[] }): Set<string> {
    const out = new Set<string>();
    const consider = (entries: Entry[] | undefined) => {
      if (!entries) return;
      for (const e of entries) if (!out.has(e.sentinelId) && e.test(event.type)) out.add(e.sentinelId);
    };
    for (const s of event.subjects) {
      consider(this.exact.get(s));
      let node: TrieNode | undefined = this.root;
      consider(node.entries);
      for (const ch of s) {
        node = node.children.get(ch);
        if (!node) break;
        consider(node.entries);
      }
    }
    return out;
  }

  private node(prefix: string, create: boolean): TrieNode | undefined {
    let node = this.root;
    for (const ch of prefix) {
      let next = node.children.get(ch);
      if (!next) {
        if (!create) return undefined;
        next = { children: new Map(), entries: [] };
        node.children.set(ch, next);
      }
      node = next;
    }
    return node;
  }
}
