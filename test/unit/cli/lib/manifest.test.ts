import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { createHash } from 'node:crypto';
import { CliError, SpecFileError } from '../../../../src/cli/lib/errors';
import { cellValue, csvManifestRows, loadManifest, MAX_ROW_ERRORS, parseCsv } from '../../../../src/cli/lib/manifest';
import { loadSpecFile, storeLocalMedia, type SpecMedia } from '../../../../src/cli/lib/spec-files';
import { MEDIA_LIMITS } from '../../../../src/contract';
import { createFileStore } from '../../../../src/media/store';
import { isLocalServiceUrl } from '../../../../src/cli/lib/quote';
import { ConfigError, loadEnv, loadEnvWithService } from '../../../../src/config';

const LONG_FORM = 'service-video-cinema-long-form-from-references';
const PNG = Buffer.from(
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==',
  'base64',
);

let dir: string;
let media: SpecMedia;
beforeAll(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'reelflow-manifest-'));
  media = { store: createFileStore(path.join(dir, 'media')) };
  fs.writeFileSync(path.join(dir, 'hero.png'), PNG);
  fs.writeFileSync(
    path.join(dir, 'a.json'),
    JSON.stringify({ name: 'a', steps: [{ id: 'g', model: LONG_FORM, input: { image_urls: ['hero.png'] } }] }),
  );
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
    expect(() => csvManifestRows('name,spec\nx,\n')).toThrow('line 2, column 2: spec: is empty');
    expect(() => csvManifestRows('spec,prompt\na.json,hi\n')).toThrow('line 1, column 2: prompt: unknown column');
    // A quoted field over two lines: the next row's line is still right.
    expect(csvManifestRows('spec,generate.prompt\na.json,"two\nlines"\nb.json,x\n').map((r) => r.line)).toEqual([2, 4]);
    expect(() => csvManifestRows('name\nx\n')).toThrow('the header has no "spec" column');
  });

  it('loads a CSV manifest: one spec file run twice under two names, local files put into the store', async () => {
    const file = path.join(dir, 'm.csv');
    fs.writeFileSync(file, 'spec,name\na.json,first\na.json,second\n');
    const manifest = await loadManifest(file, undefined, media);
    expect(manifest.items.map((s) => s.name)).toEqual(['first', 'second']);
    const sha = createHash('sha256').update(PNG).digest('hex');
    expect(manifest.items[0]?.steps[0]?.input.image_urls).toEqual([
      { $media: `sha256:${sha}`, type: 'image/png', bytes: PNG.length },
    ]);
    // Hashed and stored once for the whole manifest: the first pipeline is its referrer (`reelflow batch` adds the batch).
    expect((await media.store.referrers(sha)).map((r) => r.pipeline)).toContain('first');
    // Unnamed rows of one spec are told apart by their row number; a name given twice is refused.
    fs.writeFileSync(file, 'spec\na.json\na.json\n');
    expect((await loadManifest(file, undefined, media)).items.map((s) => s.name)).toEqual(['a-1', 'a-2']);
    fs.writeFileSync(file, 'spec,name\na.json,x\na.json,x\n');
    await expect(loadManifest(file, undefined, media)).rejects.toThrow(
      /line 3, column 2: name: "x" is the name of line 2 too/,
    );
  });

  it('applies <step>.<field> columns to one spec per row: text, numbers where the spec has one, |-lists and local paths', async () => {
    fs.writeFileSync(
      path.join(dir, 'two.json'),
      JSON.stringify({
        name: 'two',
        steps: [
          { id: 'generate', model: LONG_FORM, input: { image_urls: ['hero.png'], prompt: 'base', duration: '4' } },
        ],
      }),
    );
    fs.writeFileSync(path.join(dir, 'other.png'), Buffer.concat([PNG, Buffer.from([0])]));
    const file = path.join(dir, 'variants.csv');
    fs.writeFileSync(
      file,
      'spec,name,generate.prompt,generate.image_urls\n' +
        'two.json,v1,"a cat, in the rain",\n' +
        'two.json,v2,,other.png|hero.png\n',
    );
    const { items } = await loadManifest(file, undefined, media);
    expect(items.map((s) => [s.name, s.steps[0]?.input.prompt])).toEqual([
      ['v1', 'a cat, in the rain'],
      ['v2', 'base'],
    ]);
    const urls = items[1]?.steps[0]?.input.image_urls as Array<{ $media: string }>;
    expect(urls).toHaveLength(2);
    expect(urls.every((u) => u.$media.startsWith('sha256:'))).toBe(true);
    expect(urls[0]?.$media).not.toEqual(urls[1]?.$media);
  });

  it('reads JSON Lines rows with typed override values', async () => {
    const file = path.join(dir, 'rows.jsonl');
    fs.writeFileSync(
      file,
      [
        JSON.stringify({ spec: 'a.json', name: 'j1', 'g.image_urls': ['hero.png'] }),
        '',
        JSON.stringify({ spec: 'a.json', name: 'j2' }),
      ].join('\n'),
    );
    expect((await loadManifest(file, undefined, media)).items.map((s) => s.name)).toEqual(['j1', 'j2']);
  });

  it('refuses every bad row before anything starts, each with its line and field path, up to a bound', async () => {
    const file = path.join(dir, 'bad.csv');
    const rows = ['spec,name,g.duration,nope.prompt'];
    rows.push('a.json,ok,,');
    rows.push('a.json,bad-duration,7,');
    rows.push('a.json,bad-step,,hello');
    rows.push('missing.json,gone,,');
    for (let i = 0; i < 60; i += 1) rows.push(`a.json,many-${i},9,`);
    fs.writeFileSync(file, `${rows.join('\n')}\n`);
    const failure = await loadManifest(file, undefined, media).then(
      () => null,
      (error: unknown) => error as CliError,
    );
    expect(failure).toBeInstanceOf(CliError);
    const message = (failure as CliError).message;
    expect(message).toMatch(/63 of 64 row\(s\) refused; nothing was started/);
    expect(message).toMatch(/line 3, column 3: steps\.0\.input\.duration: /);
    expect(message).toMatch(/line 4, column 4: nope\.prompt: the spec has no step "nope" \(its steps: g\)/);
    expect(message).toMatch(/line 5, column 1: spec: cannot read .*missing\.json/);
    expect(message.split('\n').filter((l) => /^ {2}line/.test(l))).toHaveLength(MAX_ROW_ERRORS);
    expect(message).toContain('63 bad row(s) in all');
  });

  it('turns cells into values by the field: JSON, numbers, booleans, |-lists, text', () => {
    expect(cellValue('[1,2]', 'x', 'a')).toEqual([1, 2]);
    expect(cellValue('5', 'seed', 1)).toBe(5);
    expect(cellValue('5', 'duration', '4')).toBe('5');
    expect(cellValue('true', 'flag', false)).toBe(true);
    expect(cellValue('a.png | b.png', 'image_urls', undefined)).toEqual(['a.png', 'b.png']);
  });

  it('loads a JSON manifest of paths and inline specs; invalid items name the item and the path', async () => {
    const file = path.join(dir, 'm.json');
    fs.writeFileSync(
      file,
      JSON.stringify({
        name: 'b',
        concurrency: 3,
        items: [
          'a.json',
          { name: 'inline', steps: [{ id: 'g', model: LONG_FORM, input: { image_urls: ['hero.png'] } }] },
        ],
      }),
    );
    expect(await loadManifest(file, undefined, media)).toMatchObject({
      name: 'b',
      concurrency: 3,
      items: [{ name: 'a' }, { name: 'inline' }],
    });
    fs.writeFileSync(
      file,
      JSON.stringify([
        { name: 'bad', steps: [{ id: 'g', model: LONG_FORM, input: { image_urls: ['hero.png'], duration: '7' } }] },
      ]),
    );
    await expect(loadManifest(file, undefined, media)).rejects.toThrow(/items\.0[\s\S]*steps\.0\.input\.duration/);
  });
});

describe('local files in a spec', () => {
  it('names the path of a missing file and of an unknown type, and replaces nothing then', async () => {
    fs.writeFileSync(path.join(dir, 'notes.txt'), 'x');
    const spec = {
      name: 'x',
      steps: [
        { id: 'u', model: 'service-upscale-video-fast', input: { video_url: 'notes.txt' } },
        { id: 'g', model: LONG_FORM, input: { image_urls: ['https://example.com/a.png', 'nope.png', 'hero.png'] } },
      ],
    };
    const errors = await storeLocalMedia(spec, dir, media);
    expect(errors.map((e) => e.path)).toEqual(['steps.0.input.video_url', 'steps.1.input.image_urls.1']);
    expect(errors[0]?.message).toContain('unknown media type');
    expect(errors[1]?.message).toContain('readable local file');
    expect(spec.steps[1]?.input.image_urls?.[2]).toBe('hero.png');
  });

  it('keeps short data URIs inline, moves long ones into the store, then the largest until the spec fits the budget', async () => {
    const small = `data:image/png;base64,${PNG.toString('base64')}`;
    const long = `data:image/png;base64,${Buffer.alloc(MEDIA_LIMITS.inlineDataUriMaxChars).toString('base64')}`;
    // Thirty 12 KiB images: each under the inline threshold, together over the 128 KiB budget.
    const medium = Array.from(
      { length: 30 },
      (_, i) => `data:image/png;base64,${Buffer.alloc(12 * 1024, i).toString('base64')}`,
    );
    const spec = {
      name: 'inline',
      steps: [{ id: 'g', model: LONG_FORM, input: { image_urls: [small, long, ...medium.slice(0, 28)] } }],
    };
    expect(await storeLocalMedia(spec, dir, media)).toEqual([]);
    const urls = spec.steps[0]?.input.image_urls as unknown[];
    expect(urls[0]).toBe(small);
    expect(urls[1]).toMatchObject({ type: 'image/png', bytes: MEDIA_LIMITS.inlineDataUriMaxChars });
    expect(JSON.stringify(spec).length).toBeLessThanOrEqual(MEDIA_LIMITS.payloadBudgetBytes);
    expect(urls.filter((u) => typeof u === 'string').length).toBeGreaterThan(1);
  });

  it('throws SpecFileError (exit 2) with every path', async () => {
    const file = path.join(dir, 'bad.json');
    fs.writeFileSync(file, JSON.stringify({ name: 'x', steps: [{ id: 'g', model: 'nope', input: {} }] }));
    await expect(loadSpecFile(file, undefined, media)).rejects.toThrow(SpecFileError);
    await expect(loadSpecFile(file, undefined, media)).rejects.toThrow(/steps\.0\.model/);
  });

  it('refuses a spec over the payload budget before anything starts, naming the field, its size and the fix', async () => {
    const prompt = 'p'.repeat(30_000);
    const steps = Array.from({ length: 5 }, (_, i) => ({
      id: `s${i}`,
      model: LONG_FORM,
      input: { image_urls: ['hero.png'], prompt },
    }));
    const file = path.join(dir, 'huge.json');
    fs.writeFileSync(file, JSON.stringify({ name: 'huge', steps }));
    const failure = await loadSpecFile(file, undefined, media).catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(CliError);
    expect((failure as CliError).exitCode).toBe(2);
    expect((failure as Error).message).toMatch(
      /is 14\d\.\d KiB .* more than the 128\.0 KiB reelflow hands to Temporal/,
    );
    expect((failure as Error).message).toMatch(/steps\.\d\.input\.prompt: 29\.3 KiB — shorten the prompt/);
  });
});

describe('configuration from the environment', () => {
  it('defaults suit a local dev server; the service is optional until a command needs it', () => {
    expect(loadEnv({}, {})).toEqual({
      temporal: { address: 'localhost:7233', namespace: 'default', taskQueue: 'reelflow-pipelines' },
      media: { kind: 'file', dir: path.resolve('.reelflow', 'media'), urlLifetimeSeconds: 3600 },
    });
    expect(
      loadEnvWithService({
        REELFLOW_SERVICE_URL: 'http://127.0.0.1:8788/',
        REELFLOW_API_KEY: 'k',
        REELFLOW_WEBHOOK_SECRETS: 'a, b',
      }),
    ).toMatchObject({
      service: { url: 'http://127.0.0.1:8788', apiKey: 'k', idempotency: 'unknown' },
      webhookSecrets: ['a', 'b'],
    });
  });

  it('reads REELFLOW_SERVICE_IDEMPOTENCY (default unknown: the setting that never pays twice)', () => {
    const base = { REELFLOW_SERVICE_URL: 'http://127.0.0.1:8788', REELFLOW_API_KEY: 'k' };
    expect(loadEnvWithService({ ...base, REELFLOW_SERVICE_IDEMPOTENCY: 'honoured' }).service.idempotency).toBe(
      'honoured',
    );
    expect(loadEnvWithService({ ...base, REELFLOW_SERVICE_IDEMPOTENCY: 'unknown' }).service.idempotency).toBe(
      'unknown',
    );
    expect(() => loadEnvWithService({ ...base, REELFLOW_SERVICE_IDEMPOTENCY: 'yes' })).toThrow(
      /REELFLOW_SERVICE_IDEMPOTENCY: must be honoured or unknown/,
    );
  });

  it('reads REELFLOW_EARLY_STATUS_CHECK_SECONDS (0 = none) and names it when it is not a number of seconds', () => {
    expect(loadEnv({}, { REELFLOW_EARLY_STATUS_CHECK_SECONDS: '3' }).earlyStatusCheckSeconds).toBe(3);
    expect(loadEnv({}, { REELFLOW_EARLY_STATUS_CHECK_SECONDS: '0' }).earlyStatusCheckSeconds).toBe(0);
    expect(loadEnv({}, {}).earlyStatusCheckSeconds).toBeUndefined();
    expect(() => loadEnv({}, { REELFLOW_EARLY_STATUS_CHECK_SECONDS: 'soon' })).toThrow(
      /REELFLOW_EARLY_STATUS_CHECK_SECONDS: must be a number of seconds/,
    );
    expect(() => loadEnv({}, { REELFLOW_EARLY_STATUS_CHECK_SECONDS: '900' })).toThrow(/at most 600/);
  });

  it.each([
    [{ service: true }, {}, 'REELFLOW_SERVICE_URL'],
    [{ service: true }, { REELFLOW_SERVICE_URL: 'http://x' }, 'REELFLOW_API_KEY'],
    [{}, { REELFLOW_SERVICE_URL: 'not a url' }, 'REELFLOW_SERVICE_URL'],
    [{ webhookSecrets: true }, {}, 'REELFLOW_WEBHOOK_SECRETS'],
    [{}, { REELFLOW_WEBHOOK_SECRETS: 'a,,b' }, 'REELFLOW_WEBHOOK_SECRETS'],
    [{}, { TEMPORAL_ADDRESS: 'x' }, 'TEMPORAL_ADDRESS'],
    [{}, { REELFLOW_MEDIA_STORE: 'ftp://a,,b' }, 'REELFLOW_MEDIA_STORE'],
    [
      {},
      { REELFLOW_MEDIA_STORE: 's3://bkt', REELFLOW_MEDIA_S3_ACCESS_KEY_ID: 'a,,b' },
      'REELFLOW_MEDIA_S3_SECRET_ACCESS_KEY',
    ],
    [{}, { REELFLOW_MEDIA_STORE: 's3://bucket', REELFLOW_MEDIA_S3_ENDPOINT: 'a,,b' }, 'REELFLOW_MEDIA_S3_ENDPOINT'],
    [{}, { REELFLOW_MEDIA_URL_LIFETIME: '8d' }, 'REELFLOW_MEDIA_URL_LIFETIME'],
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

  it('reads an S3 media store: bucket, prefix, endpoint (path style), credentials, URL lifetime', () => {
    expect(
      loadEnv(
        {},
        {
          REELFLOW_MEDIA_STORE: 's3://media-bucket/reelflow/prod/',
          REELFLOW_MEDIA_S3_ENDPOINT: 'http://127.0.0.1:9000/',
          REELFLOW_MEDIA_S3_ACCESS_KEY_ID: 'id',
          REELFLOW_MEDIA_S3_SECRET_ACCESS_KEY: 'secret',
          REELFLOW_MEDIA_URL_LIFETIME: '15m',
        },
      ).media,
    ).toEqual({
      kind: 's3',
      bucket: 'media-bucket',
      prefix: 'reelflow/prod',
      endpoint: 'http://127.0.0.1:9000',
      region: 'us-east-1',
      credentials: { accessKeyId: 'id', secretAccessKey: 'secret' },
      forcePathStyle: true,
      urlLifetimeSeconds: 900,
    });
    expect(loadEnv({}, { REELFLOW_MEDIA_STORE: 'file:///var/media', REELFLOW_STATE_DIR: '/x' }).media).toEqual({
      kind: 'file',
      dir: '/var/media',
      urlLifetimeSeconds: 3600,
    });
    expect(loadEnv({}, { REELFLOW_STATE_DIR: '/srv/state' }).media).toMatchObject({
      kind: 'file',
      dir: '/srv/state/media',
    });
  });

  it('treats loopback URLs as the local service', () => {
    expect(['http://127.0.0.1:8788', 'http://localhost:1', 'http://[::1]:2'].map(isLocalServiceUrl)).toEqual([
      true,
      true,
      true,
    ]);
    expect(isLocalServiceUrl('https://api.example.com')).toBe(false);
  });
});

let eachDir: string;
beforeAll(() => {
  eachDir = fs.mkdtempSync(path.join(os.tmpdir(), 'reelflow-manifest-each-'));
  const scenes = {
    id: 'scenes',
    model: LONG_FORM,
    input: { image_urls: ['https://example.com/hero.png'], prompt: { $item: 'prompt' } },
    each: [{ prompt: 'default' }],
  };
  fs.writeFileSync(path.join(eachDir, 'ad.json'), JSON.stringify({ version: 2, name: 'ad', steps: [scenes] }));
});
afterAll(() => fs.rmSync(eachDir, { recursive: true, force: true }));

describe('a batch row setting a fan-out step’s items (<step>.each)', () => {
  const eachMedia = () => ({ store: createFileStore(path.join(eachDir, 'media')) });

  it('takes the items from a JSON cell', async () => {
    const file = path.join(eachDir, 'rows.csv');
    fs.writeFileSync(file, 'spec,name,scenes.each\nad.json,two,"[{""prompt"": ""a""}, {""prompt"": ""b""}]"\n');
    const [spec] = (await loadManifest(file, undefined, eachMedia())).items;
    expect(spec?.steps[0]?.each).toEqual([{ prompt: 'a' }, { prompt: 'b' }]);
  });

  it('refuses a cell that is not a JSON list, and items the spec refuses, with the row and column', async () => {
    const file = path.join(eachDir, 'bad.csv');
    fs.writeFileSync(file, 'spec,scenes.each\nad.json,not json\nad.json,"[{""other"": 1}]"\n');
    await expect(loadManifest(file, undefined, eachMedia())).rejects.toThrow(
      /line 2, column 2: scenes\.each: must be a JSON list of items[\s\S]*line 3.*steps\.0\.each\.0: prompt: the item has no field prompt/,
    );
  });
});
