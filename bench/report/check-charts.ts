import { execFile } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';

// eslint-disable-next-line @typescript-eslint/no-require-imports
const { findChromium } = require('../../scripts/chromium-tools') as {
  findChromium(): { path: string; source: string } | null;
};

/** Width and height of a PNG, from its IHDR chunk. */
function pngSize(file: string): { width: number; height: number } {
  const head = fs.readFileSync(file).subarray(0, 24);
  if (head.toString('latin1', 1, 4) !== 'PNG') throw new Error(`${file} is not a PNG`);
  return { width: head.readUInt32BE(16), height: head.readUInt32BE(20) };
}

/**
 * Opens every chart in headless Chromium and saves a screenshot of it in `outDir`; throws when
 * Chromium cannot render one (the SVG is broken). Returns the screenshots, or null when no Chromium is
 * installed (then nothing is checked, and it says so).
 */
export async function checkCharts(svgFiles: string[], outDir: string): Promise<string[] | null> {
  const chromium = findChromium()?.path;
  if (!chromium) {
    console.log(
      'no Chromium found (CHROMIUM_PATH, /usr/bin/chromium, PATH; scripts/ensure-chromium.js installs it): charts not checked',
    );
    return null;
  }
  fs.mkdirSync(outDir, { recursive: true });
  const shots: string[] = [];
  for (const svg of svgFiles) {
    const text = fs.readFileSync(svg, 'utf8');
    const width = Number(/width="(\d+)"/.exec(text)?.[1] ?? 800);
    const height = Number(/height="(\d+)"/.exec(text)?.[1] ?? 600);
    const png = path.join(outDir, `${path.basename(svg, '.svg')}.png`);
    fs.rmSync(png, { force: true });
    const userDir = fs.mkdtempSync(path.join(outDir, 'profile-'));
    try {
      await new Promise<void>((resolve, reject) => {
        execFile(
          chromium,
          [
            '--headless',
            '--no-sandbox',
            '--disable-gpu',
            '--hide-scrollbars',
            `--user-data-dir=${userDir}`,
            `--window-size=${width},${height}`,
            `--screenshot=${png}`,
            `file://${path.resolve(svg)}`,
          ],
          { timeout: 60_000 },
          (error, _stdout, stderr) =>
            error && !fs.existsSync(png)
              ? reject(new Error(`chromium could not render ${svg}: ${stderr.slice(-500)}`))
              : resolve(),
        );
      });
    } finally {
      fs.rmSync(userDir, { recursive: true, force: true });
    }
    const size = pngSize(png);
    if (size.width !== width || size.height !== height)
      throw new Error(`${png}: ${size.width}x${size.height}, expected ${width}x${height}`);
    shots.push(png);
  }
  return shots;
}
