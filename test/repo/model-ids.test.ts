import * as fs from 'node:fs';
import * as path from 'node:path';
import { MODEL_IDS } from '../../src/contract';

/**
 * A model is one module: its id is written in its contract module (src/contract/models/<name>.ts) and
 * its renderer (src/local-service/media/models/<name>.ts), nowhere else in src/, so no other file can
 * branch on it; everything else reads the model's rules (docs/architecture.md, "Adding a model").
 */
const SRC = path.join(__dirname, '..', '..', 'src');

function sourceFiles(dir: string): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(full);
    return entry.name.endsWith('.ts') ? [full] : [];
  });
}

const files = sourceFiles(SRC).map((file) => ({
  file: path.relative(SRC, file).split(path.sep).join('/'),
  text: fs.readFileSync(file, 'utf8'),
}));

describe('model ids in src/', () => {
  it.each(MODEL_IDS)('%s is written only in its own two modules', (id) => {
    const holders = files.filter((f) => f.text.includes(id)).map((f) => f.file);
    expect(holders.length).toBeGreaterThan(0);
    expect(holders.length).toBeLessThanOrEqual(2);
    expect(holders.filter((file) => !/^(contract|local-service\/media)\/models\/[a-z-]+\.ts$/.test(file))).toEqual([]);
  });

  it('is never compared with ===, !== or a switch case', () => {
    const branch = /(===|!==)\s*['"`]service-|['"`]service-[^'"`]*['"`]\s*(===|!==)|case\s+['"`]service-/;
    expect(files.filter((f) => branch.test(f.text)).map((f) => f.file)).toEqual([]);
  });

  it('gives each model the same file name in both folders', () => {
    const modulesIn = (folder: string, shared: string[]) =>
      files
        .map((f) => f.file)
        .filter((file) => path.posix.dirname(file) === folder)
        .map((file) => path.posix.basename(file))
        .filter((name) => !shared.includes(name))
        .sort();
    const contract = modulesIn('contract/models', ['index.ts', 'definition.ts']);
    expect(contract).toHaveLength(MODEL_IDS.length);
    expect(modulesIn('local-service/media/models', ['index.ts', 'common.ts', 'renderer.ts'])).toEqual(contract);
  });
});
