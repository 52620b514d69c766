import type { HttpMethod, RouteDef, RouteRegistry } from "../plugin-api/http.js";
import { SvcError } from "../errors.js";

interface CompiledRoute {
  def: RouteDef;
  segments: string[];
  rest: boolean;
}

export interface RouteMatch {
  def: RouteDef;
  params: Record<string, string>;
}

/** The daemon's routes: core routes and those plugins add. Paths like `/sentinels/:id` or `/conversations/*`. */
export class RouteTable implements RouteRegistry {
  private readonly routes: CompiledRoute[] = [];

  add(def: RouteDef): void {
    const rest = def.path.endsWith("/*");
    const base = rest ? def.path.slice(0, -2) : def.path;
    const segments = base.split("/").filter(Boolean);
    const clash = this.routes.find((r) => r.def.method === def.method && r.def.path === def.path);
    if (clash) throw new SvcError("conflict", `route ${def.method} ${def.path} is already registered`);
    this.routes.push({ def, segments, rest });
  }

  /** The route for `method path`, or the list of methods the path allows (for a 405). */
  match(method: string, path: string): RouteMatch | { allowed: HttpMethod[] } | undefined {
    const parts = path.split("/").filter(Boolean).map(safeDecode);
    const allowed: HttpMethod[] = [];
    for (const r of this.routes) {
      const params = matchSegments(r, parts);
      if (!params) continue;
      if (r.def.method === method) return { def: r.def, params };
      allowed.push(r.def.method);
    }
    return allowed.length ? { allowed } : undefined;
  }
}

function matchSegments(r: CompiledRoute, parts: string[]): Record<string, string> | undefined {
  if (r.rest ? parts.length < r.segments.length : parts.length !== r.segments.length) return undefined;
  const params: Record<string, string> = {};
  for (let i = 0; i < r.segments.length; i++) {
    const seg = r.segments[i]!;
    if (seg.startsWith(":")) params[seg.slice(1)] = parts[i]!;
    else if (seg !== parts[i]) return undefined;
  }
  if (r.rest) params["*"] = parts.slice(r.segments.length).join("/");
  return params;
}

function safeDecode(s: string): string {
  try {
    return decodeURIComponent(s);
  } catch {
    return s;
  }
}
