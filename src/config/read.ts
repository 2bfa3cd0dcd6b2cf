import { ConfigError, type ConfigIssue } from './errors';
import { VARIABLES, type VariableName, type VariableValue } from './variables';

/** The environment as processes see it (process.env, or a plain object in tests). */
export type Env = Readonly<Record<string, string | undefined>>;

/** A command-line flag that stands for a variable: its text, and how it was spelled (named in errors). */
export interface FlagValue {
  flag: string;
  value: string;
}

/** Flags given for variables; a flag wins over the variable. */
export type Flags = Partial<Record<VariableName, FlagValue>>;

/**
 * The set text of a variable (a flag for it first), trimmed; undefined when unset, empty or only
 * whitespace. THE empty-value rule of every process (docs/configuration.md).
 */
export function textOf(env: Env, name: VariableName, flags: Flags = {}): string | undefined {
  const text = (flags[name]?.value ?? env[name])?.trim();
  return text ? text : undefined;
}

/** Whether `name` is set (not unset, empty or blank): for checks that a setting was chosen, not defaulted. */
export function variableIsSet(name: VariableName, env: Env = process.env): boolean {
  return textOf(env, name) !== undefined;
}

/** The issue for `name`, saying which flag when the value came from one. */
export function issueFor(name: VariableName, reason: string, flags: Flags = {}): ConfigIssue {
  const flag = flags[name]?.flag;
  return { variable: name, reason: flag ? `(${flag}) ${reason}` : reason };
}

type Values<N extends VariableName, R extends N> = {
  [P in N]: P extends R ? NonNullable<VariableValue<P>> : VariableValue<P>;
};

/**
 * Reads and parses the variables `names` (each by its catalog entry in ./variables.ts); `required`
 * ones must be set. Every bad or missing variable is collected into one ConfigError (never a value).
 */
export function readVariables<const N extends VariableName, const R extends N = never>(
  names: readonly N[],
  env: Env,
  options: { required?: readonly R[]; flags?: Flags } = {},
): Values<N, R> {
  const issues: ConfigIssue[] = [];
  const values: Record<string, unknown> = {};
  for (const name of names) {
    const text = textOf(env, name, options.flags);
    if (text === undefined && (options.required as readonly N[] | undefined)?.includes(name)) {
      issues.push(issueFor(name, `must be set (${VARIABLES[name].description})`, options.flags));
      continue;
    }
    const parsed = VARIABLES[name].schema.safeParse(text);
    if (parsed.success) values[name] = parsed.data;
    else issues.push(issueFor(name, parsed.error.issues[0]?.message ?? 'invalid', options.flags));
  }
  if (issues.length > 0) throw new ConfigError(issues);
  return values as Values<N, R>;
}
