/**
 * A variable that breaks its rule. The message names the variable and the rule, never the value:
 * it is shown in the Worker's 500 answer and logs, and a value may be a secret.
 */
export class ConfigError extends Error {
  override readonly name = "ConfigError";
  readonly variable: string;
  constructor(variable: string, rule: string) {
    super(`configuration error: ${variable} ${rule}`);
    this.variable = variable;
  }
}
