import { JobEventBuffer, serviceErrorOf } from '../../../../../src/workflows/steps/job/job-event-buffer';
import type { WebhookEvent } from '../../../../../src/contract';

const result = (requestId: string) => ({
  request_id: requestId,
  status: 'COMPLETED',
  model: 'service-upscale-video-fast',
  credits_used: 12,
  videos: [{ url: `https://cdn.test/${requestId}.mp4`, file_name: 'out.mp4', content_type: 'video/mp4' }],
});

function event(id: string, requestId: string, type: string, extra: Partial<WebhookEvent> = {}): WebhookEvent {
  return {
    event_id: id,
    event_type: type,
    api_version: '2025-01-01',
    created_at: '2026-11-25T10:00:00.000Z',
    request_id: requestId,
    status: 'OK',
    data: type === 'generation.completed' ? { ...result(requestId), output_count: 1 } : null,
    error: null,
    ...extra,
  } as WebhookEvent;
}

describe('JobEventBuffer', () => {
  it('records the terminal state an event reports, per request', () => {
    const buffer = new JobEventBuffer();
    buffer.accept(event('e1', 'req-a', 'generation.completed'));
    buffer.accept(event('e2', 'req-b', 'generation.failed'));
    buffer.accept(event('e3', 'req-c', 'generation.cancelled'));
    expect(buffer.terminalOf('req-a')?.state).toBe('COMPLETED');
    expect(buffer.terminalOf('req-b')?.state).toBe('FAILED');
    expect(buffer.terminalOf('req-c')?.state).toBe('CANCELLED');
    expect(buffer.terminalOf('req-unknown')).toBeUndefined();
  });

  it('keeps the whole result a completed event carries, and none from an event that carries a partial one', () => {
    const buffer = new JobEventBuffer();
    buffer.accept(event('e1', 'req-a', 'generation.completed'));
    buffer.accept(event('e2', 'req-b', 'generation.completed', { data: { status: 'COMPLETED' } }));
    expect(buffer.terminalOf('req-a')?.result).toEqual(result('req-a'));
    expect(buffer.terminalOf('req-b')?.state).toBe('COMPLETED');
    expect(buffer.terminalOf('req-b')?.result).toBeUndefined();
  });

  it('keeps the service reason of a failure event', () => {
    const buffer = new JobEventBuffer();
    buffer.accept(
      event('e1', 'req-a', 'generation.failed', { error: { code: 'content_policy', message: 'refused' } } as never),
    );
    expect(buffer.terminalOf('req-a')?.error).toEqual({ code: 'content_policy', message: 'refused' });
    expect(buffer.terminalOf('req-b')?.error).toBeUndefined();
  });

  it('counts a repeated event_id as a duplicate and takes nothing from it', () => {
    const buffer = new JobEventBuffer();
    buffer.accept(event('e1', 'req-a', 'generation.failed'));
    buffer.accept(event('e1', 'req-a', 'generation.completed'));
    expect(buffer.terminalOf('req-a')?.state).toBe('FAILED');
    expect(buffer.counts(['req-a'])).toEqual({ received: 1, duplicates: 1, ignored: 0 });
  });

  it('lets the first terminal event of a request win; a later distinct one counts as ignored', () => {
    const buffer = new JobEventBuffer();
    buffer.accept(event('e1', 'req-a', 'generation.cancelled'));
    buffer.accept(event('e2', 'req-a', 'generation.completed'));
    expect(buffer.terminalOf('req-a')?.state).toBe('CANCELLED');
    expect(buffer.terminalOf('req-a')?.result).toBeUndefined();
    expect(buffer.counts(['req-a'])).toEqual({ received: 2, duplicates: 0, ignored: 1 });
  });

  it('counts an event that says nothing terminal as ignored', () => {
    const buffer = new JobEventBuffer();
    buffer.accept(event('e1', 'req-a', 'generation.progress', { data: { status: 'IN_PROGRESS' } }));
    expect(buffer.terminalOf('req-a')).toBeUndefined();
    expect(buffer.counts(['req-a'])).toEqual({ received: 1, duplicates: 0, ignored: 1 });
  });

  it('keeps events of a request it does not know yet (a submit still in flight) and counts them ignored until it is one of its own', () => {
    const buffer = new JobEventBuffer();
    buffer.accept(event('e1', 'req-later', 'generation.completed'));
    expect(buffer.counts([])).toEqual({ received: 1, duplicates: 0, ignored: 1 });
    expect(buffer.terminalOf('req-later')?.state).toBe('COMPLETED');
    expect(buffer.counts(['req-later'])).toEqual({ received: 1, duplicates: 0, ignored: 0 });
  });
});

describe('serviceErrorOf', () => {
  it('takes {code, message} and drops other fields', () => {
    expect(serviceErrorOf({ code: 'x', message: 'y', retry: true })).toEqual({ code: 'x', message: 'y' });
  });

  it.each([[null], [undefined], ['boom'], [{ code: 'x' }], [{ message: 'y' }], [{ code: 1, message: 'y' }]])(
    'gives nothing for %p',
    (value) => {
      expect(serviceErrorOf(value)).toBeUndefined();
    },
  );
});
