import { SECRET_FILE_VARIABLES } from '../../../src/config/read';
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

  it('.env.example sets only declared variables, their <NAME>_FILE forms and what docker-compose.yml asks for', () => {
    const read = (file: string) => fs.readFileSync(path.resolve(__dirname, '../../..', file), 'utf8');
    const example = read('.env.example');
    const names = [...example.matchAll(/^#?\s*([A-Z][A-Z0-9_]*)=/gm)].map((m) => m[1]!);
    const composeAsks = new Set([...read('docker-compose.yml').matchAll(/\$\{([A-Z][A-Z0-9_]*)/g)].map((m) => m[1]));
    const secretFiles = new Set(SECRET_FILE_VARIABLES.map((name) => `${name}_FILE`));
    expect(names.length).toBeGreaterThan(5);
    expect(names.filter((name) => !(name in VARIABLES) && !composeAsks.has(name) && !secretFiles.has(name))).toEqual(
      [],
    );
    // Every value compose asks for is explained there; no secret is set in it.
    expect([...composeAsks].filter((name) => !names.includes(name as string))).toEqual([]);
    expect(names.filter((name) => SECRET_FILE_VARIABLES.includes(name as never))).toEqual([]);
    expect(example).not.toMatch(/src\/config\/env\.ts|TEMPORAL_TLS_CERT_PATH|127\.0\.0\.1:8710/);
  });

  it('notices an edited table', () => {
    const document = fs.readFileSync(DOC, 'utf8').replace('| `TEMPORAL_ADDRESS` |', '| `TEMPORAL_ADRESS` |');
    expect(withVariablesTable(document)).not.toBe(document);
    expect(() => withVariablesTable(document.replace(TABLE_END, ''))).toThrow(/markers/);
  });
});
