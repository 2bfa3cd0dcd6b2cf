import { Client, Connection } from '@temporalio/client';
import { NativeConnection, Worker, type WorkerOptions } from '@temporalio/worker';
import { createActivities } from '../activities';
import { createSubscribeActivity } from '../bridge/subscribe-activity';
import { createServiceClient } from '../client/service-client';
import type { CallKind, ServiceClient } from '../client/types';
import { connectionOptions, loadTemporalSettings } from '../config/temporal';

/** Options of a reelflow worker built in-process (tests, the local stack) or by the entry point. */
export interface ReelflowWorkerOptions {
  /** Worker-side connection to Temporal. */
  connection: NativeConnection;
  /** Client used by the subscribe activity (signal-with-start of the rendezvous). */
  client: Client;
  taskQueue: string;
  namespace?: string;
  service: ServiceClient;
  /** A prebuilt bundle (tests bundle once per file); otherwise the workflows are bundled from source. */
  workflowBundle?: WorkerOptions['workflowBundle'];
  onCall?: (kind: CallKind) => void;
  /** Extra worker options (concurrency limits, shutdown grace, ...). */
  worker?: Partial<WorkerOptions>;
}

/** Creates the worker that runs every reelflow workflow and activity on `taskQueue`. */
export async function createReelflowWorker(options: ReelflowWorkerOptions): Promise<Worker> {
  const activities = createActivities({
    client: options.service,
    subscribe: createSubscribeActivity(options.client, options.taskQueue),
    ...(options.onCall ? { onCall: options.onCall } : {}),
  });
  return Worker.create({
    connection: options.connection,
    namespace: options.namespace ?? options.client.options.namespace,
    taskQueue: options.taskQueue,
    ...(options.workflowBundle ? { workflowBundle: options.workflowBundle } : { workflowsPath: require.resolve('../workflows') }),
    activities,
    shutdownGraceTime: '10 seconds',
    ...options.worker,
  });
}

/** Reads a required environment variable; the error names it. */
function required(name: string): string {
  const value = process.env[name];
  if (!value) throw new Error(`${name}: must be set`);
  return value;
}

/** Entry point: settings from the environment, graceful shutdown on SIGINT/SIGTERM. */
export async function main(): Promise<void> {
  const settings = loadTemporalSettings();
  const connect = connectionOptions(settings);
  const connection = await NativeConnection.connect(connect);
  const clientConnection = await Connection.connect(connect);
  const client = new Client({ connection: clientConnection, namespace: settings.namespace });
  const service = createServiceClient({ baseUrl: required('REELFLOW_SERVICE_URL'), apiKey: required('REELFLOW_API_KEY') });
  const worker = await createReelflowWorker({ connection, client, taskQueue: settings.taskQueue, namespace: settings.namespace, service });
  // Worker.create installs SIGINT/SIGTERM handlers that call shutdown(); run() resolves once in-flight
  // tasks are done (or the grace time passes), then the connections close.
  console.log(`reelflow worker: task queue ${settings.taskQueue} on ${settings.address} (namespace ${settings.namespace})`);
  try {
    await worker.run();
  } finally {
    await service.close();
    await clientConnection.close();
    await connection.close();
  }
}

if (require.main === module) {
  main().catch((error: unknown) => {
    console.error(error instanceof Error ? error.message : error);
    process.exit(1);
  });
}
