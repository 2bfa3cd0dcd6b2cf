import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { createFileStore } from '../../../../src/media/store';

let dir: string;
beforeAll(() => (dir = fs.mkdtempSync(path.join(os.tmpdir(), 'reelflow-file-store-'))));
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

describe('the filesystem media store', () => {
  it('takes the same content from many writers at once (identical outputs archived together)', async () => {
    const store = createFileStore(path.join(dir, 'store'));
    const content = Buffer.from('the same stub render');
    const sha = createHash('sha256').update(content).digest('hex');
    const files = Array.from({ length: 12 }, (_, i) => {
      const file = path.join(dir, `copy-${i}.mp4`);
      fs.writeFileSync(file, content);
      return file;
    });
    await Promise.all(files.map((file) => store.putFile(file, sha, 'video/mp4', content.length)));
    expect(await store.stat(sha)).toMatchObject({ sha256: sha, type: 'video/mp4', bytes: content.length });
    const objectDir = path.join(dir, 'store', 'objects', sha.slice(0, 2));
    expect(fs.readdirSync(objectDir).sort()).toEqual([sha, `${sha}.json`]);
  });

  it('reads a byte range (both ends inclusive)', async () => {
    const store = createFileStore(path.join(dir, 'ranges'));
    const content = Buffer.from('0123456789');
    const file = path.join(dir, 'digits.txt');
    fs.writeFileSync(file, content);
    const sha = createHash('sha256').update(content).digest('hex');
    await store.putFile(file, sha, 'text/plain', content.length);
    const chunks: Buffer[] = [];
    for await (const chunk of await store.read(sha, { start: 3, end: 6 })) chunks.push(chunk as Buffer);
    expect(Buffer.concat(chunks).toString()).toBe('3456');
  });
});
