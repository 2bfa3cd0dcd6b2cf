import {
  CONNECTION_CAP_BOUNDS,
  defaultConnectionCap,
  openFilesLimit,
  RESERVED_FILES,
} from '../../../src/net/open-files';

/** The default connection cap follows the process's open-files limit, leaving room for everything else. */

const LIMITS = `Limit                     Soft Limit           Hard Limit           Units
Max cpu time              unlimited            unlimited            seconds
Max open files            256                  256                  files
Max locked memory         8388608              8388608              bytes
`;

describe('openFilesLimit', () => {
  it('reads the soft limit of /proc/self/limits', () => {
    expect(openFilesLimit(LIMITS)).toBe(256);
    expect(
      openFilesLimit(LIMITS.replace('256                  256', 'unlimited            unlimited')),
    ).toBeUndefined();
    expect(openFilesLimit('no such line')).toBeUndefined();
  });

  it("reads this process's own limit where there is /proc", () => {
    const own = openFilesLimit();
    if (process.platform === 'linux') expect(own).toBeGreaterThan(0);
  });
});

describe('defaultConnectionCap', () => {
  it('takes three quarters of what the reserved files leave, within its bounds', () => {
    expect(defaultConnectionCap(256)).toBe(Math.floor((256 - RESERVED_FILES) * 0.75));
    expect(defaultConnectionCap(256)).toBeLessThan(256 - RESERVED_FILES);
    expect(defaultConnectionCap(1_048_576)).toBe(CONNECTION_CAP_BOUNDS.max);
    expect(defaultConnectionCap(32)).toBe(CONNECTION_CAP_BOUNDS.min);
    // No limit known: a common soft limit is assumed.
    expect(defaultConnectionCap(undefined)).toBe(defaultConnectionCap(1024));
  });
});
