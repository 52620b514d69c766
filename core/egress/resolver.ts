import { lookup } from "node:dns/promises";

/** Name resolution as a service: the gate validates every answer it returns. */
export interface Resolver {
  lookupAll(hostname: string): Promise<Array<{ address: string; family: 4 | 6 }>>;
}

/** The system resolver: every A and AAAA answer, in the resolver's own order. */
export const systemResolver: Resolver = {
  async lookupAll(hostname) {
    const answers = await lookup(hostname, { all: true, verbatim: true });
    return answers.map((a) => ({ address: a.address, family: a.family === 6 ? 6 : 4 }));
  },
};
