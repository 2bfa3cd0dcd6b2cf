import * as fs from 'node:fs';
import * as path from 'node:path';
import { PROCESS_VARIABLES, VARIABLES } from '../../../src/config';
import { renderVariablesTable, TABLE_END, TABLE_START, withVariablesTable } from '../../../src/config/table';

/** docs/configuration.md's table is generated from the declarations; a stale checked-in copy fails here. */

const DOC = path.resolve(__dirname, '../../../docs/configuration.md');

describe('the variables table', () => {
  it('docs/configuration.md carries the table the code generates (run `npm run docs:config` after a change)', () => {
    const document = fs.readFileSync(DOC, 'utf8');
    expect(document).toContain(TABLE_START);
    expect(withVariablesTable(document)).toBe(document);
  });

  it('has one row per declared variable, each read by some process', () => {
    const rows = renderVariablesTable().split('\n').slice(2);
    expect(rows).toHaveLength(Object.keys(VARIABLES).length);
    for (const name of Object.keys(VARIABLES)) {
      expect(PROCESS_VARIABLES.some((p) => (p.variables as readonly string[]).includes(name))).toBe(true);
    }
  });

  it('.env.example sets only declared variables', () => {
    const example = fs.readFileSync(path.resolve(__dirname, '../../../.env.example'), 'utf8');
    const names = [...example.matchAll(/^#?\s*([A-Z][A-Z0-9_]*)=/gm)].map((m) => m[1]!);
    expect(names.length).toBeGreaterThan(5);
    expect(names.filter((name) => !(name in VARIABLES))).toEqual([]);
  });

  it('notices an edited table', () => {
    const document = fs.readFileSync(DOC, 'utf8').replace('| `TEMPORAL_ADDRESS` |', '| `TEMPORAL_ADRESS` |');
    expect(withVariablesTable(document)).not.toBe(document);
    expect(() => withVariablesTable(document.replace(TABLE_END, ''))).toThrow(/markers/);
  });
});
