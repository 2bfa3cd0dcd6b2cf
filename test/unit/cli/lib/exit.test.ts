import { EXIT } from '../../../../src/cli/lib/exit';

describe('EXIT', () => {
  it('keeps the exit codes the README documents', () => {
    expect(EXIT).toEqual({ ok: 0, failed: 1, usage: 2, unavailable: 3, notFound: 4, extensionMissing: 5 });
  });
});
