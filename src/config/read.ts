import { readFileSync } from 'node:fs';
import { ConfigError, type ConfigIssue } from './errors';
import { VARIABLES, type VariableName, type VariableSpec, type VariableValue } from './variables';

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
  const fromFile = secretFileText(env, name);
  if (text && fromFile !== undefined) throw ConfigError.of(name, `set either ${name} or ${name}_FILE, not both`);
  if (text) return text;
  return fromFile ? fromFile : undefined;
}

/**
 * The Docker / Kubernetes secret convention: a secret variable may instead name a file holding its
 * value in `<NAME>_FILE` (e.g. `/run/secrets/reelflow_api_key`). The file's text is trimmed like a
 * variable's (a trailing newline is not part of the secret). Undefined when `<NAME>_FILE` is unset or
 * the variable is not a secret; a ConfigError naming `<NAME>_FILE` and the path (never the content)
 * when the file cannot be read.
 */
function secretFileText(env: Env, name: VariableName): string | undefined {
  if (!isSecret(name)) return undefined;
  const fileVariable = `${name}_FILE`;
  const file = env[fileVariable]?.trim();
  if (!file) return undefined;
  try {
    return readFileSync(file, 'utf8').trim();
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code ?? 'unreadable';
    throw ConfigError.of(fileVariable, `cannot read ${file} (${code})`);
  }
}

function isSecret(name: VariableName): boolean {
  const spec: VariableSpec = VARIABLES[name];
  return spec.secret === true;
}

/** The variables that may be given as `<NAME>_FILE`: every secret of the catalog. */
export const SECRET_FILE_VARIABLES: readonly VariableName[] = (Object.keys(VARIABLES) as VariableName[]).filter(
  isSecret,
);

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
