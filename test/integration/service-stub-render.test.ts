import * as fs from 'node:fs';
import * as path from 'node:path';
import { LOCAL_PER_SECOND_RATES, pricePerSecond } from '../../src/contract/pricing';
import { probe } from '../../src/media/ffmpeg';
import { startLocalService } from '../../src/local-service';
import {
  api,
  LONG_FORM,
  TEST_ADMIN_KEY,
  PIXEL_PNG,
  startTestService,
  tempDataDir,
  waitForStatus,
  type TestService,
} from '../helpers/local-service';
import { silentWavDataUri } from './workflow-harness';

/** The stub render mode (`--render stub`, a benchmarking aid) and the service's own clocks. */
describe('local service, stub render mode', () => {
  const HOLD_MS = 300;
  let svc: TestService;
  let fixtures: string;

  beforeAll(async () => {
    fixtures = tempDataDir('reelflow-stub-fixtures-');
    svc = await startTestService({ render: 'stub', stubHoldMs: HOLD_MS, stubFixturesDir: fixtures });
  });
  afterAll(async () => {
    await svc.close();
    fs.rmSync(fixtures, { recursive: true, force: true });
  });

  async function runJob(
    model: string,
    input: Record<string, unknown>,
  ): Promise<{ id: string; url: string; file: string }> {
    const submitted = await svc.call('POST', `/v1/queue/${model}`, { body: input });
    expect(submitted.status).toBe(202);
    const id = String(submitted.body.request_id);
    // Generous: the first job of a size renders its fixture once, at nice 19 (slow on a busy machine).
    expect(await waitForStatus(svc.url, id, (s) => s !== 'IN_QUEUE' && s !== 'IN_PROGRESS', 300_000)).toBe('COMPLETED');
    const result = await svc.call('GET', `/v1/queue/requests/${id}`);
    const url = String(result.body.videos[0].url);
    const file = path.join(svc.dataDir, 'files', id, String(result.body.videos[0].file_name));
    return { id, url, file };
  }

  test('a chain completes with real, playable clips of the size each model makes, after the hold, and the clocks say when', async () => {
    const generated = await runJob(LONG_FORM, {
      image_urls: [PIXEL_PNG],
      duration: '4',
      resolution: '480p',
      aspect_ratio: '16:9',
    });
    const revoiced = await runJob('service-horizon-studio', {
      video_url: generated.url,
      audio_url: silentWavDataUri(1, 8000),
    });
    const upscaled = await runJob('service-upscale-video-fast', { video_url: revoiced.url });

    for (const [job, width, height] of [
      [generated, 854, 480],
      [revoiced, 854, 480],
      [upscaled, 1708, 960],
    ] as const) {
      const probed = await probe(job.file);
      const video = probed.streams.find((s) => s.codecType === 'video');
      expect({
        width: video?.width,
        height: video?.height,
        audio: probed.streams.some((s) => s.codecType === 'audio'),
      }).toEqual({ width, height, audio: true });
      expect(probed.duration).toBeGreaterThan(3.9);
      expect(probed.duration).toBeLessThan(4.2);
    }
    // Fixtures are rendered once and kept: three jobs, two sizes.
    expect(
      fs
        .readdirSync(fixtures)
        .filter((f) => f.endsWith('.mp4'))
        .sort(),
    ).toEqual(['stub-1708x960-4s.mp4', 'stub-854x480-4s.mp4']);

    const clocks = await svc.call('GET', '/v1/admin/jobs', { key: TEST_ADMIN_KEY });
    expect(clocks.status).toBe(200);
    const byId = new Map<string, Record<string, number | string | null>>(
      clocks.body.jobs.map((j: { id: string }) => [j.id, j]),
    );
    for (const job of [generated, revoiced, upscaled]) {
      const c = byId.get(job.id)!;
      const [received, submitted, started, completed] = [c.receivedAt, c.submittedAt, c.startedAt, c.completedAt].map(
        Number,
      );
      expect(received).toBeLessThanOrEqual(submitted!);
      expect(submitted).toBeLessThanOrEqual(started!);
      expect(completed! - started!).toBeGreaterThanOrEqual(HOLD_MS - 5);
    }
    expect([
      byId.get(generated.id)!.inputRequestId,
      byId.get(revoiced.id)!.inputRequestId,
      byId.get(upscaled.id)!.inputRequestId,
    ]).toEqual([null, generated.id, revoiced.id]);
    expect(clocks.body.counters.submits).toBe(3);
    // Per-second models are billed by the stub clip's known length (4 s), exactly as a probe would.
    const charged = (id: string) => svc.service.jobs().find((j) => j.id === id)!.creditsCharged;
    expect([charged(revoiced.id), charged(upscaled.id)]).toEqual([
      pricePerSecond(LOCAL_PER_SECOND_RATES['service-horizon-studio'].standard, 4),
      pricePerSecond(LOCAL_PER_SECOND_RATES['service-upscale-video-fast'].standard, 4),
    ]);
  }, 900_000);

  test('the clocks are an admin route: no credential 401, an integration key 403', async () => {
    expect((await api(svc.url, 'GET', '/v1/admin/jobs', { key: null })).status).toBe(401);
    expect((await api(svc.url, 'GET', '/v1/admin/jobs')).status).toBe(403);
  });

  test('an unknown render mode stops the start, naming the option', async () => {
    const dataDir = tempDataDir();
    try {
      await expect(startLocalService({ dataDir, render: 'fast' as never })).rejects.toThrow(/render/);
    } finally {
      fs.rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
