import { assertWithinBudget, jsonBytes, largestFields } from '../../../src/pipeline-spec/payload-budget';
import { PayloadBudgetError } from '../../../src/pipeline-spec/errors';

describe('jsonBytes', () => {
  it('counts UTF-8 bytes of the JSON form', () => {
    expect(jsonBytes({ a: 'é' })).toBe(Buffer.byteLength('{"a":"é"}'));
    expect(jsonBytes(undefined)).toBe(0);
  });
});

describe('largestFields', () => {
  it('lists leaves by path, largest first, up to the limit', () => {
    const value = { prompt: 'x'.repeat(100), steps: [{ input: { image_urls: ['y'.repeat(50), 'z'] } }], n: 1 };
    expect(largestFields(value, 2)).toEqual([
      { path: 'prompt', bytes: 102 },
      { path: 'steps.0.input.image_urls.0', bytes: 52 },
    ]);
  });

  it('names a bare value (root)', () => {
    expect(largestFields('abc')).toEqual([{ path: '(root)', bytes: 5 }]);
  });
});

describe('assertWithinBudget', () => {
  it('passes a value at the budget exactly', () => {
    expect(() => assertWithinBudget('x'.repeat(8), 'spec', 10)).not.toThrow();
  });

  it('refuses a value over it, naming its size, the largest fields and how to fix each', () => {
    const value = {
      prompt: 'p'.repeat(300),
      image_urls: ['data:image/png;base64,' + 'A'.repeat(400)],
      other: 'o'.repeat(200),
    };
    let error: unknown;
    try {
      assertWithinBudget(value, 'pipeline demo', 512);
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(PayloadBudgetError);
    const budget = error as PayloadBudgetError;
    expect(budget.bytes).toBe(jsonBytes(value));
    expect(budget.budget).toBe(512);
    expect(budget.message).toMatch(/^pipeline demo is 0\.9 KiB \(\d+ bytes\) serialised, more than the 0\.5 KiB/);
    expect(budget.message).toMatch(/image_urls\.0: 0\.4 KiB — give a local file path or an https URL/);
    expect(budget.message).toMatch(/prompt: 0\.3 KiB — shorten the prompt/);
    expect(budget.message).toMatch(/other: 0\.2 KiB — make it smaller/);
    expect(budget.message).toMatch(/nothing was started/);
  });
});
