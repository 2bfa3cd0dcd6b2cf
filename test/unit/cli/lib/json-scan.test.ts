import { scanJson } from '../../../../src/cli/lib/json-scan';

describe('scanJson', () => {
  it('finds what JSON.parse finds, with offsets', () => {
    for (const text of ['{}', '[1, -2.5e3, "a\\u00e9\\n", true, null, {"a": [false]}]', ' "x" ']) {
      expect(scanJson(text).error).toBeUndefined();
      expect(() => JSON.parse(text) as unknown).not.toThrow();
    }
    expect(scanJson('{"a": 1} x').error).toEqual({ at: 9, reason: 'text after the JSON value' });
    expect(scanJson('{"a": ').error).toEqual({ at: 6, reason: 'a JSON value is due, not the end of the text' });
    expect(scanJson('"abc').error).toEqual({ at: 0, reason: 'a string that is not closed' });
    expect(scanJson('"a\tb"').error?.at).toBe(2);
    expect(scanJson('01').error?.at).toBe(1);
    // Accepts exactly what JSON.parse accepts.
    for (const text of [
      '"\\x"',
      '"\\u12"',
      '"\\u00e9"',
      '[1,]',
      '{"a" 1}',
      '-',
      '1.',
      '.5',
      'tru',
      '[[[]]]',
      '{"a":{}}',
      '',
    ]) {
      let parses = true;
      try {
        JSON.parse(text);
      } catch {
        parses = false;
      }
      expect([text, scanJson(text).error === undefined]).toEqual([text, parses]);
    }
    expect(scanJson('{"a": {"b": 1, "b": 2}, "c": 3}')).toMatchObject({
      repeated: { key: 'b', at: 15, first: 7 },
      topKeys: new Map([
        ['a', 1],
        ['c', 24],
      ]),
    });
  });
});
