import { EXIT } from '../../../../src/cli/lib/exit';

describe('EXIT', () => {
  it('keeps the exit codes the README documents', () => {
    expect(EXIT).toMatchObject({ ok: 0, failed: 1, usage: 2, unavailable: 3, notFound: 4, extensionMissing: 5 });
  });

  it('gives every outcome its own code', () => {
    const codes = Object.values(EXIT);
    expect(new Set(codes).size).toBe(codes.length);
  });
});
