/** Checks on the JSON Schemas svc publishes (MCP tools, `events/list`): nothing left undescribed. */

type Schema = Record<string, any>;

/** The object branches of a schema (itself, or those of its anyOf / oneOf). */
function objectBranches(schema: Schema | undefined): Schema[] {
  if (!schema || typeof schema !== "object") return [];
  const alts = [...(schema.anyOf ?? []), ...(schema.oneOf ?? [])] as Schema[];
  return [schema, ...alts.flatMap(objectBranches)].filter((s) => s.properties || s.items);
}

/** Paths of the properties (at any depth) of `schema` that have no description. */
export function undescribedProperties(schema: Schema, path = ""): string[] {
  const out: string[] = [];
  for (const branch of objectBranches(schema)) {
    for (const [key, prop] of Object.entries((branch.properties ?? {}) as Record<string, Schema>)) {
      const p = path ? `${path}.${key}` : key;
      if (typeof prop.description !== "string" || !prop.description) out.push(p);
      out.push(...undescribedProperties(prop, p));
    }
    if (branch.items) out.push(...undescribedProperties(branch.items as Schema, `${path}[]`));
  }
  return [...new Set(out)];
}

/** Paths of the keys of `value` (at any depth) that `schema` does not declare. */
export function undeclaredKeys(value: unknown, schema: Schema, path = ""): string[] {
  if (typeof value !== "object" || value === null) return [];
  if (Array.isArray(value)) {
    const items = objectBranches(schema).find((b) => b.items)?.items as Schema | undefined;
    return items ? value.flatMap((v, i) => undeclaredKeys(v, items, `${path}[${i}]`)) : [];
  }
  const branches = objectBranches(schema).filter((b) => b.properties);
  const out: string[] = [];
  for (const [key, v] of Object.entries(value)) {
    const p = path ? `${path}.${key}` : key;
    const prop = branches.map((b) => b.properties[key] as Schema | undefined).find(Boolean);
    if (!prop) out.push(p);
    else out.push(...undeclaredKeys(v, prop, p));
  }
  return out;
}
