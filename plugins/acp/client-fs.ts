import { constants } from "node:fs";
import { lstat, mkdir, open, readlink, realpath, stat } from "node:fs/promises";
import { basename, dirname, isAbsolute, join, resolve, sep } from "node:path";
import {
  DEFAULT_MAX_MESSAGE_BYTES,
  RequestError,
  type ReadTextFileRequest,
  type ReadTextFileResponse,
  type WriteTextFileRequest,
  type WriteTextFileResponse,
} from "@agentclientprotocol/sdk";
import { writeFileDurable } from "../../core/plugin-api/index.js";

/** The largest file `fs/read_text_file` returns (the whole file is read before `line`/`limit` apply). */
export const MAX_READ_BYTES = 10 * 1024 * 1024;

/**
 * The most text, JSON-encoded, one `fs/read_text_file` answer carries: the ACP SDK's default message
 * limit (which an agent built on it enforces) less room for the rest of the message. Control
 * characters grow sixfold in JSON, so a file under {@link MAX_READ_BYTES} can still be over it.
 */
export const MAX_READ_JSON_BYTES = DEFAULT_MAX_MESSAGE_BYTES - 64 * 1024;

/** Symlinks followed while resolving one path, as the kernel's own limit (ELOOP). */
const MAX_LINK_HOPS = 40;

export interface ClientFsOptions {
  /** The session's working directory: the only tree the agent may read and write through the client. */
  cwd: string;
  /** `$SVC_HOME`: never readable or writable, even when `cwd` contains it, except under {@link worktreesRoot}. */
  svcHome: string;
  /** `worktrees.root`: the agents' worktrees, open to the client (inside `cwd`) even where they lie in `$SVC_HOME`, as they do by default. */
  worktreesRoot?: string;
  /** `sessions.eventsDir`: the transcripts, never readable or writable, wherever they are. */
  eventsDir?: string;
  /** Whether `id` is the ACP session this client serves (false before `session/new` answered). */
  isSession(id: string): boolean;
  /** Records one call in the transcript: the path and byte count, never the contents. */
  record(kind: "fs_read_text_file" | "fs_write_text_file", data: Record<string, unknown>): void;
}

/**
 * The client side of ACP's `fs/read_text_file` and `fs/write_text_file`, confined to the session's
 * working directory: paths must be absolute, and the part of a path that exists is resolved through
 * its symlinks before it is checked, so a link inside `cwd` cannot lead out of it; `$SVC_HOME` (which
 * holds the daemon's secrets) is refused wherever it is. Errors are the SDK's {@link RequestError}s
 * (`-32602` invalid params for a refused path, `-32002` resource not found for a missing file), so
 * the agent sees a JSON-RPC error naming the path.
 */
export class ClientFs {
  private roots?: Promise<{ root: string; home: string; worktrees?: string; events?: string }>;

  constructor(private readonly opts: ClientFsOptions) {}

  async readTextFile(params: ReadTextFileRequest): Promise<ReadTextFileResponse> {
    const range = {
      ...(params.line != null ? { line: params.line } : {}),
      ...(params.limit != null ? { limit: params.limit } : {}),
    };
    try {
      const target = await this.allowed(params.sessionId, params.path);
      const text = await readUtf8(target, params.path);
      const content = sliceLines(text, params.line ?? undefined, params.limit ?? undefined);
      const encoded = Buffer.byteLength(JSON.stringify(content));
      if (encoded > MAX_READ_JSON_BYTES) {
        throw RequestError.invalidParams(
          { path: params.path, maxBytes: MAX_READ_JSON_BYTES },
          `${params.path}: the text asked for is ${encoded} bytes once JSON-encoded, over the ${MAX_READ_JSON_BYTES}-byte limit of one ACP message; read it in parts with line and limit`,
        );
      }
      this.opts.record("fs_read_text_file", { path: params.path, ...range, bytes: Buffer.byteLength(content) });
      return { content };
    } catch (err) {
      throw this.failed("fs_read_text_file", { path: params.path, ...range }, err, "read");
    }
  }

  async writeTextFile(params: WriteTextFileRequest): Promise<WriteTextFileResponse> {
    const bytes = Buffer.byteLength(params.content);
    try {
      const target = await this.allowed(params.sessionId, params.path);
      const existing = await stat(target).catch((err: NodeJS.ErrnoException) => {
        if (err.code === "ENOENT") return undefined;
        throw err;
      });
      if (existing && !existing.isFile())
        throw RequestError.invalidParams({ path: params.path }, `${params.path} is not a regular file`);
      // Directories the agent's file needs get the usual mode (writeFileDurable's own are 0700, for $SVC_HOME).
      await mkdir(dirname(target), { recursive: true });
      await writeFileDurable(target, params.content, existing ? { mode: existing.mode & 0o7777 } : {});
      this.opts.record("fs_write_text_file", { path: params.path, bytes, created: !existing });
      return {};
    } catch (err) {
      throw this.failed("fs_write_text_file", { path: params.path, bytes }, err, "write");
    }
  }

  /** The real path `path` names, once it is known to be absolute, in `cwd`, outside the transcripts and outside `$SVC_HOME` (but for its worktrees). */
  private async allowed(sessionId: string, path: string): Promise<string> {
    if (!this.opts.isSession(sessionId))
      throw RequestError.invalidParams({ sessionId }, `unknown session ${JSON.stringify(sessionId)}`);
    if (typeof path !== "string" || !isAbsolute(path))
      throw RequestError.invalidParams({ path }, `path must be absolute, got ${JSON.stringify(path)}`);
    const { cwd, svcHome, worktreesRoot, eventsDir } = this.opts;
    const optional = (dir: string | undefined) =>
      dir === undefined ? Promise.resolve(undefined) : realpathOfExisting(dir);
    this.roots ??= Promise.all([
      realpathOfExisting(cwd),
      realpathOfExisting(svcHome),
      optional(worktreesRoot),
      optional(eventsDir),
    ]).then(
      ([root, home, worktrees, events]) => ({ root, home, worktrees, events }),
      (err: unknown) => {
        this.roots = undefined; // resolved again at the next call, not failed for good
        throw err;
      },
    );
    const { root, home, worktrees, events } = await this.roots;
    const real = await realpathOfExisting(resolve(path));
    const shown = real === resolve(path) ? path : `${path} (resolves to ${real})`;
    if (events !== undefined && within(real, events)) {
      throw RequestError.invalidParams(
        { path, eventsDir: events },
        `refused: ${shown} is inside the session transcripts folder ${events}, which the client never reads or writes`,
      );
    }
    if (within(real, home) && !(worktrees !== undefined && within(real, worktrees))) {
      throw RequestError.invalidParams(
        { path, svcHome: home },
        `refused: ${shown} is inside the svc home ${home}, which the client never reads or writes`,
      );
    }
    if (!within(real, root)) {
      throw RequestError.invalidParams(
        { path, allowedRoot: root },
        `refused: ${shown} is outside the session's working directory ${root}, the only place the client reads and writes`,
      );
    }
    return real;
  }

  /** Records a failed call and returns the error for the agent: a RequestError as is, a filesystem error with its code. */
  private failed(
    kind: "fs_read_text_file" | "fs_write_text_file",
    data: Record<string, unknown>,
    err: unknown,
    verb: string,
  ): RequestError {
    const out =
      err instanceof RequestError
        ? err
        : RequestError.internalError(
            { path: data.path },
            `could not ${verb} ${String(data.path)}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`,
          );
    this.opts.record(kind, { ...data, error: out.message });
    return out;
  }
}

/** True when `path` is `dir` or below it (both real, absolute paths). */
function within(path: string, dir: string): boolean {
  return path === dir || path.startsWith(dir.endsWith(sep) ? dir : dir + sep);
}

/**
 * `path` with every symlink in its existing part resolved (a dangling link is followed to where it
 * points, a relative one from its directory's real path, as the kernel does); the part that does not
 * exist yet is appended as written. `path` must be absolute and normalized.
 */
export async function realpathOfExisting(path: string, hops = 0): Promise<string> {
  try {
    return await realpath(path);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code !== "ENOENT" && code !== "ENOTDIR") throw err;
  }
  const parent = dirname(path);
  if (parent === path) return path;
  const link = await lstat(path).catch(() => undefined);
  if (link?.isSymbolicLink()) {
    if (hops >= MAX_LINK_HOPS) throw Object.assign(new Error(`too many symlinks resolving ${path}`), { code: "ELOOP" });
    // Not from `parent` as written: through a symlinked directory, `..` in the link leads elsewhere.
    return realpathOfExisting(resolve(await realpathOfExisting(parent, hops), await readlink(path)), hops + 1);
  }
  return join(await realpathOfExisting(parent, hops), basename(path));
}

/** The file at `real` as UTF-8 text: a regular file of at most {@link MAX_READ_BYTES}, valid UTF-8 (a BOM is kept). */
async function readUtf8(real: string, shown: string): Promise<string> {
  let handle;
  try {
    // Non-blocking, so a FIFO answers at once (and is refused below) instead of waiting for a writer.
    handle = await open(real, constants.O_RDONLY | constants.O_NONBLOCK);
  } catch (err) {
    // ENOTDIR: a part of the path is a file, so nothing exists at it either.
    const code = (err as NodeJS.ErrnoException).code;
    if (code === "ENOENT" || code === "ENOTDIR") throw RequestError.resourceNotFound(shown);
    throw err;
  }
  try {
    const st = await handle.stat();
    if (!st.isFile()) throw RequestError.invalidParams({ path: shown }, `${shown} is not a regular file`);
    const tooLarge = () =>
      RequestError.invalidParams(
        { path: shown, maxBytes: MAX_READ_BYTES },
        `${shown} is larger than ${MAX_READ_BYTES / 1024 / 1024} MiB (${MAX_READ_BYTES} bytes), the limit for fs/read_text_file`,
      );
    if (st.size > MAX_READ_BYTES) throw tooLarge();
    // Read to the end, bounded even if the file grew after the stat.
    const chunks: Buffer[] = [];
    let length = 0;
    for (;;) {
      const chunk = Buffer.alloc(Math.min(Math.max(st.size - length, 0) + 1, 1024 * 1024));
      const { bytesRead } = await handle.read(chunk, 0, chunk.length, null);
      if (bytesRead === 0) break;
      chunks.push(chunk.subarray(0, bytesRead));
      length += bytesRead;
      if (length > MAX_READ_BYTES) throw tooLarge();
    }
    try {
      return new TextDecoder("utf-8", { fatal: true, ignoreBOM: true }).decode(Buffer.concat(chunks, length));
    } catch {
      throw RequestError.invalidParams({ path: shown }, `${shown} is not UTF-8 text`);
    }
  } finally {
    await handle.close();
  }
}

/**
 * Lines `line` (1-based; 0 or absent is the first) to `line + limit - 1` of `text`, each with its own
 * line ending; `""` past the end. No `limit`: to the end of the file.
 */
export function sliceLines(text: string, line?: number, limit?: number): string {
  if (line === undefined && limit === undefined) return text;
  let start = 0;
  for (let n = 1; n < Math.max(1, line ?? 1); n++) {
    const nl = text.indexOf("\n", start);
    if (nl === -1) return "";
    start = nl + 1;
  }
  if (limit === undefined) return text.slice(start);
  let end = start;
  for (let n = 0; n < limit; n++) {
    const nl = text.indexOf("\n", end);
    if (nl === -1) return text.slice(start);
    end = nl + 1;
  }
  return text.slice(start, end);
}
