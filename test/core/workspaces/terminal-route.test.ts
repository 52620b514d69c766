/**
 * `svc sessions terminal` spawns through the same path as agents: under `worktrees.isolation:
 * always` a terminal started in a repository gets a worktree, its `--root` (`worktreeRoot`) places
 * it, and the caller's session token attaches it and bounds it by the caller's delegation.
 */
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import type { RouteRequest } from "../../../core/plugin-api/http.js";
import { SessionMessaging } from "../../../core/sessions/messaging.js";
import { SESSION_ADAPTERS } from "../../../core/sessions/adapter-lookup.js";
import { SessionResumer } from "../../../core/sessions/resume.js";
import { sessionRoutes } from "../../../core/sessions/routes.js";
import { CONFIG, LOGGER, resolve } from "../../../core/tokens.js";
import { makeRepo, makeWsHarness, tempDir, type WsHarness } from "./support.js";

let h: WsHarness | undefined;
afterEach(async () => {
  await h?.cleanup();
  h = undefined;
});

function terminalRoute(w: WsHarness) {
  const config = resolve(w.c, CONFIG);
  const resumer = new SessionResumer({
    runtime: w.runtime,
    adapters: resolve(w.c, SESSION_ADAPTERS),
    earlierLives: () => Promise.resolve(),
    logger: resolve(w.c, LOGGER),
  });
  const route = sessionRoutes(w.runtime, new SessionMessaging(w.runtime, config), config, resumer).find(
    (r) => r.path === "/sessions/terminal",
  )!;
  return async (body: unknown, headers: Record<string, string> = {}) => {
    const req = {
      method: "POST",
      path: "/sessions/terminal",
      params: {},
      query: new URLSearchParams(),
      headers,
      body: Buffer.from(JSON.stringify(body)),
      json: () => body,
      principal: "token:stable",
      remoteAddress: "127.0.0.1",
    } as unknown as RouteRequest;
    return (await route.handler(req)) as {
      status: number;
      body: { descriptor: { id: string; parentId?: string; worktree?: { path: string } } };
    };
  };
}

describe("POST /sessions/terminal", () => {
  it("worktreeRoot places the terminal's tree under isolation always; a caller's token attaches it and a spent caller is refused", async () => {
    h = await makeWsHarness({ worktrees: { isolation: "always" } });
    const dir = await tempDir();
    const repo = await makeRepo(dir);
    const post = terminalRoute(h);
    const r = await post({ argv: ["sleep", "30"], cwd: repo, label: "term", worktreeRoot: join(dir, "trees") });
    expect(r.status).toBe(201);
    expect(r.body.descriptor.worktree?.path).toMatch(new RegExp(`^${join(dir, "trees", "app")}/term-`));

    const outside = await tempDir();
    const parent = await h.runtime.start({ adapter: "echo", cwd: outside });
    const token = h.runtime.workspaces.tokens.issue(parent.descriptor.id, "aa".repeat(24));
    const child = await post({ argv: ["sleep", "30"], cwd: outside }, { "x-svc-session-token": token });
    expect(child.body.descriptor.parentId).toBe(parent.descriptor.id);
    const spent = await h.runtime.start({ adapter: "echo", cwd: outside, delegation: 0 });
    const spentToken = h.runtime.workspaces.tokens.issue(spent.descriptor.id, "bb".repeat(24));
    await expect(post({ argv: ["true"], cwd: outside }, { "x-svc-session-token": spentToken })).rejects.toMatchObject({
      code: "forbidden",
    });
  });
});
