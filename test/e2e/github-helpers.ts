/** Helpers for the GitHub-provider end-to-end tests: a daemon with the fake gh on PATH, an MCP client, an /events reader. */
import { cp, mkdtemp, readFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { delimiter, join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { FIXTURES } from "../support/paths.js";

export async function fakeGhEnv(
  fixture: string,
): Promise<{ env: NodeJS.ProcessEnv; dir: string; calls(): Promise<Array<Record<string, any>>> }> {
  const dir = await mkdtemp(join(tmpdir(), "e2e-fake-gh-"));
  await cp(join(FIXTURES, "fake-gh", fixture), dir, { recursive: true });
  const log = join(dir, "calls.jsonl");
  return {
    dir,
    env: {
      PATH: `${join(FIXTURES, "fake-gh/bin")}${delimiter}${process.env.PATH}`,
      FAKE_GH_DIR: dir,
      FAKE_GH_LOG: log,
    },
    calls: async () =>
      (await readFile(log, "utf8").catch(() => ""))
        .split("\n")
        .filter(Boolean)
        .map((l) => JSON.parse(l) as Record<string, any>),
  };
}

export async function mcpClient(
  baseUrl: string,
  token?: string,
): Promise<Client & { json(name: string, args?: Record<string, unknown>): Promise<any> }> {
  const client = new Client({ name: "svc-e2e", version: "0.0.0" });
  await client.connect(
    new StreamableHTTPClientTransport(
      new URL("/mcp", baseUrl),
      token ? { requestInit: { headers: { authorization: `Bearer ${token}` } } } : undefined,
    ),
  );
  return Object.assign(client, {
    async json(name: string, args: Record<string, unknown> = {}) {
      const out = await client.callTool({ name, arguments: args });
      const parsed = JSON.parse((out.content as Array<{ text: string }>)[0]!.text);
      if (out.isError) throw Object.assign(new Error(`${name} failed: ${JSON.stringify(parsed)}`), { result: parsed });
      return parsed;
    },
  });
}

export interface StreamedEvent {
  id: number;
  type: string;
  data: any;
}

/** Reads `/events` in the background; `waitFor` polls what arrived. */
export async function eventStream(baseUrl: string) {
  const controller = new AbortController();
  const res = await fetch(`${baseUrl}/events`, { headers: { accept: "text/event-stream" }, signal: controller.signal });
  const events: StreamedEvent[] = [];
  let buffer = "";
  const pump = (async () => {
    const decoder = new TextDecoder();
    try {
      for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
        buffer += decoder.decode(chunk, { stream: true });
        let i: number;
        while ((i = buffer.indexOf("\n\n")) >= 0) {
          const block = buffer.slice(0, i);
          buffer = buffer.slice(i + 2);
          const data = /^data: (.*)$/m.exec(block)?.[1];
          const id = /^id: (\d+)$/m.exec(block)?.[1];
          if (data && id) {
            const parsed = JSON.parse(data);
            events.push({ id: Number(id), type: parsed.type, data: parsed.data });
          }
        }
      }
    } catch {
      /* closed */
    }
  })();
  return {
    events,
    of: (type: string) => events.filter((e) => e.type === type),
    async waitFor(pred: () => boolean, what: string, ms = 60_000) {
      const deadline = Date.now() + ms;
      while (!pred()) {
        if (Date.now() > deadline)
          throw new Error(`timed out waiting for ${what}; got ${JSON.stringify(events.map((e) => e.type))}`);
        await new Promise((r) => setTimeout(r, 25));
      }
    },
    async close() {
      controller.abort();
      await pump;
    },
  };
}
