import { CliError, SpecFileError } from '../../../../src/cli/lib/errors';
import { EXIT } from '../../../../src/cli/lib/exit';

describe('CLI errors', () => {
  it('CliError carries the exit code it is given', () => {
    expect(new CliError('no such pipeline', EXIT.notFound)).toMatchObject({
      code: 'cli_error',
      exitCode: 4,
      message: 'no such pipeline',
    });
  });

  it('SpecFileError lists every error with its path and exits with the usage code', () => {
    const error = new SpecFileError('promo.json', [
      { path: 'steps.0.model', message: 'is not a known model' },
      { path: 'name', message: 'is required' },
    ]);
    expect(error.message).toBe(
      'invalid pipeline spec promo.json:\n  steps.0.model: is not a known model\n  name: is required',
    );
    expect(error).toMatchObject({ code: 'invalid_spec_file', exitCode: EXIT.usage, file: 'promo.json' });
    expect(error).toBeInstanceOf(CliError);
  });
});
