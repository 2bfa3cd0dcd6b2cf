import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { schemaFiles } from '../src/pipeline-spec/json-schema';

/** `npm run schemas`: regenerates schemas/*.schema.json from the zod schemas (src/pipeline-spec/json-schema.ts). */
const dir = join(__dirname, '..', 'schemas');
mkdirSync(dir, { recursive: true });
for (const [name, text] of Object.entries(schemaFiles())) {
  const file = join(dir, name);
  let before = '';
  try {
    before = readFileSync(file, 'utf8');
  } catch {
    // A new schema file.
  }
  writeFileSync(file, text);
  console.log(`schemas/${name}: ${before === text ? 'up to date' : 'written'}`);
}
