import * as path from 'node:path';

/**
 * No import circles in src/, type-only imports included: ESLint's import/no-cycle skips `import type`,
 * so this is the check that keeps, e.g., a job's phases from importing the job that imports them.
 */
// eslint-disable-next-line @typescript-eslint/no-require-imports
const { importCircles } = require(path.resolve(__dirname, '../../scripts/import-circles.js')) as {
  importCircles: () => string[][];
};

describe('import circles in src/', () => {
  it('finds none', () => {
    expect(importCircles()).toEqual([]);
  });
});
