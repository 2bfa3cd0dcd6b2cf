import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { SpecFileError } from '../../../../src/cli/lib/errors';
import { inputAddressProblems } from '../../../../src/cli/lib/input-addresses';
import { loadSpecFile, type SpecMedia } from '../../../../src/cli/lib/spec-files';
import { createFileStore } from '../../../../src/media/store';
import type { PipelineSpec } from '../../../../src/pipeline-spec/spec';

const LONG_FORM = 'service-video-cinema-long-form-from-references';

let dir: string;
let media: SpecMedia;
beforeAll(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'reelflow-input-addresses-'));
  media = { store: createFileStore(path.join(dir, 'media')) };
});
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

it('checks every *_url and *_urls value; data URIs, references and other fields pass', () => {
  const spec = {
    name: 's',
    steps: [
      {
        id: 'a',
        model: LONG_FORM,
        input: {
          image_urls: ['data:image/png;base64,AA==', { $media: 'sha256:00' }, 'https://[::1]/x.png'],
          prompt: 'https://10.0.0.1/not-a-url-field',
        },
      },
      {
        id: 'b',
        model: 'service-horizon-studio',
        input: { video_url: { $from: 'a' }, audio_url: 'https://127.0.0.1/v.wav' },
      },
    ],
  } as unknown as PipelineSpec;
  expect(inputAddressProblems(spec, undefined)).toEqual([
    { path: 'steps.0.input.image_urls.2', message: '[::1] is a loopback address (the address rules inputs obey)' },
    { path: 'steps.1.input.audio_url', message: '127.0.0.1 is a loopback address (the address rules inputs obey)' },
  ]);
});

describe("a spec's literal inputs under the address rules, as the CLI loads them", () => {
  function writeSpec(name: string, urls: string[]): string {
    const file = path.join(dir, `${name}.json`);
    fs.writeFileSync(
      file,
      JSON.stringify({ name, steps: [{ id: 'generate', model: LONG_FORM, input: { image_urls: urls, prompt: 'p' } }] }),
    );
    return file;
  }

  it('refuses cloud metadata, private IP literals and other ports, each with its field path', async () => {
    const file = writeSpec('hostile', [
      'https://example.com/fine.png',
      'https://169.254.169.254/latest/meta-data',
      'https://10.0.0.7/a.png',
      'https://example.com:8080/a.png',
    ]);
    const error = await loadSpecFile(file, undefined, media).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(SpecFileError);
    expect((error as SpecFileError).exitCode).toBe(2);
    expect((error as SpecFileError).errors.map((e) => e.path)).toEqual(
      [1, 2, 3].map((i) => `steps.0.input.image_urls.${i}`),
    );
    expect((error as SpecFileError).message).toContain(
      'steps.0.input.image_urls.1: 169.254.169.254 is a metadata address',
    );
  });

  it("lets the configured service's own output URLs through", async () => {
    const origin = 'http://127.0.0.1:8787';
    const file = writeSpec('own-output', [`${origin}/v1/files/out.png`]);
    const spec = await loadSpecFile(file, { allowedOrigins: [origin] }, media);
    expect(spec.steps[0]?.input.image_urls).toEqual([`${origin}/v1/files/out.png`]);
  });
});
