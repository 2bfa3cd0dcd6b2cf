import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { stat } from 'node:fs/promises';

/** SHA-256 (hex) and size of a file, read as a stream (never whole into memory). */
export async function hashFile(file: string): Promise<{ sha256: string; bytes: number }> {
  const hash = createHash('sha256');
  let bytes = 0;
  for await (const chunk of createReadStream(file)) {
    hash.update(chunk as Buffer);
    bytes += (chunk as Buffer).length;
  }
  const info = await stat(file);
  if (info.size !== bytes) throw new Error(`${file} changed while it was read`);
  return { sha256: hash.digest('hex'), bytes };
}
