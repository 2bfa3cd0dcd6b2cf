import { VARIABLES } from '../../../src/config/variables';

describe('VARIABLES', () => {
  it('describes every variable for the generated table', () => {
    for (const [name, spec] of Object.entries(VARIABLES)) {
      expect(name).toMatch(/^[A-Z][A-Z0-9_]+$/);
      expect(spec.description.length).toBeGreaterThan(5);
      expect(spec.type.length).toBeGreaterThan(0);
    }
  });

  it('parses unset variables to their default, or leaves them unset', () => {
    expect(VARIABLES.REELFLOW_LOG_LEVEL.schema.parse(undefined)).toBe('info');
    expect(VARIABLES.REELFLOW_SERVICE_PUBLIC_URL.schema.parse(undefined)).toBeUndefined();
  });

  it('marks the keys and signing secrets secret', () => {
    const secret = Object.entries(VARIABLES)
      .filter(([, spec]) => (spec as { secret?: boolean }).secret)
      .map(([name]) => name);
    expect(secret).toEqual(expect.arrayContaining(['REELFLOW_API_KEY', 'REELFLOW_WEBHOOK_SECRETS']));
  });
});
