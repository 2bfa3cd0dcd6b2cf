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
const ESCAPES = '"\\/bfnrt';

/** Scans `text` as one JSON value (see JsonScan). Each reader returns false once it recorded an error. */
export function scanJson(text: string): JsonScan {
  const result: JsonScan = { topKeys: new Map() };
  let i = 0;
  const fail = (at: number, reason: string): false => {
    result.error = { at, reason };
    return false;
  };
  const skipSpace = () => {
    while (i < text.length && ' \t\n\r'.includes(text[i] as string)) i += 1;
  };
  const found = (): string => (i >= text.length ? 'the end of the text' : JSON.stringify(text[i]));
  /** `close` after an item, else "," and another item: true to go on, false when done or failed. */
  const next = (close: string): boolean | 'done' => {
    skipSpace();
    if (text[i] === ',') {
      i += 1;
      return true;
    }
    if (text[i] === close) {
      i += 1;
      return 'done';
    }
    return fail(i, `"," or "${close}" is due, not ${found()}`);
  };

  const string = (): string | false => {
    const start = i;
    i += 1; // the opening quote
    while (i < text.length && text[i] !== '"') {
      if (text.charCodeAt(i) < 0x20) return fail(i, 'a control character (a line break or tab) inside a string');
      if (text[i] !== '\\') {
        i += 1;
        continue;
      }
      const escape = text[i + 1] ?? '';
      if (escape === 'u' && !/^[0-9a-fA-F]{4}$/.test(text.slice(i + 2, i + 6))) return fail(i, 'a bad \\u escape');
      if (escape === '' || !(escape === 'u' || ESCAPES.includes(escape))) return fail(i, 'a bad escape in a string');
      i += escape === 'u' ? 6 : 2;
    }
    if (i >= text.length) return fail(start, 'a string that is not closed');
    i += 1;
    return JSON.parse(text.slice(start, i)) as string;
  };

  const member = (depth: number, keys: Map<string, number>): boolean => {
    skipSpace();
    if (text[i] !== '"') return fail(i, `a key in double quotes is due, not ${found()}`);
    const at = i;
    const key = string();
    if (key === false) return false;
    const first = keys.get(key);
    if (first !== undefined) result.repeated ??= { key, at, first };
    else {
      keys.set(key, at);
      if (depth === 1) result.topKeys.set(key, at);
    }
    skipSpace();
    if (text[i] !== ':') return fail(i, `":" is due after the key, not ${found()}`);
    i += 1;
    return value(depth);
  };

  const object = (depth: number): boolean => {
    i += 1;
    const keys = new Map<string, number>();
    skipSpace();
    if (text[i] === '}') {
      i += 1;
      return true;
    }
    for (;;) {
      if (!member(depth, keys)) return false;
      const more = next('}');
      if (more !== true) return more === 'done';
    }
  };

  const array = (depth: number): boolean => {
    i += 1;
    skipSpace();
    if (text[i] === ']') {
      i += 1;
      return true;
    }
    for (;;) {
      if (!value(depth)) return false;
      const more = next(']');
      if (more !== true) return more === 'done';
    }
  };

  function value(depth: number): boolean {
    skipSpace();
    if (depth >= MAX_DEPTH) return fail(i, `nested deeper than ${MAX_DEPTH} levels`);
    const c = text[i];
    if (c === '{') return object(depth + 1);
    if (c === '[') return array(depth + 1);
    if (c === '"') return string() !== false;
    for (const word of ['true', 'false', 'null'])
      if (text.startsWith(word, i)) {
        i += word.length;
        return true;
      }
    NUMBER.lastIndex = i;
    if (!NUMBER.exec(text)) return fail(i, `a JSON value is due, not ${found()}`);
    i = NUMBER.lastIndex;
    return true;
  }

  if (value(0)) {
    skipSpace();
    if (i < text.length) fail(i, 'text after the JSON value');
  }
  return result;
}
