import { CONFIG_EXIT_CODE, ConfigError } from '../../../src/config/errors';

describe('ConfigError', () => {
  it('says VARIABLE: reason per issue, names the first and every variable once', () => {
    const error = new ConfigError([
      { variable: 'REELFLOW_API_KEY', reason: 'must be set' },
      { variable: 'TEMPORAL_ADDRESS', reason: 'must be host:port' },
      { variable: 'REELFLOW_API_KEY', reason: 'must not be blank' },
    ]);
    expect(error.message).toBe(
      'REELFLOW_API_KEY: must be set; TEMPORAL_ADDRESS: must be host:port; REELFLOW_API_KEY: must not be blank',
    );
    expect(error.variable).toBe('REELFLOW_API_KEY');
    expect(error.variables).toEqual(['REELFLOW_API_KEY', 'TEMPORAL_ADDRESS']);
    expect(error).toMatchObject({ code: 'config_invalid', name: 'ConfigError' });
  });

  it('builds a single issue with of()', () => {
    expect(ConfigError.of('REELFLOW_DEV_PORTS', 'must be a range').issues).toEqual([
      { variable: 'REELFLOW_DEV_PORTS', reason: 'must be a range' },
    ]);
  });

  it('still says something without issues', () => {
    const error = new ConfigError([]);
    expect(error.message).toBe('invalid configuration');
    expect(error.variable).toBe('');
  });

  it('stops processes with the usage exit code', () => {
    expect(CONFIG_EXIT_CODE).toBe(2);
  });
});
