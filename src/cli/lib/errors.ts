import { ReelflowError, type FieldError } from '../../contract';
import { EXIT, type ExitCode } from './exit';

/** Codes of the CLI's own errors. */
export type CliErrorCode = 'cli_error' | 'invalid_spec_file';

/** An error the CLI reports as one message and a chosen exit code (no stack trace). */
export class CliError extends ReelflowError {
  readonly code: CliErrorCode = 'cli_error';
  constructor(
    message: string,
    readonly exitCode: ExitCode,
  ) {
    super(message);
  }
}

/** An invalid spec: every error with its path; exit code 2. */
export class SpecFileError extends CliError {
  override readonly code = 'invalid_spec_file';
  constructor(
    readonly file: string,
    readonly errors: FieldError[],
  ) {
    super(`invalid pipeline spec ${file}:\n${errors.map((e) => `  ${e.path}: ${e.message}`).join('\n')}`, EXIT.usage);
  }
}
