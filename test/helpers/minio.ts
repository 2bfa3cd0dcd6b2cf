import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CreateBucketCommand } from '@aws-sdk/client-s3';
import { request } from 'undici';
import { createS3Store, type MediaStore } from '../../src/media/store';
import { freePort } from '../../src/stack/stack-state';
// eslint-disable-next-line @typescript-eslint/no-require-imports
const { resolveMinio } = require('../../scripts/minio-tools') as {
  resolveMinio(options?: { install?: boolean }): { path: string; source: string } | null;
};

/**
 * A real MinIO server for the S3 media-store tests: the binary from scripts/minio-tools.js
 * (MINIO_PATH, PATH, .tools/minio built with `go install`), a fresh data directory, free loopback
 * ports, and one bucket. Nothing of S3 is mocked.
 */
export interface TestMinio {
  endpoint: string;
  accessKeyId: string;
  secretAccessKey: string;
  bucket: string;
  /** Everything MinIO printed (stdout and stderr). */
  output(): string;
  /** An S3 store on the bucket under `prefix`. */
  store(prefix?: string): MediaStore & { client: import('@aws-sdk/client-s3').S3Client };
  /** REELFLOW_MEDIA_* variables that point a reelflow process at the bucket. */
  env(prefix?: string): Record<string, string>;
  stop(): Promise<void>;
}

export async function startMinio(bucket = 'reelflow-test'): Promise<TestMinio> {
  const found = resolveMinio({ install: true });
  if (!found)
    throw new Error('MinIO is not available: run `node scripts/ensure-minio.js` (go install) or set MINIO_PATH');
  const dataDir = mkdtempSync(join(tmpdir(), 'reelflow-minio-'));
  const [port, consolePort] = [await freePort(), await freePort()];
  const accessKeyId = 'reelflow-test-access';
  const secretAccessKey = 'reelflow-test-secret-0123456789';
  const child: ChildProcess = spawn(
    found.path,
    ['server', dataDir, '--address', `127.0.0.1:${port}`, '--console-address', `127.0.0.1:${consolePort}`, '--quiet'],
    {
      env: {
        ...process.env,
        MINIO_ROOT_USER: accessKeyId,
        MINIO_ROOT_PASSWORD: secretAccessKey,
        MINIO_BROWSER: 'off',
        MINIO_UPDATE: 'off',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  let output = '';
  child.stdout?.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr?.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const endpoint = `http://127.0.0.1:${port}`;
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) {
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGTERM');
      await exited;
    }
    rmSync(dataDir, { recursive: true, force: true });
  };
  const deadline = Date.now() + 60_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`MinIO exited with ${child.exitCode}:\n${output}`);
    try {
      const response = await request(`${endpoint}/minio/health/live`);
      await response.body.dump();
      if (response.statusCode === 200) break;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) {
      await stop();
      throw new Error(`MinIO did not become healthy within 60 s:\n${output}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  const settings = (prefix: string) => ({
    bucket,
    prefix,
    endpoint,
    region: 'us-east-1',
    forcePathStyle: true,
    credentials: { accessKeyId, secretAccessKey },
  });
  const admin = createS3Store(settings(''));
  await admin.client.send(new CreateBucketCommand({ Bucket: bucket }));
  admin.client.destroy();
  return {
    endpoint,
    accessKeyId,
    secretAccessKey,
    bucket,
    output: () => output,
    store: (prefix = '') => createS3Store(settings(prefix)),
    env: (prefix = '') => ({
      REELFLOW_MEDIA_STORE: `s3://${bucket}/${prefix}`,
      REELFLOW_MEDIA_S3_ENDPOINT: endpoint,
      REELFLOW_MEDIA_S3_ACCESS_KEY_ID: accessKeyId,
      REELFLOW_MEDIA_S3_SECRET_ACCESS_KEY: secretAccessKey,
    }),
    stop,
  };
}
