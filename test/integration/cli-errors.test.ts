import * as fs from 'node:fs';
import * as net from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import { runCli } from './cli-process';

/**
 * CLI error paths that need no running stack: configuration errors naming the variable, Temporal or
 * the service unreachable (exit 3 with the address), usage errors (exit 2), help on every command.
 */

let dir: string;
let spec: string;
/** A loopback port with nothing listening (bound, then released). */
let closedPort: number;

beforeAll(async () => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'reelflow-cli-errors-'));
  spec = path.join(dir, 'spec.json');
  fs.writeFileSync(
    spec,
    JSON.stringify({
      name: 'err',
      steps: [
        {
          id: 'g',
          model: 'service-video-cinema-long-form-from-references',
          input: { image_urls: ['https://example.com/a.png'] },
        },
      ],
    }),
  );
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  closedPort = (server.address() as net.AddressInfo).port;
  await new Promise<void>((resolve) => server.close(() => resolve()));
});

afterAll(() => {
  if (dir) fs.rmSync(dir, { recursive: true, force: true });
});

describe('reelflow CLI error paths', () => {
  it('an unreachable Temporal exits 3 naming the address and what to start', async () => {
    const address = `127.0.0.1:${closedPort}`;
    const result = await runCli(['status', 'pipeline/x'], { TEMPORAL_ADDRESS: address });
    expect(result.code).toBe(3);
    expect(result.stderr).toContain(`cannot reach Temporal at ${address}`);
    expect(result.stderr).toContain('reelflow dev');
  });

  it('an unreachable service exits 3 naming its URL', async () => {
    const url = `http://127.0.0.1:${closedPort}`;
    const result = await runCli(['quote', spec], { REELFLOW_SERVICE_URL: url, REELFLOW_API_KEY: 'k' });
    expect(result.code).toBe(3);
    expect(result.stderr).toContain(url);
    expect(result.stderr).toContain('reelflow service');
  });

  it.each([
    [['status', 'x'], { TEMPORAL_ADDRESS: 'not an address' }, 'TEMPORAL_ADDRESS'],
    [['status', 'x'], { TEMPORAL_TLS_CLIENT_CERT_PATH: '/tmp/c.pem' }, 'TEMPORAL_TLS_CLIENT_KEY_PATH'],
    [['quote', 'SPEC'], {}, 'REELFLOW_SERVICE_URL'],
    [['quote', 'SPEC'], { REELFLOW_SERVICE_URL: 'ftp://example.com' }, 'REELFLOW_SERVICE_URL'],
    [['quote', 'SPEC'], { REELFLOW_SERVICE_URL: 'http://127.0.0.1:9' }, 'REELFLOW_API_KEY'],
  ])('a configuration error exits 2 naming the variable (%j %j)', async (args, env, variable) => {
    const result = await runCli(
      args.map((a) => (a === 'SPEC' ? spec : a)),
      env,
    );
    expect(result.code).toBe(2);
    expect(result.stderr).toContain(`configuration error: ${variable}:`);
  });

  it('usage errors exit 2: invalid option values, missing arguments, unknown commands', async () => {
    for (const args of [
      ['service', '--port', '99999', '--data-dir', dir],
      ['batch', 'm.json', '--concurrency', '0'],
      ['run'],
      ['frobnicate'],
    ]) {
      const result = await runCli(args);
      expect([args, result.code]).toEqual([args, 2]);
    }
  });

  it('a spec that is not JSON exits 2 naming the file', async () => {
    const broken = path.join(dir, 'broken.json');
    fs.writeFileSync(broken, '{ not json');
    const result = await runCli(['run', broken]);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain(`${broken} is not valid JSON`);
  });

  it('reelflow --version prints the package version and exits 0', async () => {
    const { version } = JSON.parse(fs.readFileSync(path.join(__dirname, '..', '..', 'package.json'), 'utf8')) as {
      version: string;
    };
    for (const flag of ['--version', '-V']) {
      const result = await runCli([flag]);
      expect({ flag, code: result.code, stdout: result.stdout.trim() }).toEqual({ flag, code: 0, stdout: version });
    }
  });

  it('every command has help (exit 0), and the top-level help lists the exit codes', async () => {
    const top = await runCli(['--help']);
    expect(top.code).toBe(0);
    expect(top.stdout).toContain('4  unknown pipeline or batch id');
    for (const command of ['run', 'batch', 'status', 'cancel', 'quote', 'outputs']) {
      const result = await runCli([command, '--help']);
      expect([command, result.code]).toEqual([command, 0]);
      expect(result.stdout).toContain(`Usage: reelflow ${command}`);
    }
  });
});
