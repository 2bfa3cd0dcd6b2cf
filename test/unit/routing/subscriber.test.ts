import { DatabaseSync } from 'node:sqlite';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createRouteSubscriber, openSqliteRouteStore } from '../../../src/routing';
import { makeEvent } from '../../integration/bridge-fixtures';

describe('createRouteSubscriber', () => {
  const file = join(mkdtempSync(join(tmpdir(), 'subscriber-')), 'routes.sqlite');
  const store = openSqliteRouteStore(file);
  const rows = new DatabaseSync(file);
  afterAll(async () => {
    await store.close();
    rows.close();
  });

  it("writes the pipeline's signal by default and returns the events that came first, parsed", async () => {
    const early = makeEvent();
    await store.append([{ eventId: early.event_id, requestId: early.request_id, body: JSON.stringify(early) }], 1);
    const events = await createRouteSubscriber(store, { now: () => 2 }).subscribe(early.request_id, 'pipeline/a');
    expect(events).toEqual([early]);
    expect(rows.prepare('SELECT * FROM reelflow_routes WHERE request_id = ?').get(early.request_id)).toEqual(
      expect.objectContaining({ workflow_id: 'pipeline/a', signal_name: 'jobEvent', step_key: null, created_at: 2 }),
    );
  });

  it('names any workflow, its own signal and a step key', async () => {
    await createRouteSubscriber(store).subscribe('req-other', 'team/wf', { signalName: 'clipReady', stepKey: 'intro' });
    expect(rows.prepare('SELECT * FROM reelflow_routes WHERE request_id = ?').get('req-other')).toEqual(
      expect.objectContaining({ workflow_id: 'team/wf', signal_name: 'clipReady', step_key: 'intro' }),
    );
  });
});
