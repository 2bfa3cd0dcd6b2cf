import * as fs from 'node:fs';
import * as path from 'node:path';
import { packageVersion } from '../../../src/config/package-version';

describe('packageVersion', () => {
  it('is the version field of the package.json at the package root', () => {
    const pkg = JSON.parse(fs.readFileSync(path.join(__dirname, '..', '..', '..', 'package.json'), 'utf8')) as {
      version: string;
    };
    expect(packageVersion()).toBe(pkg.version);
    expect(packageVersion()).toMatch(/^\d+\.\d+\.\d+(-[0-9A-Za-z.-]+)?$/);
  });
});
