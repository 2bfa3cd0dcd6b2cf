import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';

/**
 * The repository speaks to the people who use and maintain reelflow: no numbers of internal work units
 * ("stop" or "issue" and a number) in any tracked file — name the version, the date or the change instead —;
 * docs/ (the generated API reference aside) within a word budget, the README within a line budget, and
 * every page of docs/ reachable from the README or docs/architecture.md.
 */

const root = path.join(__dirname, '../..');
const DOCS_WORD_BUDGET = 37_000;
const README_LINE_BUDGET = 250;
/** "stop", "stops", "issue" or "issues" and a number (or "#" and a number): what the issue's own grep looks for. */
const WORK_UNIT = /\bstops? [0-9]+|\bissues? #?[0-9]+/i;
/** Files that are not text: their bytes say nothing about work units. */
const BINARY = /\.(png|jpe?g|gif|webp|mp4|mov|wav|mp3|m4a|gz|zip|ico|woff2?)$/i;

function trackedFiles(): string[] {
  const out = execFileSync('git', ['ls-files', '-z'], { cwd: root, encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 });
  return out.split('\0').filter((file) => file !== '' && fs.existsSync(path.join(root, file)));
}

function markdownUnder(dir: string): string[] {
  return fs.readdirSync(path.join(root, dir), { withFileTypes: true }).flatMap((entry) => {
    const rel = path.posix.join(dir, entry.name);
    if (entry.isDirectory()) return rel === 'docs/api' ? [] : markdownUnder(rel);
    return entry.name.endsWith('.md') ? [rel] : [];
  });
}

/** The repository-relative targets of the relative markdown links in `file`, anchors dropped. */
function linksOf(file: string): Set<string> {
  const text = fs.readFileSync(path.join(root, file), 'utf8');
  const targets = new Set<string>();
  for (const match of text.matchAll(/\]\(([^)\s]+)\)/g)) {
    const target = match[1]!.split('#')[0]!;
    if (target === '' || /^[a-z]+:/i.test(target)) continue;
    targets.add(path.posix.normalize(path.posix.join(path.posix.dirname(file), target)));
  }
  return targets;
}

describe('documentation for users and maintainers', () => {
  it('names no internal work unit ("stop N", "issue N") in any tracked file', () => {
    const hits: string[] = [];
    for (const file of trackedFiles()) {
      if (BINARY.test(file)) continue;
      const text = fs.readFileSync(path.join(root, file), 'utf8');
      if (!WORK_UNIT.test(text)) continue;
      text.split('\n').forEach((line, i) => {
        const found = WORK_UNIT.exec(line);
        if (found) hits.push(`${file}:${i + 1}: "${found[0]}"`);
      });
    }
    expect(hits).toEqual([]);
  });

  it(`keeps docs/ (docs/api aside) within ${DOCS_WORD_BUDGET.toLocaleString('en')} words`, () => {
    const words = markdownUnder('docs').reduce(
      (sum, file) =>
        sum +
        fs
          .readFileSync(path.join(root, file), 'utf8')
          .split(/\s+/)
          .filter((word) => word !== '').length,
      0,
    );
    expect(words).toBeLessThanOrEqual(DOCS_WORD_BUDGET);
  });

  it(`keeps the README within ${README_LINE_BUDGET} lines`, () => {
    const lines = fs.readFileSync(path.join(root, 'README.md'), 'utf8').replace(/\n$/, '').split('\n').length;
    expect(lines).toBeLessThanOrEqual(README_LINE_BUDGET);
  });

  it('links every page of docs/ from the README or docs/architecture.md', () => {
    const linked = new Set([...linksOf('README.md'), ...linksOf('docs/architecture.md')]);
    const unlinked = markdownUnder('docs').filter((page) => page !== 'docs/architecture.md' && !linked.has(page));
    expect(unlinked).toEqual([]);
  });

  it('finds a work unit where there is one, and none in a version or a date', () => {
    // Built at run time, so this file's own text names no work unit.
    const units = ['stop', 'Stops', 'issue', 'Issue #'].map(
      (word, i) => `${word}${word.endsWith('#') ? '' : ' '}${i + 1}4`,
    );
    expect(units.filter((s) => !WORK_UNIT.test(s))).toEqual([]);
    expect(
      ['0.3.0', '2026-11-28', 'nodejs/node#47739', 'issues/12', 'nonstop 4'].filter((s) => WORK_UNIT.test(s)),
    ).toEqual([]);
  });
});
