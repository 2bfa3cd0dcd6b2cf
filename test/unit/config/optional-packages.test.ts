import { MissingPackageError } from '../../../src/config/errors';
import { OPTIONAL_PACKAGES, requireOptional } from '../../../src/config/optional-packages';

/**
 * reelflow's optional peers: loaded where a feature starts, named when missing. (A consumer without them,
 * for real: test/e2e/library-consumer.test.ts.)
 */

describe('OPTIONAL_PACKAGES', () => {
  it("is package.json's optional peers, each a peer and installed for development", () => {
    const pkg = jest.requireActual<{
      peerDependencies: Record<string, string>;
      peerDependenciesMeta: Record<string, { optional?: boolean }>;
      devDependencies: Record<string, string>;
      dependencies: Record<string, string>;
    }>('../../../package.json');
    const optional = Object.keys(pkg.peerDependenciesMeta).filter((name) => pkg.peerDependenciesMeta[name]?.optional);
    expect(optional.sort()).toEqual(Object.keys(OPTIONAL_PACKAGES).sort());
    for (const name of optional) {
      expect(pkg.peerDependencies[name]).toBeDefined();
      expect(pkg.devDependencies[name]).toBe(pkg.peerDependencies[name]);
      expect(pkg.dependencies[name]).toBeUndefined();
    }
  });
});

describe('requireOptional', () => {
  it('loads an installed optional package', () => {
    expect(requireOptional('pg')).toBe(jest.requireActual('pg'));
  });
});

describe('MissingPackageError', () => {
  it('names the package, the feature and the install command, with a stable code', () => {
    const error = new MissingPackageError('pg', OPTIONAL_PACKAGES.pg);
    expect(error).toMatchObject({ code: 'package_missing', packageName: 'pg', name: 'MissingPackageError' });
    expect(error.message).toBe(
      'a PostgreSQL route store (REELFLOW_ROUTE_STORE=postgres://…) needs the package pg, which is not installed: npm install pg',
    );
  });
});
