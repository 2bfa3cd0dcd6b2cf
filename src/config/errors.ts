/** One problem with one setting: the variable (never its value) and the reason. */
export interface ConfigIssue {
  variable: string;
  reason: string;
}

/**
 * A missing or invalid setting, from the environment or from a flag standing for a variable. Every
 * process stops on it at boot with exit code 2. `variable` names the first offending variable,
 * `variables` every one; the message is `VARIABLE: reason` per issue and never carries a value
 * (keys and secrets must not reach logs).
 */
export class ConfigError extends Error {
  /** Stable code scripts and tests branch on. */
  readonly code = 'config_invalid' as const;
  readonly issues: ConfigIssue[];

  constructor(issues: ConfigIssue[]) {
    super(issues.map((issue) => `${issue.variable}: ${issue.reason}`).join('; ') || 'invalid configuration');
    this.name = 'ConfigError';
    this.issues = issues;
  }

  /** The first variable at fault. */
  get variable(): string {
    return this.issues[0]?.variable ?? '';
  }

  /** Every variable at fault, each once. */
  get variables(): string[] {
    return [...new Set(this.issues.map((issue) => issue.variable))];
  }

  /** Shorthand for a single issue. */
  static of(variable: string, reason: string): ConfigError {
    return new ConfigError([{ variable, reason }]);
  }
}

/** Exit code of a process that stops on a ConfigError (the CLI's usage code). */
export const CONFIG_EXIT_CODE = 2;

/**
 * A feature needs a package reelflow lists as an optional peer dependency (ffmpeg/ffprobe installers, the
 * AWS SDK, pg, Fastify) and it is not installed. The message names the package, the feature and the
 * `npm install` that fixes it.
 */
export class MissingPackageError extends Error {
  /** Stable code scripts and tests branch on. */
  readonly code = 'package_missing' as const;

  constructor(
    /** The package to install, e.g. `pg`. */
    readonly packageName: string,
    /** What needed it, e.g. `a PostgreSQL route store (REELFLOW_ROUTE_STORE=postgres://…)`. */
    readonly feature: string,
    options?: { cause?: unknown },
  ) {
    super(`${feature} needs the package ${packageName}, which is not installed: npm install ${packageName}`, options);
    this.name = 'MissingPackageError';
  }
}
