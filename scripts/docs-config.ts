import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { withVariablesTable } from '../src/config/table';

/** `npm run docs:config`: regenerates the variables table of docs/configuration.md from src/config. */
const file = join(__dirname, '..', 'docs', 'configuration.md');
const before = readFileSync(file, 'utf8');
const after = withVariablesTable(before);
writeFileSync(file, after);
console.log(after === before ? `${file}: up to date` : `${file}: table regenerated`);
