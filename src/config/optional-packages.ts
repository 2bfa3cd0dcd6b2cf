import { MissingPackageError } from './errors';

/**
 * reelflow's optional peer dependencies (package.json `peerDependenciesMeta`) and the feature each one is
 * for. A team that uses only the step functions, the plugin and `verifyWebhook` installs none of them;
 * the code that needs one loads it on first use through `requireOptional`, which names the package when
 * it is missing.
 */
export const OPTIONAL_PACKAGES = {
  '@ffmpeg-installer/ffmpeg': 'rendering media with ffmpeg (or set FFMPEG_PATH)',
  '@ffprobe-installer/ffprobe': 'probing media with ffprobe (or set FFPROBE_PATH)',
  '@aws-sdk/client-s3': 'an S3 media store (REELFLOW_MEDIA_STORE=s3://…)',
  '@aws-sdk/s3-request-presigner': 'an S3 media store (REELFLOW_MEDIA_STORE=s3://…)',
  pg: 'a PostgreSQL route store (REELFLOW_ROUTE_STORE=postgres://…)',
  fastify: 'the webhook bridge and the local service (reelflow bridge, reelflow dev)',
  '@opentelemetry/sdk-trace-base': 'tracing (OTEL_EXPORTER_OTLP_ENDPOINT)',
  '@opentelemetry/resources': 'tracing (OTEL_EXPORTER_OTLP_ENDPOINT)',
  '@opentelemetry/exporter-trace-otlp-http': 'tracing (OTEL_EXPORTER_OTLP_ENDPOINT)',
  '@opentelemetry/semantic-conventions': 'tracing (OTEL_EXPORTER_OTLP_ENDPOINT)',
  '@temporalio/interceptors-opentelemetry': 'tracing (OTEL_EXPORTER_OTLP_ENDPOINT)',
} as const;

/** The name of one of reelflow's optional packages. */
export type OptionalPackage = keyof typeof OPTIONAL_PACKAGES;

function isMissing(error: unknown, name: string): boolean {
  const { code, message } = (error ?? {}) as { code?: unknown; message?: unknown };
  // Only the package itself being absent: a package that is installed but fails to load (a missing
  // dependency of its own, a platform without a binary) keeps its own error.
  return code === 'MODULE_NOT_FOUND' && typeof message === 'string' && message.includes(`'${name}'`);
}

/**
 * Loads an optional package, or throws a `MissingPackageError` (code `package_missing`) naming it and
 * what needed it. Called where the feature starts, never at import, so the rest of reelflow loads without it.
 */
export function requireOptional<T>(name: OptionalPackage): T {
  try {
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    return require(name) as T;
  } catch (error) {
    if (isMissing(error, name)) throw new MissingPackageError(name, OPTIONAL_PACKAGES[name], { cause: error });
    throw error;
  }
}
