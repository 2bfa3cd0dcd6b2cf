import * as fs from 'node:fs';
import * as path from 'node:path';

/** Writes a benchmark's figures to `.bench/<name>.json` (git ignores the folder) and says so. */
export function writeBenchJson(name: string, figures: unknown): void {
  fs.mkdirSync('.bench', { recursive: true });
  fs.writeFileSync(path.join('.bench', `${name}.json`), `${JSON.stringify(figures, null, 2)}\n`);
  console.log(`written .bench/${name}.json`);
}

/** Runs a benchmark's main function; any error is printed and the process exits 1. */
export function runBench(main: () => Promise<void>): void {
  main().catch((error: unknown) => {
    console.error(error);
    process.exit(1);
  });
}
