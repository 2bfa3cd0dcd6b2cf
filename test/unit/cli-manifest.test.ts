import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { CliError } from '../../src/cli/exit';
import { csvManifestRows, loadManifest, parseCsv } from '../../src/cli/manifest';
import { DATA_URI_LIMITS, inlineLocalFiles, loadSpecFile, SpecFileError } from '../../src/cli/spec-files';
import { isLocalServiceUrl } from '../../src/cli/quote';
import { ConfigError, loadEnv, loadEnvWithService } from '../../src/config';

const LONG_FORM = 'service-video-cinema-long-form-from-references';
const PNG = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==', 'base64');

let dir: string;
beforeAll(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'reelflow-manifest-'));
  fs.writeFileSync(path.join(dir, 'hero.png'), PNG);
  fs.writeFileSync(path.join(dir, 'a.json'), JSON.stringify({ name: 'a', steps: [{ id: 'g', model: LONG_FORM, input: { image_urls: ['hero.png'] } }] }));
});
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

describe('batch manifests', () => {
  it('reads quoted fields, escaped quotes, commas and CRLF, and skips blank lines', () => {
    expect(parseCsv('spec,name\r\n"specs/a, b.json","say ""hi"""\r\n\r\n c.json , c2 \n')).toEqual([
      ['spec', 'name'],
      ['specs/a, b.json', 'say "hi"'],
      ['c.json', 'c2'],
    ]);
    expect(parseCsv('a\nb')).toEqual([['a'], ['b']]);
    expect(() => parseCsv('"open')).toThrow(CliError);
  });

  it('maps rows by header and names the line of an empty spec or an unknown column', () => {
    expect(csvManifestRows('name,spec\nx,a.json\n,b.json\n')).toEqual([
      { spec: 'a.json', name: 'x', line: 2 },
      { spec: 'b.json', line: 3 },
    ]);
    expect(() => csvManifestRows('name,spec\nx,\n')).toThrow('CSV manifest line 2: the spec column is empty');
    expect(() => csvManifestRows('spec,prompt\na.json,hi\n')).toThrow('unknown column(s) prompt');
    expect(() => csvManifestRows('name\nx\n')).toThrow('must have a "spec" column');
  });

  it('loads a CSV manifest: one spec file run twice under two names, local files inlined', () => {
    const file = path.join(dir, 'm.csv');
    fs.writeFileSync(file, 'spec,name\na.json,first\na.json,second\n');
    const manifest = loadManifest(file);
    expect(manifest.items.map((s) => s.name)).toEqual(['first', 'second']);
    expect(manifest.items[0]?.steps[0]?.input.image_urls).toEqual([`data:image/png;base64,${PNG.toString('base64')}`]);
    fs.writeFileSync(file, 'spec\na.json\na.json\n');
    expect(() => loadManifest(file)).toThrow('two items are named "a"');
  });

  it('loads a JSON manifest of paths and inline specs; invalid items name the item and the path', () => {
    const file = path.join(dir, 'm.json');
    fs.writeFileSync(file, JSON.stringify({ name: 'b', concurrency: 3, items: ['a.json', { name: 'inline', steps: [{ id: 'g', model: LONG_FORM, input: { image_urls: ['hero.png'] } }] }] }));
    expect(loadManifest(file)).toMatchObject({ name: 'b', concurrency: 3, items: [{ name: 'a' }, { name: 'inline' }] });
    fs.writeFileSync(file, JSON.stringify([{ name: 'bad', steps: [{ id: 'g', model: LONG_FORM, input: { image_urls: ['hero.png'], duration: '7' } }] }]));
    expect(() => loadManifest(file)).toThrow(/items\.0[\s\S]*steps\.0\.input\.duration/);
  });
});

describe('local files in a spec', () => {
  it('names the path of a missing file and of one too large for a data URI', () => {
    const big = path.join(dir, 'big.mp4');
    fs.writeFileSync(big, '');
    fs.truncateSync(big, DATA_URI_LIMITS.fileBytes + 1);
    const spec = { name: 'x', steps: [{ id: 'u', model: 'service-upscale-video-fast', input: { video_url: 'big.mp4' } }, { id: 'g', model: LONG_FORM, input: { image_urls: ['https://example.com/a.png', 'nope.png'] } }] };
    const errors = inlineLocalFiles(spec, dir);
    expect(errors.map((e) => e.path)).toEqual(['steps.0.input.video_url', 'steps.1.input.image_urls.1']);
    expect(errors[0]?.message).toContain('more than the');
    expect(errors[0]?.message).toContain('https URL');
  });

  it('throws SpecFileError (exit 2) with every path', () => {
    const file = path.join(dir, 'bad.json');
    fs.writeFileSync(file, JSON.stringify({ name: 'x', steps: [{ id: 'g', model: 'nope', input: {} }] }));
    expect(() => loadSpecFile(file)).toThrow(SpecFileError);
    expect(() => loadSpecFile(file)).toThrow(/steps\.0\.model/);
  });
});

describe('configuration from the environment', () => {
  it('defaults suit a local dev server; the service is optional until a command needs it', () => {
    expect(loadEnv({}, {})).toEqual({ temporal: { address: 'localhost:7233', namespace: 'default', taskQueue: 'reelflow-pipelines' } });
    expect(loadEnvWithService({ REELFLOW_SERVICE_URL: 'http://127.0.0.1:8788/', REELFLOW_API_KEY: 'k', REELFLOW_WEBHOOK_SECRETS: 'a, b' })).toMatchObject({
      service: { url: 'http://127.0.0.1:8788', apiKey: 'k', idempotency: 'unknown' },
      webhookSecrets: ['a', 'b'],
    });
  });

  it('reads REELFLOW_SERVICE_IDEMPOTENCY (default unknown: the setting that never pays twice)', () => {
    const base = { REELFLOW_SERVICE_URL: 'http://127.0.0.1:8788', REELFLOW_API_KEY: 'k' };
    expect(loadEnvWithService({ ...base, REELFLOW_SERVICE_IDEMPOTENCY: 'honoured' }).service.idempotency).toBe('honoured');
    expect(loadEnvWithService({ ...base, REELFLOW_SERVICE_IDEMPOTENCY: 'unknown' }).service.idempotency).toBe('unknown');
    expect(() => loadEnvWithService({ ...base, REELFLOW_SERVICE_IDEMPOTENCY: 'yes' })).toThrow(/REELFLOW_SERVICE_IDEMPOTENCY: must be honoured or unknown/);
  });

  it('reads REELFLOW_EARLY_STATUS_CHECK_SECONDS (0 = none) and names it when it is not a number of seconds', () => {
    expect(loadEnv({}, { REELFLOW_EARLY_STATUS_CHECK_SECONDS: '3' }).earlyStatusCheckSeconds).toBe(3);
    expect(loadEnv({}, { REELFLOW_EARLY_STATUS_CHECK_SECONDS: '0' }).earlyStatusCheckSeconds).toBe(0);
    expect(loadEnv({}, {}).earlyStatusCheckSeconds).toBeUndefined();
    expect(() => loadEnv({}, { REELFLOW_EARLY_STATUS_CHECK_SECONDS: 'soon' })).toThrow(/REELFLOW_EARLY_STATUS_CHECK_SECONDS: must be a number of seconds/);
    expect(() => loadEnv({}, { REELFLOW_EARLY_STATUS_CHECK_SECONDS: '900' })).toThrow(/at most 600/);
  });

  it.each([
    [{ service: true }, {}, 'REELFLOW_SERVICE_URL'],
    [{ service: true }, { REELFLOW_SERVICE_URL: 'http://x' }, 'REELFLOW_API_KEY'],
    [{}, { REELFLOW_SERVICE_URL: 'not a url' }, 'REELFLOW_SERVICE_URL'],
    [{ webhookSecrets: true }, {}, 'REELFLOW_WEBHOOK_SECRETS'],
    [{}, { REELFLOW_WEBHOOK_SECRETS: 'a,,b' }, 'REELFLOW_WEBHOOK_SECRETS'],
    [{}, { TEMPORAL_ADDRESS: 'x' }, 'TEMPORAL_ADDRESS'],
  ])('%j %j → ConfigError naming %s, never its value', (needs, env, variable) => {
    let caught: unknown;
    try {
      loadEnv(needs, env);
    } catch (error) {
      caught = error;
    }
    expect(caught).toBeInstanceOf(ConfigError);
    expect((caught as ConfigError).variable).toBe(variable);
    expect((caught as Error).message.startsWith(`${variable}: `)).toBe(true);
    expect((caught as Error).message).not.toContain('a,,b');
  });

  it('treats loopback URLs as the local service', () => {
    expect(['http://127.0.0.1:8788', 'http://localhost:1', 'http://[::1]:2'].map(isLocalServiceUrl)).toEqual([true, true, true]);
    expect(isLocalServiceUrl('https://api.example.com')).toBe(false);
  });
});
