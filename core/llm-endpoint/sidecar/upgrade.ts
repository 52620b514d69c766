/**
 * WebSocket upgrades are not proxied. OpenAI Codex first tries one on `GET /v1/responses`; it is
 * answered 426 Upgrade Required (an unknown path: 404), in the shape of the path's API, and the
 * connection is closed, so the client falls back to `POST /v1/responses` over HTTP.
 */
import type { Duplex } from "node:stream";
import type { LlmProvider } from "../protocol.js";
import { errorBody } from "./errors.js";

/** Answers the upgrade request on `socket` with an error and closes it; returns the status sent. */
export function refuseUpgrade(socket: Duplex, api: LlmProvider, path: string, known: boolean): number {
  const status = known ? 426 : 404;
  const body = errorBody(api, {
    status,
    kind: known ? "invalid_request_error" : "not_found_error",
    code: known ? "websocket_not_supported" : "unknown_url",
    message: known
      ? `llm-endpoint: ${path} is not served over WebSocket; call POST ${path} over HTTP`
      : `llm-endpoint: no WebSocket ${path}`,
  });
  const head = [
    `HTTP/1.1 ${status} ${known ? "Upgrade Required" : "Not Found"}`,
    "content-type: application/json",
    `content-length: ${Buffer.byteLength(body)}`,
    "connection: close",
  ];
  socket.on("error", () => socket.destroy());
  socket.end(`${head.join("\r\n")}\r\n\r\n${body}`);
  return status;
}
