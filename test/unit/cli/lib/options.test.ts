import { Command, InvalidArgumentError } from 'commander';
import { followFlags, portOption, variableFlags } from '../../../../src/cli/lib/options';

describe('portOption', () => {
  it('parses a port and turns a bad one into a usage error', () => {
    expect(portOption('8710')).toBe(8710);
    expect(() => portOption('70000')).toThrow(InvalidArgumentError);
  });
});

describe('variableFlags', () => {
  it('maps set options onto their variables, naming the flag, and leaves unset ones out', () => {
    const flags = variableFlags(
      { port: 9000, host: undefined, allowPrivate: true, quiet: false, apiKey: ['k1', 'k2'] },
      {
        port: ['REELFLOW_SERVICE_PORT', '--port'],
        host: ['REELFLOW_SERVICE_HOST', '--host'],
        allowPrivate: ['REELFLOW_SERVICE_ALLOW_PRIVATE_WEBHOOKS', '--allow-private-webhooks'],
        quiet: ['REELFLOW_SERVICE_LOG', '--quiet'],
        apiKey: ['REELFLOW_SERVICE_API_KEYS', '--api-key'],
      },
    );
    expect(flags).toEqual({
      REELFLOW_SERVICE_PORT: { flag: '--port', value: '9000' },
      REELFLOW_SERVICE_ALLOW_PRIVATE_WEBHOOKS: { flag: '--allow-private-webhooks', value: 'true' },
      REELFLOW_SERVICE_API_KEYS: { flag: '--api-key', value: 'k1,k2' },
    });
  });
});

describe('followFlags', () => {
  it('adds --detach and --json, both off by default', () => {
    const command = followFlags(new Command('run').exitOverride(), 'the pipeline');
    expect(command.parse([], { from: 'user' }).opts()).toEqual({ detach: false, json: false });
    expect(command.parse(['--detach', '--json'], { from: 'user' }).opts()).toEqual({ detach: true, json: true });
  });
});
