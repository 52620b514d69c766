/**
 * A recipe's `env` values may name variables of the agent's final environment as `${NAME}` (for
 * example a base URL the model proxy sets per session). Each reference is replaced by its value;
 * a value that names a variable the environment lacks (or has empty) is left out entirely, so an
 * agent is never started with half a setting. As in the shell, `${NAME:+word}` is `word` when NAME
 * is set and non-empty (so that a setting can go with another one), and `${NAME:-word}` is NAME's
 * value, or `word` when it is unset or empty (which never leaves the value out). `$${` is a literal `${`.
 * A value naming its own variable reads what the agent would inherit without the recipe
 * (`inherited`, the daemon's environment): `IS_SANDBOX: "${IS_SANDBOX:+1}"` turns a set IS_SANDBOX
 * into 1 and leaves an unset one unset.
 */
const REF = /\$(\$?)\{([A-Za-z_][A-Za-z0-9_]*)(?::([+-])([^}]*))?\}/g;

export function expandRecipeEnv(
  recipeEnv: Readonly<Record<string, string>> | undefined,
  env: NodeJS.ProcessEnv,
  inherited: NodeJS.ProcessEnv = {},
): NodeJS.ProcessEnv {
  if (!recipeEnv) return env;
  const out: NodeJS.ProcessEnv = { ...env };
  for (const [name, value] of Object.entries(recipeEnv)) {
    if (!value.includes("${")) continue;
    // Another layer (the session's own env) set this variable over the recipe: it stands.
    if (env[name] !== value) continue;
    let missing = false;
    const expanded = value.replace(REF, (whole: string, literal: string, ref: string, op?: string, word?: string) => {
      if (literal) return whole.slice(1);
      const v = ref === name ? inherited[ref] : env[ref];
      const unset = v === undefined || v === "";
      if (op === "-") return unset ? word! : v;
      if (unset) missing = true;
      return op === "+" ? word! : (v ?? "");
    });
    if (missing) delete out[name];
    else out[name] = expanded;
  }
  return out;
}
