/** What the active `local-gh` sentinels ask to poll: repositories and pull requests, each with the earliest watch start. */
import type { SentinelView } from "../../core/plugin-api/index.js";
import { parseSubject, repoOfPattern } from "../github-common/index.js";

export interface RepoWatch {
  owner: string;
  repo: string;
  /** Epoch ms of the oldest sentinel watching it: events older than this are history on a first poll. */
  since: number;
}

export interface PrWatch extends RepoWatch {
  number: number;
}

export interface WatchSet {
  repos: Map<string, RepoWatch>;
  prs: Map<string, PrWatch>;
}

export function watchSetOf(sentinels: ReadonlyArray<SentinelView>): WatchSet {
  const repos = new Map<string, RepoWatch>();
  const prs = new Map<string, PrWatch>();
  const note = <T extends RepoWatch>(map: Map<string, T>, key: string, value: T) => {
    const prior = map.get(key);
    if (!prior || value.since < prior.since) map.set(key, value);
  };
  for (const s of sentinels) {
    for (const clause of s.spec.match) {
      const exact = clause.subject.endsWith("*") ? undefined : parseSubject(clause.subject);
      const repo = exact ?? repoOfPattern(clause.subject);
      if (!repo) continue;
      note(repos, `${repo.owner}/${repo.repo}`, { owner: repo.owner, repo: repo.repo, since: s.createdAt });
      if (exact?.number !== undefined) {
        note(prs, `${exact.owner}/${exact.repo}#${exact.number}`, {
          owner: exact.owner,
          repo: exact.repo,
          number: exact.number,
          since: s.createdAt,
        });
      }
    }
  }
  return { repos, prs };
}
