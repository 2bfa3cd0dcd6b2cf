import {
  API_VERSION,
  EVENT_TYPES,
  PROBLEM_CODES,
  generationRequestSchema,
  problemSchema,
  resultFromEvent,
  resultSchema,
  statusResponseSchema,
  validateWith,
  webhookEventSchema,
} from '../../../src/contract';

/** Sample shapes built from the spec's field tables (Resources, Events, Errors). */

const REQUEST_ID = 'req_01HZX3K4Q7';
const LONG_FORM = 'service-video-cinema-long-form-from-references';
const BASE = 'https://api.example.com/v1/queue/requests';

const generationRequest = () => ({
  request_id: REQUEST_ID,
  status: 'IN_QUEUE',
  model: LONG_FORM,
  status_url: `${BASE}/${REQUEST_ID}/status`,
  response_url: `${BASE}/${REQUEST_ID}`,
  cancel_url: `${BASE}/${REQUEST_ID}/cancel`,
});

const video = () => ({
  url: 'https://cdn.example.com/out/video-0.mp4',
  file_name: 'video-0.mp4',
  content_type: 'video/mp4',
});

const result = (credits_used: number | null = 80) => ({
  request_id: REQUEST_ID,
  status: 'COMPLETED',
  model: LONG_FORM,
  credits_used,
  timings: { inference_seconds: 41.7 },
  videos: [video()],
});

/** A `generation.completed` delivery with every field the spec lists, `data` included. */
const webhookEvent = (credits_used: number | null = 80) => ({
  event_id: 'evt_01HZX3M2B9',
  event_type: 'generation.completed',
  api_version: '2025-01-01',
  created_at: '2025-01-01T12:34:56.789Z',
  request_id: REQUEST_ID,
  status: 'OK',
  data: { ...result(credits_used), gateway_request_id: REQUEST_ID, output_count: 1 },
  error: null,
});

/** Paths of the errors a schema reports for a value (empty when it parses). */
function errorPaths(schema: Parameters<typeof validateWith>[0], value: unknown): string[] {
  const validation = validateWith(schema, value);
  return validation.ok ? [] : validation.errors.map((e) => e.path);
}

function without<T extends Record<string, unknown>>(value: T, key: keyof T): Record<string, unknown> {
  const copy: Record<string, unknown> = { ...value };
  delete copy[key as string];
  return copy;
}

describe('generation request (submit answer)', () => {
  it('parses the spec shape', () => {
    expect(generationRequestSchema.parse(generationRequest())).toEqual(generationRequest());
  });

  it.each(Object.keys(generationRequest()))('refuses a missing %s, naming it', (field) => {
    expect(errorPaths(generationRequestSchema, without(generationRequest(), field as never))).toEqual([field]);
  });

  it('refuses a status outside the five states', () => {
    expect(errorPaths(generationRequestSchema, { ...generationRequest(), status: 'QUEUED' })).toEqual(['status']);
  });

  it('refuses a relative status_url (clients follow the URLs as given)', () => {
    expect(
      errorPaths(generationRequestSchema, { ...generationRequest(), status_url: '/v1/queue/requests/x/status' }),
    ).toEqual(['status_url']);
  });
});

describe('status response', () => {
  it.each(['IN_QUEUE', 'IN_PROGRESS', 'COMPLETED', 'FAILED', 'CANCELLED'])('parses status %s', (status) => {
    expect(statusResponseSchema.parse({ status }).status).toBe(status);
  });

  it('keeps fields it does not know (the spec lists only status)', () => {
    expect(statusResponseSchema.parse({ status: 'IN_QUEUE', eta: 3 })).toEqual({ status: 'IN_QUEUE', eta: 3 });
  });

  it('refuses a missing or unknown status', () => {
    expect(errorPaths(statusResponseSchema, {})).toEqual(['status']);
    expect(errorPaths(statusResponseSchema, { status: 'DONE' })).toEqual(['status']);
  });
});

describe('result', () => {
  it('parses the spec shape with an integer cost (long-form)', () => {
    expect(resultSchema.parse(result(80))).toEqual(result(80));
  });

  it('parses the spec shape with a null cost (per-second model)', () => {
    expect(resultSchema.parse({ ...result(null), model: 'service-upscale-video-fast' }).credits_used).toBeNull();
  });

  it('keeps fields beyond the table (the output payload has no formal schema)', () => {
    const extended = { ...result(), seed: 7, timings: { inference_seconds: 1.5, queue_seconds: 0.2 } };
    expect(resultSchema.parse(extended)).toEqual(extended);
  });

  it.each(['request_id', 'status', 'model', 'credits_used', 'videos'])('refuses a missing %s, naming it', (field) => {
    expect(errorPaths(resultSchema, without(result(), field as never))).toEqual([field]);
  });

  it.each(['url', 'file_name', 'content_type'])('names a missing videos.0.%s', (field) => {
    expect(errorPaths(resultSchema, { ...result(), videos: [without(video(), field as never)] })).toEqual([
      `videos.0.${field}`,
    ]);
  });

  it('refuses a fractional cost', () => {
    expect(errorPaths(resultSchema, result(80.5))).toEqual(['credits_used']);
  });
});

describe('webhook event', () => {
  it('parses a generation.completed delivery with every field of the spec', () => {
    const event = webhookEvent();
    const parsed = webhookEventSchema.parse(event);
    expect(parsed).toEqual(event);
    expect(parsed.data?.gateway_request_id).toBe(parsed.request_id);
    expect(parsed.data?.output_count).toBe(parsed.data?.videos?.length);
  });

  it('parses a delivery of a per-second model (credits_used null)', () => {
    expect(webhookEventSchema.parse(webhookEvent(null)).data?.credits_used).toBeNull();
  });

  it('uses the spec event kind and a date-formatted api version', () => {
    expect(EVENT_TYPES.completed).toBe('generation.completed');
    expect(API_VERSION).toMatch(/^\d{4}-\d{2}-\d{2}$/);
  });

  it.each(['event_id', 'event_type', 'api_version', 'created_at', 'request_id', 'status', 'data', 'error'])(
    'refuses a missing %s, naming it',
    (field) => {
      expect(errorPaths(webhookEventSchema, without(webhookEvent(), field as never))).toEqual([field]);
    },
  );

  it.each([
    ['api_version', '2025-1-1'],
    ['api_version', 'v1'],
    ['created_at', '2025-01-01T12:34:56Z'],
    ['created_at', '2025-01-01 12:34:56.789'],
    ['created_at', '2025-01-01T12:34:56.789+01:00'],
  ])('refuses %s = %p', (field, value) => {
    expect(errorPaths(webhookEventSchema, { ...webhookEvent(), [field]: value })).toEqual([field]);
  });

  it('names the path of a broken video inside data (data.videos.0.url)', () => {
    const event = webhookEvent();
    const broken = { ...event, data: { ...event.data, videos: [without(video(), 'url')] } };
    expect(errorPaths(webhookEventSchema, broken)).toEqual(['data.videos.0.url']);
  });

  it('parses an error event with null data', () => {
    const failed = {
      ...webhookEvent(),
      event_type: EVENT_TYPES.failed,
      status: 'ERROR',
      data: null,
      error: { code: 'generation_failed', message: 'the model failed' },
    };
    expect(webhookEventSchema.parse(failed).error?.code).toBe('generation_failed');
  });
});

describe('result carried by a completed event', () => {
  const parsedEvent = (event: unknown) => webhookEventSchema.parse(event);

  it('is the result object of data, without the delivery-only fields', () => {
    expect(resultFromEvent(parsedEvent(webhookEvent()))).toEqual(result());
    expect(resultFromEvent(parsedEvent(webhookEvent(null)))?.credits_used).toBeNull();
  });

  it('keeps fields the spec does not list (the result has no formal schema)', () => {
    const event = webhookEvent();
    expect(resultFromEvent(parsedEvent({ ...event, data: { ...event.data, seed: 42 } }))).toMatchObject({ seed: 42 });
  });

  it.each([
    ['a failed event', (e: ReturnType<typeof webhookEvent>) => ({ ...e, event_type: EVENT_TYPES.failed })],
    ['null data', (e: ReturnType<typeof webhookEvent>) => ({ ...e, data: null })],
    ['no model', (e: ReturnType<typeof webhookEvent>) => ({ ...e, data: without(e.data, 'model') })],
    ['no status', (e: ReturnType<typeof webhookEvent>) => ({ ...e, data: without(e.data, 'status') })],
    ['no videos', (e: ReturnType<typeof webhookEvent>) => ({ ...e, data: without(e.data, 'videos') })],
    [
      'zero videos',
      (e: ReturnType<typeof webhookEvent>) => ({ ...e, data: { ...e.data, videos: [], output_count: 0 } }),
    ],
    [
      'output_count not matching the videos',
      (e: ReturnType<typeof webhookEvent>) => ({ ...e, data: { ...e.data, output_count: 2 } }),
    ],
    [
      'another request id in data',
      (e: ReturnType<typeof webhookEvent>) => ({ ...e, data: { ...e.data, request_id: 'req_other' } }),
    ],
    [
      'a status other than COMPLETED in data',
      (e: ReturnType<typeof webhookEvent>) => ({ ...e, data: { ...e.data, status: 'IN_PROGRESS' } }),
    ],
  ])('is undefined for %s, so the caller fetches the result', (_case, mutate) => {
    expect(resultFromEvent(parsedEvent(mutate(webhookEvent())))).toBeUndefined();
  });

  it('takes the request id from the event when data omits it', () => {
    const event = webhookEvent();
    expect(resultFromEvent(parsedEvent({ ...event, data: without(event.data, 'request_id') }))?.request_id).toBe(
      REQUEST_ID,
    );
  });
});

describe('problem document', () => {
  const problem = {
    type: 'https://reelflow.dev/problems/validation_failed',
    title: 'Invalid input',
    status: 422,
    detail: 'image_urls: Too big',
    instance: `/v1/queue/${LONG_FORM}`,
    code: 'validation_failed',
    errors: [{ path: 'image_urls', message: 'Too big: expected array to have <=30 items' }],
  };

  it('parses a problem with field errors', () => {
    expect(problemSchema.parse(problem)).toEqual(problem);
  });

  it('parses a minimal problem (code only)', () => {
    expect(problemSchema.parse({ code: 'not_found' })).toEqual({ code: 'not_found' });
  });

  it('refuses a problem without its machine-readable code', () => {
    expect(errorPaths(problemSchema, without(problem, 'code'))).toEqual(['code']);
  });

  it('names a broken field error (errors.0.path)', () => {
    expect(errorPaths(problemSchema, { ...problem, errors: [{ message: 'x' }] })).toEqual(['errors.0.path']);
  });

  it('maps every problem code to an HTTP error status', () => {
    for (const [code, status] of Object.entries(PROBLEM_CODES)) {
      expect([code, status >= 400 && status <= 599]).toEqual([code, true]);
    }
    expect(PROBLEM_CODES.validation_failed).toBe(422);
    expect(PROBLEM_CODES.unauthorized).toBe(401);
    expect(PROBLEM_CODES.rate_limited).toBe(429);
  });
});
