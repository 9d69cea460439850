/**
 * A variable that breaks its rule. The message names the variable and the rule, never the value:
 * it goes to logs, `npm run check-config` and the admin status, and a value may be a secret.
 */
export class ConfigError extends Error {
  override readonly name = "ConfigError";
  readonly variable: string;
  readonly rule: string;
  constructor(variable: string, rule: string) {
    super(`configuration error: ${variable} ${rule}`);
    this.variable = variable;
    this.rule = rule;
  }
}
