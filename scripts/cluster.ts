/**
 * `npm run cluster` — a real Temporal cluster on PostgreSQL on this machine (see scripts/cluster/).
 *   npm run cluster              install what is missing, start (or finish starting) and print the addresses
 *   npm run cluster -- stop      stop what it started (state is kept; the next start resumes it)
 *   npm run cluster -- status    print the addresses and which processes run
 * REELFLOW_CLUSTER_DIR chooses the state folder (default .reelflow/cluster).
 */
import { postmasterPid } from './cluster/postgres';
import { defaultClusterDir, describeCluster, openCluster, startCluster, stopCluster } from './cluster/index';
import { isAlive, ROLES } from './cluster/roles';

async function main(command: string | undefined): Promise<number> {
  const dir = defaultClusterDir();
  switch (command ?? 'start') {
    case 'start': {
      const cluster = await startCluster({ dir, log: (line) => console.log(`cluster: ${line}`) });
      console.log(`\nTemporal cluster running (state in ${dir}):`);
      for (const line of describeCluster(cluster)) console.log(`  ${line}`);
      console.log(
        `\nWorkers and bridges: TEMPORAL_ADDRESS=${cluster.address} TEMPORAL_NAMESPACE=${cluster.record.namespace}` +
          ' (workers also REELFLOW_SET_CURRENT_VERSION=true: each makes its version current, drain-first; docs/safe-deploys.md)',
      );
      console.log('Stop with: npm run cluster -- stop');
      return 0;
    }
    case 'stop':
      if (!(await stopCluster(dir, (line) => console.log(`cluster: ${line}`)))) console.log(`no cluster in ${dir}`);
      return 0;
    case 'status': {
      const cluster = openCluster(dir);
      if (!cluster) {
        console.log(`no cluster in ${dir}`);
        return 1;
      }
      for (const line of describeCluster(cluster)) console.log(line);
      for (const role of ROLES) {
        const pid = cluster.record.pids[role];
        console.log(`${role.padEnd(9)} ${pid !== undefined && isAlive(pid) ? `running (pid ${pid})` : 'stopped'}`);
      }
      const pg = postmasterPid(cluster.postgres);
      console.log(`${'postgres'.padEnd(9)} ${pg !== null ? `running (pid ${pg})` : 'stopped'}`);
      return 0;
    }
    default:
      console.error(`unknown command "${command}": use start (default), stop or status`);
      return 2;
  }
}

main(process.argv[2]).then(
  (code) => process.exit(code),
  (error: unknown) => {
    console.error(`cluster: ${error instanceof Error ? error.message : String(error)}`);
    process.exit(1);
  },
);
