import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { loadManifest } from '../../../../src/cli/lib/manifest';
import { createFileStore } from '../../../../src/media/store';

const LONG_FORM = 'service-video-cinema-long-form-from-references';

let dir: string;
beforeAll(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'reelflow-manifest-each-'));
  const scenes = {
    id: 'scenes',
    model: LONG_FORM,
    input: { image_urls: ['https://example.com/hero.png'], prompt: { $item: 'prompt' } },
    each: [{ prompt: 'default' }],
  };
  fs.writeFileSync(path.join(dir, 'ad.json'), JSON.stringify({ version: 2, name: 'ad', steps: [scenes] }));
});
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

describe('a batch row setting a fan-out step’s items (<step>.each)', () => {
  const media = () => ({ store: createFileStore(path.join(dir, 'media')) });

  it('takes the items from a JSON cell', async () => {
    const file = path.join(dir, 'rows.csv');
    fs.writeFileSync(file, 'spec,name,scenes.each\nad.json,two,"[{""prompt"": ""a""}, {""prompt"": ""b""}]"\n');
    const [spec] = (await loadManifest(file, undefined, media())).items;
    expect(spec?.steps[0]?.each).toEqual([{ prompt: 'a' }, { prompt: 'b' }]);
  });

  it('refuses a cell that is not a JSON list, and items the spec refuses, with the row and column', async () => {
    const file = path.join(dir, 'bad.csv');
    fs.writeFileSync(file, 'spec,scenes.each\nad.json,not json\nad.json,"[{""other"": 1}]"\n');
    await expect(loadManifest(file, undefined, media())).rejects.toThrow(
      /line 2, column 2: scenes\.each: must be a JSON list of items[\s\S]*line 3.*steps\.0\.each\.0: prompt: the item has no field prompt/,
    );
  });
});
