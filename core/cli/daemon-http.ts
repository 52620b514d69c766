/**
 * One HTTP request to the local daemon over node:http. The CLI does not use `fetch` for this: in
 * Node 20 the first `fetch` loads undici (tens of milliseconds), more than `svc status` may take
 * in all. Idle keep-alive sockets are unref'd by the agent, so they never hold the process open.
 */
import { Agent, request } from "node:http";

export interface HttpAnswer {
  status: number;
  text: string;
}

const agent = new Agent({ keepAlive: true });

export function httpRequest(
  url: string,
  init: { method: string; headers: Record<string, string>; body?: string; timeoutMs: number },
): Promise<HttpAnswer> {
  return new Promise((resolve, reject) => {
    const headers =
      init.body === undefined
        ? init.headers
        : { ...init.headers, "content-length": String(Buffer.byteLength(init.body)) };
    const req = request(url, { method: init.method, headers, agent }, (res) => {
      const chunks: Buffer[] = [];
      res.on("data", (c: Buffer) => chunks.push(c));
      res.on("end", () => {
        clearTimeout(timer);
        resolve({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString("utf8") });
      });
      res.on("error", fail);
    });
    const timer = setTimeout(
      () => req.destroy(new Error(`no answer within ${init.timeoutMs / 1000} s`)),
      init.timeoutMs,
    );
    function fail(err: Error) {
      clearTimeout(timer);
      reject(err);
    }
    req.on("error", fail);
    req.end(init.body);
  });
}
