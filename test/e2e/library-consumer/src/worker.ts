import express from 'express';
import { NativeConnection, Worker } from '@temporalio/worker';
import { reelflowPlugin, type ReelflowPluginOptions } from 'reelflow/worker';
import { verifyWebhook } from 'reelflow/webhooks';

/**
 * A team's worker process: its own workflows (workflow-bundle.js) on its own task queue with reelflow's
 * activities through reelflowPlugin(), and its own Express receiver of the service's signed webhooks.
 * The plugin's options come from the first argument (JSON) when given, else from the environment.
 */

function need(name: string): string {
  const value = process.env[name];
  if (!value) throw new Error(`${name} is not set`);
  return value;
}

function say(line: Record<string, unknown>): void {
  console.log(JSON.stringify(line));
}

async function main(): Promise<void> {
  const options = process.argv[2] ? (JSON.parse(process.argv[2]) as ReelflowPluginOptions) : undefined;

  const app = express();
  app.post('/webhooks', express.raw({ type: () => true }), (req, res) => {
    const verdict = verifyWebhook({
      headers: req.headers,
      rawBody: req.body as Buffer,
      secrets: need('WEBHOOK_SECRET'),
    });
    if (!verdict.ok) {
      say({ refused: verdict.reason });
      res.status(401).end();
      return;
    }
    say({ verified: verdict.event.request_id, eventType: verdict.event.event_type });
    res.status(202).end();
  });
  const server = app.listen(Number(need('RECEIVER_PORT')), '127.0.0.1');

  const connection = await NativeConnection.connect({ address: need('TEMPORAL_ADDRESS') });
  try {
    const worker = await Worker.create({
      connection,
      taskQueue: need('TASK_QUEUE'),
      workflowBundle: { codePath: require.resolve('../workflow-bundle.js') },
      plugins: [reelflowPlugin(options)],
    });
    process.once('SIGTERM', () => worker.shutdown());
    say({ ready: true });
    await worker.run();
  } finally {
    server.close();
    await connection.close();
  }
}

main().catch((error: unknown) => {
  console.error(error instanceof Error ? error.message : String(error));
  process.exit(1);
});
