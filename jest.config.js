/** @type {import('jest').Config} */
module.exports = {
  testEnvironment: 'node',
  roots: ['<rootDir>/test'],
  rootDir: __dirname,
  testMatch: ['**/*.test.ts'],
  transform: { '^.+\\.(t|j)s$': ['@swc/jest', { jsc: { target: 'es2022' } }] },
  setupFiles: ['<rootDir>/test/helpers/jest-setup.ts'],
  testTimeout: 120_000,
  // Integration tests start real servers; give them time to stop cleanly.
  openHandlesTimeout: 5_000,
};
