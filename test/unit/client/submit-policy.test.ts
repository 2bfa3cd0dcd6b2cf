import {
  IDEMPOTENCY_SETTINGS,
  SUBMIT_FAILURE_KINDS,
  SUBMIT_POLICY,
  submitAction,
} from '../../../src/client/submit-policy';
import * as fs from 'node:fs';
import * as path from 'node:path';

describe('the submit policy table', () => {
  it('retries a request that may have been sent only where the service honours the key', () => {
    expect(submitAction('maybe-sent', 'honoured')).toBe('retry');
    expect(submitAction('maybe-sent', 'unknown')).toBe('ambiguous');
    for (const setting of IDEMPOTENCY_SETTINGS) {
      expect(submitAction('not-sent', setting)).toBe('retry');
      expect(submitAction('refused', setting)).toBe('retry');
      expect(submitAction('rejected', setting)).toBe('final');
      expect(submitAction('bad-answer', setting)).toBe('final');
    }
  });

  it('is the table docs/submit-policy.md shows, row for row', () => {
    const doc = fs.readFileSync(path.join(__dirname, '../../../docs/submit-policy.md'), 'utf8');
    for (const kind of SUBMIT_FAILURE_KINDS) {
      const row = doc.split('\n').find((line) => line.startsWith(`| \`${kind}\``));
      expect(row).toBeDefined();
      const cells = row!.split('|').map((c) => c.trim());
      // | kind | what | honoured | unknown |
      expect([cells[3], cells[4]]).toEqual([SUBMIT_POLICY[kind].honoured, SUBMIT_POLICY[kind].unknown]);
    }
  });
});
