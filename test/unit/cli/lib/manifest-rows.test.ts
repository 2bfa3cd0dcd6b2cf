import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { CliError } from '../../../../src/cli/lib/errors';
import { loadManifest } from '../../../../src/cli/lib/manifest';
import { csvRows, formatProblem, jsonLinesRows } from '../../../../src/cli/lib/manifest-rows';
import { type SpecMedia } from '../../../../src/cli/lib/spec-files';
import { createFileStore } from '../../../../src/media/store';

/**
 * Manifests that never lose a cell: every malformed row is a problem with its line and column,
 * all of them are listed, and nothing is loaded from a manifest that has one.
 */

const LONG_FORM = 'service-video-cinema-long-form-from-references';

let dir: string;
let media: SpecMedia;
beforeAll(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'reelflow-manifest-rows-'));
  media = { store: createFileStore(path.join(dir, 'media')) };
  fs.writeFileSync(
    path.join(dir, 'gen-only.json'),
    JSON.stringify({
      name: 'gen-only',
      steps: [
        {
          id: 'generate',
          model: LONG_FORM,
          input: { image_urls: ['https://example.com/a.png'], prompt: 'base', duration: '4' },
        },
      ],
    }),
  );
});
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

/** The CliError a manifest is refused with (fails the test when it loads). */
async function refusalOf(name: string, text: string): Promise<CliError> {
  const file = path.join(dir, name);
  fs.writeFileSync(file, text);
  const outcome = await loadManifest(file, undefined, media).then(
    (manifest) => new Error(`loaded ${manifest.items.length} item(s)`),
    (error: unknown) => error,
  );
  expect(outcome).toBeInstanceOf(CliError);
  expect((outcome as CliError).exitCode).toBe(2);
  return outcome as CliError;
}

/** The lines of a refusal that name a problem. */
function problemLines(error: CliError): string[] {
  return error.message.split('\n').filter((line) => /^ {2}line /.test(line));
}

describe('CSV rows against their header', () => {
  it('names a row with an unquoted comma by line and column, with the cells it would lose', () => {
    const { rows, problems } = csvRows(
      'spec,name,generate.prompt\ngen-only.json,item-a,A cat, in the rain, wide shot\ngen-only.json,item-b,"A cat, in the rain"\n',
    );
    expect(rows.map((r) => r.name)).toEqual(['item-b']);
    expect(problems.map(formatProblem)).toEqual([
      'line 2, column 4: 5 cells, the header has 3 (spec, name, generate.prompt); the extra cell(s) "in the rain", "wide shot": a cell holding a comma must be quoted ("A cat, in the rain")',
    ]);
  });

  it('names a row with fewer cells than the header by the first missing column', () => {
    const { rows, problems } = csvRows('spec,name,generate.prompt\ngen-only.json,item-a\ngen-only.json,item-b,\n');
    expect(rows.map((r) => r.name)).toEqual(['item-b']);
    expect(problems).toMatchObject([{ where: 'line 2, column 3', path: 'generate.prompt' }]);
    expect(problems[0]?.message).toMatch(/^missing: the row has 2 cell\(s\), the header 3/);
  });

  it('refuses a header that names a column twice, an unnamed or unknown column, and reads no row then', () => {
    const repeated = csvRows('spec,name,generate.prompt,generate.prompt\ngen-only.json,a,x,y\n');
    expect(repeated.rows).toEqual([]);
    expect(repeated.headerProblems.map(formatProblem)).toEqual([
      'line 1, column 4: generate.prompt: named twice (column 3 too): one of the two cells of every row would be lost',
    ]);
    // Case-insensitive for spec and name, as they are matched.
    expect(csvRows('spec,Spec\na,b\n').headerProblems.map((p) => p.where)).toEqual(['line 1, column 2']);
    expect(csvRows('spec,,prompt\na,b,c\n').headerProblems.map((p) => p.where)).toEqual([
      'line 1, column 2',
      'line 1, column 3',
    ]);
  });

  it('names an empty spec cell, and a quoted field that is never closed', () => {
    expect(csvRows('name,spec\nx,\ny, ""\n').problems.map((p) => p.where)).toEqual([
      'line 2, column 2',
      'line 3, column 2',
    ]);
    const unclosed = csvRows('spec,generate.prompt\ngen-only.json,ok\ngen-only.json,"open\nmore\n');
    expect(unclosed.problems.map(formatProblem)).toEqual([
      'line 3, column 2: a quoted field is not closed (every line after it would be read into that cell)',
    ]);
    expect(unclosed.total).toBe(2);
  });

  it('keeps each override column with its cell column for later errors', () => {
    const { rows } = csvRows('spec,name,generate.prompt\ngen-only.json,a,hello\n');
    expect(rows[0]).toMatchObject({
      columns: { spec: 1, name: 2, 'generate.prompt': 3 },
      overrides: { 'generate.prompt': 'hello' },
    });
  });
});

describe('JSON Lines rows', () => {
  it('names a line that is not JSON by its column, and goes on to the next lines', () => {
    const { rows, problems, total } = jsonLinesRows(
      [
        '{"spec": "gen-only.json", "name": "a"}',
        'nope',
        '',
        '{"spec": gen-only.json}',
        '{"spec": "gen-only.json", "name": "d",}',
        '{"spec": "gen-only.json", "name": "e"}\r',
      ].join('\n'),
    );
    expect(total).toBe(5);
    expect(rows.map((r) => r.name)).toEqual(['a', 'e']);
    expect(problems.map(formatProblem)).toEqual([
      'line 2, column 1: not JSON: a JSON value is due, not "n"',
      'line 4, column 10: not JSON: a JSON value is due, not "g"',
      'line 5, column 39: not JSON: a key in double quotes is due, not "}"',
    ]);
  });

  it('refuses a key given twice, and names bad keys and values at their column', () => {
    const { problems } = jsonLinesRows(
      [
        '{"spec": "gen-only.json", "generate.prompt": "x", "generate.prompt": "y"}',
        '{"spec": "gen-only.json", "prompt": "x"}',
        '{"spec": "", "name": 3}',
        '[1]',
      ].join('\n'),
    );
    expect(problems.map(formatProblem)).toEqual([
      'line 1, column 51: generate.prompt: the key is given twice in one object (column 27 too): JSON would keep only the last value',
      'line 2, column 27: prompt: unknown key (allowed: spec, name, and <step>.<field> overrides such as generate.prompt)',
      'line 3, column 2: spec: must be a spec file path or an inline spec',
      'line 3, column 14: name: must be a string',
      'line 4: a row is a spec path, an inline spec or {"spec", "name"?, "<step>.<field>"?…}',
    ]);
  });
});

describe('a refused manifest lists every bad row and loads nothing', () => {
  it('CSV: the cell counts, the empty spec and a spec problem, in line order', async () => {
    const error = await refusalOf(
      'all-bad.csv',
      [
        'spec,name,generate.prompt',
        'gen-only.json,item-a,A cat, in the rain, wide shot',
        'gen-only.json,item-b,fine',
        ',item-c,x',
        'gen-only.json,item-d',
        'missing.json,item-e,x',
      ].join('\n'),
    );
    expect(error.message).toMatch(/^.*all-bad\.csv: 4 of 5 row\(s\) refused; nothing was started:/);
    expect(problemLines(error).map((line) => line.replace(/: .*$/, ''))).toEqual([
      '  line 2, column 4',
      '  line 4, column 1',
      '  line 5, column 3',
      '  line 6, column 1',
    ]);
  });

  it('CSV: a repeated header name refuses the header, with the rows whose cell counts are wrong', async () => {
    const error = await refusalOf(
      'repeated.csv',
      'spec,generate.prompt,generate.prompt\ngen-only.json,a,b\ngen-only.json,a\n',
    );
    expect(error.message).toContain('the header is refused, so no row can be read; nothing was started');
    expect(problemLines(error).map((line) => line.replace(/: .*$/, ''))).toEqual([
      '  line 1, column 3',
      '  line 3, column 3',
    ]);
  });

  it('JSON Lines: every line that is not JSON, with the bad spec of a sound one', async () => {
    const error = await refusalOf(
      'bad.jsonl',
      ['{"spec": "gen-only.json", "name": "a"}', '{nope', '{"spec": "missing.json"}', 'also not json'].join('\n'),
    );
    expect(error.message).toContain('3 of 4 row(s) refused');
    expect(problemLines(error).map((line) => line.replace(/: .*$/, ''))).toEqual([
      '  line 2, column 2',
      '  line 3, column 2',
      '  line 4, column 1',
    ]);
  });

  it('refuses a manifest row whose override names a metadata address, at its column', async () => {
    const error = await refusalOf(
      'metadata.csv',
      'spec,name,generate.image_urls\ngen-only.json,ok,\ngen-only.json,steal,https://169.254.169.254/latest\n',
    );
    expect(problemLines(error)).toEqual([
      '  line 3, column 3: steps.0.input.image_urls.0: 169.254.169.254 is a metadata address (the address rules inputs obey)',
    ]);
  });
});
