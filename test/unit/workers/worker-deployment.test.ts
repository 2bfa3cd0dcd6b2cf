import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import {
  bundleCodeOf,
  defaultBuildId,
  packageVersion,
  versionKey,
  versionedWorkerOptions,
} from '../../../src/workers/worker-deployment';

describe('worker deployment versions', () => {
  it('derives the default build id from the package version and the workflow code, and from nothing else', () => {
    const id = defaultBuildId('workflow code', '0.2.0');
    expect(id).toMatch(/^0\.2\.0-[0-9a-f]{12}$/);
    expect(defaultBuildId('workflow code', '0.2.0')).toBe(id);
    expect(defaultBuildId('workflow code, changed', '0.2.0')).not.toBe(id);
    expect(defaultBuildId('workflow code', '0.2.1')).not.toBe(id);
  });

  it('takes the package version from package.json', () => {
    const pkg = JSON.parse(fs.readFileSync(path.join(__dirname, '..', '..', '..', 'package.json'), 'utf8')) as {
      version: string;
    };
    expect(packageVersion()).toBe(pkg.version);
  });

  it('hashes the same code whether the bundle is given as code or as a file', () => {
    const file = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'reelflow-bundle-')), 'workflow-bundle.js');
    fs.writeFileSync(file, 'bundle text');
    expect(bundleCodeOf({ codePath: file })).toBe(bundleCodeOf({ code: 'bundle text' }));
  });

  it('makes a versioned worker pinned by default', () => {
    expect(versionedWorkerOptions({ deploymentName: 'reelflow', buildId: 'b1' })).toEqual({
      workerDeploymentOptions: {
        useWorkerVersioning: true,
        version: { deploymentName: 'reelflow', buildId: 'b1' },
        defaultVersioningBehavior: 'PINNED',
      },
    });
  });

  it('spells a version as visibility does', () => {
    expect(versionKey({ deploymentName: 'reelflow', buildId: '0.2.0-abc' })).toBe('reelflow:0.2.0-abc');
  });
});
