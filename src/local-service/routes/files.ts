import * as fs from 'node:fs';
import * as path from 'node:path';
import type { FastifyInstance } from 'fastify';
import type { ServiceContext } from '../context';
import { ServiceProblem } from '../http/errors';

const CONTENT_TYPES: Record<string, string> = {
  '.mp4': 'video/mp4',
  '.webm': 'video/webm',
  '.mov': 'video/quicktime',
  '.m4a': 'audio/mp4',
  '.wav': 'audio/wav',
  '.png': 'image/png',
  '.jpg': 'image/jpeg',
};

/**
 * Output files at `GET /files/<request_id>/<file_name>`. No key needed: like a signed URL, the
 * unguessable request id is the capability, so outputs can be fed to later requests.
 */
export function registerFileRoutes(app: FastifyInstance, context: () => ServiceContext): void {
  app.get<{ Params: { id: string; name: string } }>(
    '/files/:id/:name',
    { config: { access: 'public' } },
    async (request, reply) => {
      const ctx = context();
      const { id, name } = request.params;
      const job = ctx.store.state.jobs.get(id);
      // Only names the job's result lists are served: no path tricks, no half-written renders.
      const videos = (job?.result?.videos ?? []) as { file_name?: string; content_type?: string }[];
      const video = videos.find((v) => v.file_name === name);
      if (!job || !video || path.basename(name) !== name)
        throw new ServiceProblem('not_found', `no file ${id}/${name}`);
      const file = path.join(ctx.filesDir, id, name);
      let size: number;
      try {
        size = (await fs.promises.stat(file)).size;
      } catch {
        throw new ServiceProblem('not_found', `no file ${id}/${name}`);
      }
      return reply
        .type(video.content_type ?? CONTENT_TYPES[path.extname(name).toLowerCase()] ?? 'application/octet-stream')
        .header('content-length', String(size))
        .send(fs.createReadStream(file));
    },
  );
}
