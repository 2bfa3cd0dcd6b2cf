import { ApplicationFailure, Context } from '@temporalio/activity';
import { type OutputVideo, FAILURE_TYPES } from '../contract';
import { archiveOutput, type ArchivedOutput } from '../media/archive';
import { ArchiveError, MediaResolutionError } from '../media/errors';
import { createMediaResolver, type MediaResolver } from '../media/resolve-input';
import { isMediaRef } from '../media/reference';
import type { MediaStore } from '../media/store';

/**
 * The media side of the activities: references resolved at the call (never in history) and the
 * output archive. Kept apart from the service-call activities so each stays one concern.
 */

/** What the media activities need: the store and how the service is reached. */
export interface MediaDeps {
  store: MediaStore;
  urlLifetimeSeconds: number;
  /** The configured service's origin: its own output URLs may be private or plain http (local use). */
  serviceOrigin?: string;
}

/** Input of `archiveOutputs`: one completed step's outputs. */
export interface ArchiveRequest {
  pipeline: string;
  step: string;
  videos: OutputVideo[];
}

export interface MediaActivities {
  /**
   * Copies a completed step's outputs into the media store (streamed, checked against the reported
   * type and the declared length, hashed) and returns their references; idempotent (content-addressed).
   */
  archiveOutputs(request: ArchiveRequest): Promise<ArchivedOutput[]>;
}

/** True when a value holds a media reference anywhere (resolved by the worker at the call). */
export function hasMedia(value: unknown): boolean {
  if (isMediaRef(value)) return true;
  if (Array.isArray(value)) return value.some(hasMedia);
  if (typeof value === 'object' && value !== null) return Object.values(value).some(hasMedia);
  return false;
}

/**
 * Returns `resolve(input)`: `input` with its media references turned into service URLs, signed URLs
 * or data URIs; a reference that cannot be resolved fails the activity for good (type MediaUnavailable,
 * naming the field); a store that cannot be reached is retried.
 */
export function createInputResolver(
  deps: MediaDeps | undefined,
): (input: Record<string, unknown>) => Promise<Record<string, unknown>> {
  const resolver: MediaResolver | undefined = deps ? createMediaResolver(deps) : undefined;
  return async (input) => {
    if (!hasMedia(input)) return input;
    if (!resolver)
      throw ApplicationFailure.create({
        type: FAILURE_TYPES.mediaUnavailable,
        nonRetryable: true,
        message:
          'the input holds media references but this worker has no media store configured (REELFLOW_MEDIA_STORE)',
      });
    try {
      const { input: resolved, resolved: how } = await resolver.resolve(input);
      try {
        Context.current().log.info('media resolved', { media: how });
      } catch {
        // outside an activity: nothing to log through
      }
      return resolved;
    } catch (error) {
      if (error instanceof MediaResolutionError) {
        throw ApplicationFailure.create({
          type: FAILURE_TYPES.mediaUnavailable,
          nonRetryable: error.permanent,
          message: error.message,
          details: [{ field: error.field }],
        });
      }
      throw error;
    }
  };
}

export function createMediaActivities(deps: MediaDeps | undefined): MediaActivities {
  return {
    async archiveOutputs({ pipeline, step, videos }) {
      if (!deps)
        throw ApplicationFailure.create({
          type: FAILURE_TYPES.archiveFailed,
          nonRetryable: true,
          message: 'this worker has no media store configured (REELFLOW_MEDIA_STORE)',
        });
      const archived: ArchivedOutput[] = [];
      // A copy streams a whole video: beat while it runs, well inside the workflow's heartbeat timeout.
      let timer: NodeJS.Timeout | undefined;
      try {
        const context = Context.current();
        context.heartbeat();
        timer = setInterval(() => context.heartbeat(), 5_000);
      } catch {
        // outside an activity: nothing to heartbeat
      }
      try {
        for (const video of videos) archived.push(await archiveOne(video));
      } finally {
        if (timer) clearInterval(timer);
      }
      return archived;

      async function archiveOne(video: OutputVideo): Promise<ArchivedOutput> {
        try {
          return await archiveOutput(video, {
            store: (deps as MediaDeps).store,
            pipeline,
            ...(deps?.serviceOrigin ? { serviceOrigin: deps.serviceOrigin } : {}),
          });
        } catch (error) {
          if (error instanceof ArchiveError) {
            throw ApplicationFailure.create({
              type: FAILURE_TYPES.archiveFailed,
              nonRetryable: !error.retryable,
              message: `step ${step}: ${error.message}`,
            });
          }
          throw error;
        }
      }
    },
  };
}
