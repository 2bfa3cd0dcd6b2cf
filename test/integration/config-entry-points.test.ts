import * as path from 'node:path';
import { runCli, runNode, type CliResult } from './cli-process';

/**
 * Every process entry point validates its configuration at boot and stops with exit 2 naming the
 * variable (and the flag, when one stood for it) — through the CLI and when run directly.
 */

/** Runs `src/workers/<name>.ts` in its own Node process with exactly `env` (plus PATH/HOME). */
function runEntry(name: string, env: Record<string, string>): Promise<CliResult> {
  return runNode(['-r', 'tsx/cjs', path.resolve(__dirname, '../../src/workers', `${name}.ts`)], env);
}

describe('configuration errors at boot exit 2 naming the variable', () => {
  it.each([
    [['bridge'], {}, 'REELFLOW_WEBHOOK_SECRETS: must be set'],
    [
      ['bridge', '--path', 'hooks'],
      { REELFLOW_WEBHOOK_SECRETS: 'whsec_a' },
      'REELFLOW_BRIDGE_PATH: (--path) must be an absolute path',
    ],
    [['service', '--port', '0'], {}, 'REELFLOW_SERVICE_DATA_DIR: must be set'],
    [
      ['service', '--data-dir', '/tmp/never-created', '--concurrency', '0'],
      {},
      'REELFLOW_SERVICE_CONCURRENCY: (--concurrency) must be at least 1',
    ],
    [['worker'], { REELFLOW_SERVICE_URL: 'http://127.0.0.1:1' }, 'REELFLOW_API_KEY: must be set'],
    // Before anything of the stack starts.
    [['dev'], { REELFLOW_MEDIA_STORE: 'ftp://media' }, 'REELFLOW_MEDIA_STORE: must be file://<dir> or s3://'],
  ])('reelflow %j with %j', async (args, env, message) => {
    const result = await runCli(args, env);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain(`configuration error: ${message}`);
    expect(result.stderr).not.toContain('whsec_a');
  });

  it.each([
    [
      'bridge',
      { REELFLOW_WEBHOOK_SECRETS: 'whsec_a', REELFLOW_BRIDGE_PORT: '99999' },
      'reelflow bridge: REELFLOW_BRIDGE_PORT: must be a port number',
    ],
    [
      'local-service',
      { REELFLOW_SERVICE_DATA_DIR: '/tmp/never-created', REELFLOW_SERVICE_RENDER: 'gpu' },
      'reelflow service: REELFLOW_SERVICE_RENDER: must be one of ffmpeg, stub',
    ],
    [
      'worker',
      { REELFLOW_SERVICE_URL: 'http://127.0.0.1:1', REELFLOW_API_KEY: 'k', REELFLOW_METRICS_PORT: 'x' },
      'reelflow worker: REELFLOW_METRICS_PORT: must be a port number',
    ],
  ])('src/workers/%s.ts run directly', async (name, env, message) => {
    const result = await runEntry(name, env);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain(message);
  });
});
