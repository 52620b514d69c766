/**
 * The GitHub subject vocabulary shared by the `local-gh` and `webhook` providers:
 * - `github:<owner>/<repo>`            a repository (owner and name lower-cased: GitHub ignores case)
 * - `github:<owner>/<repo>#<n>`        a pull request (or issue) number in it
 * - `github:<owner>/<repo>@<branch>`   a branch (pushes, check runs and suites, workflow runs)
 */
import { SvcError } from "../../core/plugin-api/index.js";

export interface RepoRef {
  owner: string;
  repo: string;
}

export interface SubjectRef extends RepoRef {
  number?: number;
  branch?: string;
}

const NAME = /^[A-Za-z0-9_.-]{1,100}$/;
const SUBJECT = /^github:([A-Za-z0-9_.-]{1,100})\/([A-Za-z0-9_.-]{1,100})(?:#(\d{1,10})|@(.{1,255}))?$/;

export function repoSubject(owner: string, repo: string): string {
  return `github:${owner.toLowerCase()}/${repo.toLowerCase()}`;
}

export function itemSubject(owner: string, repo: string, n: number): string {
  return `${repoSubject(owner, repo)}#${n}`;
}

export function branchSubject(owner: string, repo: string, branch: string): string {
  return `${repoSubject(owner, repo)}@${branch}`;
}

/** Parses a GitHub subject; undefined when it is not one (a trailing `*` prefix is not a subject). */
export function parseSubject(subject: string): SubjectRef | undefined {
  const m = SUBJECT.exec(subject);
  if (!m) return undefined;
  const ref: SubjectRef = { owner: m[1]!.toLowerCase(), repo: m[2]!.toLowerCase() };
  if (m[3] !== undefined) ref.number = Number(m[3]);
  if (m[4] !== undefined) ref.branch = m[4];
  return ref;
}

/** The repository a subject or subject prefix (`github:acme/api*`, `github:acme/api#*`) names, if any. */
export function repoOfPattern(pattern: string): RepoRef | undefined {
  const m = /^github:([A-Za-z0-9_.-]{1,100})\/([A-Za-z0-9_.-]{1,100})(?:$|[#@*])/.exec(pattern);
  return m ? { owner: m[1]!.toLowerCase(), repo: m[2]!.toLowerCase() } : undefined;
}

/** `https://github.com/<owner>/<repo>/pull/<n>` (with optional trailing path, query or fragment) → `github:<owner>/<repo>#<n>`. */
export function subjectFromPrUrl(url: string): string {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    throw new SvcError("invalid_input", `prUrl is not a URL; expected https://github.com/<owner>/<repo>/pull/<number>`);
  }
  const m = /^\/([^/]+)\/([^/]+)\/pulls?\/(\d{1,10})(?:\/.*)?$/.exec(u.pathname);
  if (
    u.protocol !== "https:" ||
    u.hostname.toLowerCase() !== "github.com" ||
    !m ||
    !NAME.test(m[1]!) ||
    !NAME.test(m[2]!)
  ) {
    throw new SvcError("invalid_input", `prUrl must look like https://github.com/<owner>/<repo>/pull/<number>`);
  }
  return itemSubject(m[1]!, m[2]!, Number(m[3]));
}

/** Normalizes a subject or subject prefix given by a user (owner and repo lower-cased); others pass unchanged. */
export function normalizeSubject(subject: string): string {
  const m = /^github:([A-Za-z0-9_.-]{1,100})\/([A-Za-z0-9_.*-]{1,100})(.*)$/s.exec(subject);
  return m ? `github:${m[1]!.toLowerCase()}/${m[2]!.toLowerCase()}${m[3]}` : subject;
}

/** A provider's `resolveSubject`: a pull request URL or a subject, in the normalized form events use. */
export function resolveGithubSubject(input: { subject?: string; prUrl?: string }): string {
  if (input.prUrl !== undefined) return subjectFromPrUrl(input.prUrl);
  if (input.subject !== undefined) return normalizeSubject(input.subject);
  throw new SvcError("invalid_input", "give a subject or a prUrl");
}
