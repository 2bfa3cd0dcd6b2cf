/**
 * A JSON syntax scan that says where: the first syntax error's offset and reason, every key of the
 * top-level object with its offset, and the first key repeated inside one object (JSON.parse keeps
 * the last value silently). V8's own messages give no position for many errors
 * (`Unexpected token 'o', "nope" is not valid JSON`), and a manifest's bad line is reported by line
 * and column (docs/batches.md).
 */

/** What a scan found; offsets are 0-based indexes into the scanned text. */
export interface JsonScan {
  /** The first syntax error, when the text is not one JSON value. */
  error?: { at: number; reason: string };
  /** The first key given twice in one object, where it is repeated and where it came first. */
  repeated?: { key: string; at: number; first: number };
  /** Keys of the top-level object (when the value is one) and where each starts. */
  topKeys: Map<string, number>;
}

/** Deeper nesting than this is refused as an error (the scan recurses). */
const MAX_DEPTH = 512;
const NUMBER = /-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?/y;

class ScanError extends Error {
  constructor(
    readonly at: number,
    readonly reason: string,
  ) {
    super(reason);
  }
}

/** Scans `text` as one JSON value (see JsonScan). */
export function scanJson(text: string): JsonScan {
  const result: JsonScan = { topKeys: new Map() };
  let i = 0;
  const skipSpace = () => {
    while (i < text.length && ' \t\n\r'.includes(text[i] as string)) i += 1;
  };
  const found = (): string => (i >= text.length ? 'the end of the text' : JSON.stringify(text[i]));

  const string = (): string => {
    const start = i;
    i += 1; // the opening quote
    while (i < text.length && text[i] !== '"') {
      const code = text.charCodeAt(i);
      if (code < 0x20) throw new ScanError(i, 'a control character (a line break or tab) inside a string');
      if (text[i] === '\\') {
        const escape = text[i + 1] ?? '';
        if (escape === 'u') {
          if (!/^[0-9a-fA-F]{4}$/.test(text.slice(i + 2, i + 6))) throw new ScanError(i, 'a bad \\u escape');
          i += 6;
          continue;
        }
        if (!'"\\/bfnrt'.includes(escape) || escape === '') throw new ScanError(i, 'a bad escape in a string');
        i += 2;
        continue;
      }
      i += 1;
    }
    if (i >= text.length) throw new ScanError(start, 'a string that is not closed');
    i += 1;
    return JSON.parse(text.slice(start, i)) as string;
  };

  const object = (depth: number): void => {
    i += 1;
    const keys = new Map<string, number>();
    skipSpace();
    if (text[i] === '}') {
      i += 1;
      return;
    }
    for (;;) {
      skipSpace();
      if (text[i] !== '"') throw new ScanError(i, `a key in double quotes is due, not ${found()}`);
      const at = i;
      const key = string();
      const first = keys.get(key);
      if (first !== undefined && !result.repeated) result.repeated = { key, at, first };
      if (first === undefined) keys.set(key, at);
      if (depth === 1 && first === undefined) result.topKeys.set(key, at);
      skipSpace();
      if (text[i] !== ':') throw new ScanError(i, `":" is due after the key, not ${found()}`);
      i += 1;
      value(depth);
      skipSpace();
      if (text[i] === ',') {
        i += 1;
        continue;
      }
      if (text[i] === '}') {
        i += 1;
        return;
      }
      throw new ScanError(i, `"," or "}" is due, not ${found()}`);
    }
  };

  const array = (depth: number): void => {
    i += 1;
    skipSpace();
    if (text[i] === ']') {
      i += 1;
      return;
    }
    for (;;) {
      value(depth);
      skipSpace();
      if (text[i] === ',') {
        i += 1;
        continue;
      }
      if (text[i] === ']') {
        i += 1;
        return;
      }
      throw new ScanError(i, `"," or "]" is due, not ${found()}`);
    }
  };

  function value(depth: number): void {
    skipSpace();
    if (depth >= MAX_DEPTH) throw new ScanError(i, `nested deeper than ${MAX_DEPTH} levels`);
    const c = text[i];
    if (c === '{') return object(depth + 1);
    if (c === '[') return array(depth + 1);
    if (c === '"') {
      string();
      return;
    }
    for (const word of ['true', 'false', 'null'])
      if (text.startsWith(word, i)) {
        i += word.length;
        return;
      }
    NUMBER.lastIndex = i;
    if (NUMBER.exec(text)) {
      i = NUMBER.lastIndex;
      return;
    }
    throw new ScanError(i, `a JSON value is due, not ${found()}`);
  }

  try {
    value(0);
    skipSpace();
    if (i < text.length) throw new ScanError(i, 'text after the JSON value');
  } catch (error) {
    if (!(error instanceof ScanError)) throw error;
    result.error = { at: error.at, reason: error.reason };
  }
  return result;
}
