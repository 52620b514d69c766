import { describe, expect, it } from "vitest";
import { expandRecipeEnv } from "../../../plugins/acp/recipe-env.js";

describe("a recipe's env may name the agent's final environment", () => {
  const recipe = { CODEX_CONFIG: '{"openai_base_url":"${OPENAI_BASE_URL}"}', PLAIN: "x" };

  it("replaces each ${NAME} with its value", () => {
    const env = expandRecipeEnv(recipe, { ...recipe, OPENAI_BASE_URL: "http://127.0.0.1:9/v1" });
    expect(env.CODEX_CONFIG).toBe('{"openai_base_url":"http://127.0.0.1:9/v1"}');
    expect(env.PLAIN).toBe("x");
  });

  it("leaves out a value that names a variable the environment lacks or has empty", () => {
    expect(expandRecipeEnv(recipe, { ...recipe })).not.toHaveProperty("CODEX_CONFIG");
    expect(expandRecipeEnv(recipe, { ...recipe, OPENAI_BASE_URL: "" })).not.toHaveProperty("CODEX_CONFIG");
  });

  it("gives ${NAME:+word} as word when NAME is set, and leaves it out when not", () => {
    const withWord = { MODEL_PROVIDER: "${OPENAI_BASE_URL:+svc}" };
    expect(expandRecipeEnv(withWord, { ...withWord, OPENAI_BASE_URL: "u" }).MODEL_PROVIDER).toBe("svc");
    expect(expandRecipeEnv(withWord, { ...withWord })).not.toHaveProperty("MODEL_PROVIDER");
  });

  it("gives ${NAME:-word} as NAME's value, or word when NAME is unset or empty", () => {
    const m = { MODEL: '{"model":"${SVC_MODEL:-gpt-5}"}' };
    expect(expandRecipeEnv(m, { ...m, SVC_MODEL: "gpt-6" }).MODEL).toBe('{"model":"gpt-6"}');
    expect(expandRecipeEnv(m, { ...m, SVC_MODEL: "" }).MODEL).toBe('{"model":"gpt-5"}');
    expect(expandRecipeEnv(m, { ...m }).MODEL).toBe('{"model":"gpt-5"}');
  });

  it("keeps $${ as a literal ${, reads its own name from what is inherited, and lets another layer's value stand", () => {
    expect(expandRecipeEnv({ A: "$${HOME}" }, { A: "$${HOME}", HOME: "/h" }).A).toBe("${HOME}");
    expect(expandRecipeEnv({ A: "${A}" }, { A: "${A}" })).not.toHaveProperty("A");
    // Its own name reads what the agent would inherit without the recipe.
    const sandbox = { IS_SANDBOX: "${IS_SANDBOX:+1}" };
    expect(expandRecipeEnv(sandbox, { ...sandbox }, { IS_SANDBOX: "yes" }).IS_SANDBOX).toBe("1");
    expect(expandRecipeEnv(sandbox, { ...sandbox }, {})).not.toHaveProperty("IS_SANDBOX");
    expect(expandRecipeEnv(recipe, { ...recipe, CODEX_CONFIG: "{}", OPENAI_BASE_URL: "u" }).CODEX_CONFIG).toBe("{}");
  });
});
