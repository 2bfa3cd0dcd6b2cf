import { EVENT_TYPES, resultFromEvent, terminalStateOf } from '../../../src/contract/events';
import type { WebhookEvent } from '../../../src/contract';

const video = { url: 'https://cdn.test/out.mp4', file_name: 'out.mp4', content_type: 'video/mp4' };
const completed = (data: Record<string, unknown>): WebhookEvent =>
  ({
    event_id: 'e1',
    event_type: EVENT_TYPES.completed,
    api_version: '2025-01-01',
    created_at: '2026-11-25T10:00:00.000Z',
    request_id: 'r1',
    status: 'OK',
    data,
    error: null,
  }) as WebhookEvent;
const whole = {
  status: 'COMPLETED',
  model: 'm',
  credits_used: 12,
  videos: [video],
  gateway_request_id: 'r1',
  output_count: 1,
};

describe('terminalStateOf', () => {
  it('reads the state from the event type', () => {
    expect(terminalStateOf({ ...completed({}), event_type: 'generation.completed' })).toBe('COMPLETED');
    expect(terminalStateOf({ ...completed({}), event_type: 'generation.failed' })).toBe('FAILED');
    expect(terminalStateOf({ ...completed({}), event_type: 'generation.cancelled' })).toBe('CANCELLED');
  });

  it('reads a terminal data.status of another event type, and nothing from a running one', () => {
    expect(terminalStateOf({ ...completed({ status: 'FAILED' }), event_type: 'generation.updated' })).toBe('FAILED');
    expect(terminalStateOf({ ...completed({ status: 'IN_PROGRESS' }), event_type: 'generation.updated' })).toBeNull();
    expect(terminalStateOf({ ...completed({}), event_type: 'generation.updated', data: null } as never)).toBeNull();
  });
});

describe('resultFromEvent', () => {
  it('gives the result a whole completed event carries, without the envelope fields', () => {
    expect(resultFromEvent(completed(whole))).toEqual({
      request_id: 'r1',
      status: 'COMPLETED',
      model: 'm',
      credits_used: 12,
      videos: [video],
    });
  });

  it.each([
    ['another request id', { ...whole, request_id: 'r2' }],
    ['no model', { ...whole, model: undefined }],
    ['a fractional charge', { ...whole, credits_used: 1.5 }],
    ['no videos', { ...whole, videos: [] }],
    ['a video without a url', { ...whole, videos: [{ ...video, url: '' }] }],
    ['an output_count that does not match', { ...whole, output_count: 2 }],
    ['bad timings', { ...whole, timings: { inference_seconds: 'slow' } }],
    ['a status other than COMPLETED', { ...whole, status: 'FAILED' }],
  ])('gives nothing for %s (the result is fetched instead)', (_, data) => {
    expect(resultFromEvent(completed(data))).toBeUndefined();
  });

  it('accepts a null charge and numeric timings', () => {
    expect(
      resultFromEvent(completed({ ...whole, credits_used: null, timings: { inference_seconds: 3 } })),
    ).toMatchObject({
      credits_used: null,
    });
  });

  it('gives nothing for an event that is not a completion', () => {
    expect(resultFromEvent({ ...completed(whole), event_type: 'generation.failed' })).toBeUndefined();
  });
});
