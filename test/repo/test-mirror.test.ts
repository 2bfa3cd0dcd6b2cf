import * as fs from 'node:fs';
import * as path from 'node:path';
import { declarationsOnly, INTEGRATION_ONLY, mirrorReport, strayUnitTests } from '../../scripts/test-mirror';

/**
 * Tests mirror src/ (docs/architecture.md): test/unit/<path>/<module>.test.ts is the unit test of
 * src/<path>/<module>.ts. `npm run test:mirror` lists the modules without one.
 */

const ROOT = path.resolve(__dirname, '../..');

describe('tests mirror src/', () => {
  it('every unit test file sits at the path of the src module it tests', () => {
    expect(strayUnitTests(ROOT)).toEqual([]);
  });

  it('every integration-only entry still names src modules', () => {
    const gone = Object.keys(INTEGRATION_ONLY).filter((entry) => !fs.existsSync(path.join(ROOT, 'src', entry)));
    expect(gone).toEqual([]);
  });

  it('reports every src module once, with its unit test or the reason it has none', () => {
    const rows = mirrorReport(ROOT);
    expect(rows.length).toBeGreaterThan(100);
    expect(new Set(rows.map((row) => row.module)).size).toBe(rows.length);
    expect(rows.find((row) => row.module === 'contract/pricing.ts')).toMatchObject({
      status: 'unit-test',
      detail: 'test/unit/contract/pricing.test.ts',
    });
    expect(rows.find((row) => row.module === 'workflows/pipeline.ts')).toMatchObject({ status: 'integration-only' });
    expect(rows.filter((row) => row.status === 'unit-test').length).toBeGreaterThan(20);
  });

  it('tells declarations-only modules from modules with code', () => {
    expect(
      declarationsOnly(
        "import type { A } from './a';\nexport interface B { a: A }\nexport type C = B;\nexport { d } from './d';\n",
      ),
    ).toBe(true);
    expect(declarationsOnly('export const limit = 3;\n')).toBe(false);
    expect(declarationsOnly('export function f(): void {}\n')).toBe(false);
  });
});
