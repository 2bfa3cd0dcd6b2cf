import { copyFile, link, mkdir, rename, rm, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { modelDefinition, type ModelId } from '../../contract';
import { runFfmpeg } from '../../media/ffmpeg';
import { AAC, FPS, H264 } from './models/common';
import { rendererOf, type ClipShape } from './models';
import { outputFileName, type ModelRunner, type RenderedFile, type RenderRequest } from './runner';

/**
 * The stub render mode of the local service (`--render stub`), a benchmarking aid: a job completes
 * with a real, playable, pre-rendered clip of the right kind — the frame size and length the real
 * model would produce — hard-linked (or copied) into the job's output, after `holdMs`. No ffmpeg
 * runs per job; each distinct (width, height, seconds) fixture is rendered once, at the lowest CPU
 * priority, and kept in `fixturesDir` for later runs.
 *
 * The output's size follows the model (each model's `stubShape`, ./models): long-form from its aspect
 * ratio and resolution, re-voicing keeps the input's size, upscaling doubles it; re-voicing and
 * upscaling keep the input's length. Those are known without probing when the input is an earlier
 * stub output of this service (the chained case benchmarks run). Any other input (a URL or data URI from a client) is rendered by
 * `fallback`, the real runner, so the stub never invents a size it has not measured.
 */
export interface StubRunnerOptions {
  /** The real runner: inputs the stub cannot size, and pricing of such inputs. */
  fallback: ModelRunner;
  /** Service public origin; `${ownOrigin}/files/<request_id>/<file_name>` marks its own outputs. */
  ownOrigin: string;
  /** Where pre-rendered fixtures are kept (created if missing). */
  fixturesDir: string;
  /** How long a stub render takes, in ms (0: as fast as a hard link). */
  holdMs: number;
}

/** Outputs of the stub, by `<request_id>/<file_name>`: their shape is known, so chains need no probe. */
type ShapeIndex = Map<string, ClipShape>;

/** Creates the stub runner (see StubRunnerOptions). */
export function createStubModelRunner(options: StubRunnerOptions): ModelRunner {
  const shapes: ShapeIndex = new Map();
  const fixtures = new Map<string, Promise<string>>();
  const ownFiles = `${options.ownOrigin}/files/`;

  /** The shape of an earlier stub output named by `uri`, or null for anything else. */
  function inputShape(uri: string): ClipShape | null {
    if (!uri.startsWith(ownFiles)) return null;
    const parts = uri
      .slice(ownFiles.length)
      .split('/')
      .map((p) => decodeURIComponent(p));
    return parts.length === 2 ? (shapes.get(parts.join('/')) ?? null) : null;
  }

  /** Output shape of a render, or null when the stub cannot know it without a probe. */
  function outputShape(model: ModelId, input: RenderRequest['input']): ClipShape | null {
    return rendererOf(model).stubShape(input, inputShape);
  }

  /** The fixture of a shape, rendered once (testsrc2 picture and a tone, H.264 + AAC). */
  function fixture(shape: ClipShape): Promise<string> {
    const name = `stub-${shape.width}x${shape.height}-${shape.seconds}s.mp4`;
    let pending = fixtures.get(name);
    if (!pending) {
      pending = (async () => {
        const file = join(options.fixturesDir, name);
        if (await exists(file)) return file;
        await mkdir(options.fixturesDir, { recursive: true });
        // Written beside and renamed, so a crash or a parallel service never leaves half a fixture.
        const partial = `${file}.${process.pid}.partial.mp4`;
        await runFfmpeg([
          '-f',
          'lavfi',
          '-i',
          `testsrc2=size=${shape.width}x${shape.height}:rate=${FPS}:duration=${shape.seconds}`,
          '-f',
          'lavfi',
          '-i',
          `sine=frequency=440:sample_rate=48000:duration=${shape.seconds}`,
          '-map',
          '0:v',
          '-map',
          '1:a',
          ...H264,
          ...AAC,
          '-shortest',
          partial,
        ]);
        await rename(partial, file);
        return file;
      })();
      pending.catch(() => fixtures.delete(name));
      fixtures.set(name, pending);
    }
    return pending;
  }

  async function render(req: RenderRequest): Promise<{ files: RenderedFile[]; outputSeconds: number }> {
    const shape = outputShape(req.model, req.input);
    if (!shape) return options.fallback.render(req);
    const source = await fixture(shape);
    await hold(options.holdMs, req.signal);
    const fileName = outputFileName(req.model, req.requestId);
    const target = join(req.outputDir, fileName);
    await mkdir(req.outputDir, { recursive: true });
    await rm(target, { force: true });
    await link(source, target).catch(() => copyFile(source, target));
    shapes.set(`${req.requestId}/${fileName}`, shape);
    return { files: [{ path: target, fileName, contentType: 'video/mp4' }], outputSeconds: shape.seconds };
  }

  async function billedSeconds(model: ModelId, input: RenderRequest['input'], keepIn?: string): Promise<number> {
    const rule = modelDefinition(model).price;
    if (rule.kind === 'per-second') {
      const uri = (input as Record<string, unknown>)[rule.clipField];
      const source = typeof uri === 'string' ? inputShape(uri) : null;
      // The stub's own clips are billed by their known length, exactly what a probe would say.
      if (source) return source.seconds;
    }
    return options.fallback.billedSeconds(model, input, keepIn);
  }

  return { render, billedSeconds };
}

async function exists(file: string): Promise<boolean> {
  try {
    return (await stat(file)).size > 0;
  } catch {
    return false;
  }
}

/** Waits `ms`, rejecting with the abort reason if the job is cancelled meanwhile. */
function hold(ms: number, signal: AbortSignal): Promise<void> {
  signal.throwIfAborted();
  if (ms <= 0) return Promise.resolve();
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      signal.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    const onAbort = (): void => {
      clearTimeout(timer);
      reject(signal.reason);
    };
    signal.addEventListener('abort', onAbort, { once: true });
  });
}
