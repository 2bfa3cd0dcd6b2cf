import { readFileSync } from 'node:fs';
import { join } from 'node:path';

/**
 * The version of the installed reelflow package (its package.json, two folders up from both src/config
 * and the compiled dist/config). `reelflow --version` prints it; the default worker build id starts with it.
 */
export function packageVersion(): string {
  const pkg = JSON.parse(readFileSync(join(__dirname, '..', '..', 'package.json'), 'utf8')) as { version: string };
  return pkg.version;
}
