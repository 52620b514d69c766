import { readFileSync } from "node:fs";
import { join } from "node:path";
import { FIXTURES } from "./paths.js";

/** The test server certificate (signed by test/fixtures/tls/ca.crt, trusted via NODE_EXTRA_CA_CERTS). */
export const TEST_TLS = {
  key: readFileSync(join(FIXTURES, "tls/server.key")),
  cert: readFileSync(join(FIXTURES, "tls/server.crt")),
  caPath: join(FIXTURES, "tls/ca.crt"),
};
