import * as fs from 'node:fs';
import * as path from 'node:path';
import { BRIDGE_VARIABLES, SERVICE_VARIABLES, VARIABLES, WORKER_VARIABLES } from '../../src/config';
import { SECRET_FILE_VARIABLES } from '../../src/config/read';
import { SEARCH_ATTRIBUTE_KEYS } from '../../src/workflows/definitions';
import { DEPLOY_SCRIPTS, HISTORY_SHARDS } from '../../scripts/cluster/index';
import {
  CONFIG_TEMPLATE,
  DYNAMIC_CONFIG,
  ROLES,
  roleArgs,
  roleEnvironment,
  type ClusterPorts,
} from '../../scripts/cluster/roles';
import { TEMPORAL_SERVER_VERSION } from '../../scripts/cluster/tools';

/**
 * docker-compose.yml cannot run here (no container engine), so this checks what can be checked
 * statically: it parses, images are pinned, every variable set for reelflow's containers is one the
 * code reads, health checks, state volumes, two workers and two bridges behind one address,
 * Temporal on PostgreSQL with its UI, and the search attributes registered at start. And that its
 * Temporal stays in step with the cluster `npm run cluster` starts and `npm run test:cluster` tests
 * (scripts/cluster/): same server version, same config template and dynamic config, same process
 * split, schemas through the same temporal-sql-tool script.
 */

// js-yaml is a devDependency (only this test reads YAML).
// eslint-disable-next-line @typescript-eslint/no-require-imports
const yaml = require('js-yaml') as { load(text: string): unknown };

const root = path.join(__dirname, '../..');
const read = (file: string) => fs.readFileSync(path.join(root, file), 'utf8');

interface Service {
  image?: string;
  ports?: string[];
  secrets?: string[];
  build?: unknown;
  command?: string[];
  entrypoint?: string[];
  restart?: string;
  profiles?: string[];
  environment?: Record<string, string | number | boolean | null>;
  healthcheck?: { test?: string[] | string };
  volumes?: string[];
  depends_on?: Record<string, { condition: string }>;
}
interface Compose {
  services: Record<string, Service>;
  volumes?: Record<string, unknown>;
  secrets?: Record<string, { file?: string; environment?: string }>;
}

const compose = yaml.load(read('docker-compose.yml')) as Compose;
const services = Object.entries(compose.services);
const isReelflow = (s: Service) => (s.image ?? '').startsWith('reelflow:');
const runs = (s: Service, entry: string) => (s.command ?? []).some((part) => part.endsWith(entry));
const workers = services.filter(([, s]) => isReelflow(s) && runs(s, 'dist/workers/worker.js'));
const bridges = services.filter(([, s]) => isReelflow(s) && runs(s, 'dist/workers/bridge.js'));

/** The variables the process a container runs reads (src/config/processes.ts), by its entry point. */
/** Variables read below reelflow's code (glibc's allocator), set on purpose (docs/production.md#worker-memory). */
const PLATFORM_VARIABLES = ['MALLOC_ARENA_MAX'];

function variablesOf(service: Service): readonly string[] {
  if (runs(service, 'dist/workers/worker.js')) return WORKER_VARIABLES.variables;
  if (runs(service, 'dist/workers/bridge.js')) return BRIDGE_VARIABLES.variables;
  if (runs(service, 'dist/workers/local-service.js')) return SERVICE_VARIABLES.variables;
  return Object.keys(VARIABLES);
}

describe('docker-compose.yml', () => {
  it('parses to services with Temporal, its UI, PostgreSQL, workers, bridges and a load balancer', () => {
    expect(Object.keys(compose.services)).toEqual(
      expect.arrayContaining([
        'postgresql',
        'temporal-schema',
        'temporal-frontend',
        'temporal-ui',
        'temporal-init',
        'webhooks',
        'service',
      ]),
    );
  });

  it('pins every image to a version (no latest, no bare name)', () => {
    for (const [name, service] of services) {
      expect({ name, image: service.image }).toEqual({
        name,
        image: expect.stringMatching(/^[a-z0-9./_-]+:[^:]*\d[^:]*$/),
      });
      expect({ name, latest: /:latest$/.test(service.image ?? '') }).toEqual({ name, latest: false });
    }
  });

  it('sets only environment variables that the process of each reelflow container reads (src/config)', () => {
    const unknown: string[] = [];
    const reelflowServices = services.filter(([, s]) => isReelflow(s));
    expect(reelflowServices.length).toBeGreaterThanOrEqual(5);
    for (const [name, service] of reelflowServices) {
      const known = variablesOf(service);
      // A secret the process reads may be given as <NAME>_FILE instead (src/config/read.ts).
      const secretFiles = known.filter((v) => SECRET_FILE_VARIABLES.includes(v as never)).map((v) => `${v}_FILE`);
      for (const variable of Object.keys(service.environment ?? {}))
        if (!known.includes(variable) && !secretFiles.includes(variable) && !PLATFORM_VARIABLES.includes(variable))
          unknown.push(`${name}: ${variable}`);
    }
    expect(unknown).toEqual([]);
  });

  it('has a health check on every long-running service (the one-shot init container is exempt)', () => {
    for (const [name, service] of services) {
      if (service.restart === 'no') continue;
      expect({ name, test: service.healthcheck?.test }).toEqual({ name, test: expect.anything() });
    }
    // Only the schema, init and bucket containers are one-shot.
    expect(
      services
        .filter(([, s]) => s.restart === 'no')
        .map(([n]) => n)
        .sort(),
    ).toEqual(['media-bucket', 'temporal-init', 'temporal-schema']);
  });

  it('keeps state on named volumes: PostgreSQL data and the local service data', () => {
    const declared = Object.keys(compose.volumes ?? {});
    expect(compose.services.postgresql?.volumes).toContain('postgres-data:/var/lib/postgresql/data');
    expect(compose.services.service?.volumes).toContain(
      `service-data:${compose.services.service?.environment?.REELFLOW_SERVICE_DATA_DIR}`,
    );
    expect(compose.services.minio?.volumes).toContain('media-data:/data');
    expect(declared).toEqual(expect.arrayContaining(['postgres-data', 'service-data', 'media-data']));
    // Bind mounts point at files that exist in the repository.
    for (const [name, service] of services) {
      for (const volume of service.volumes ?? []) {
        const source = volume.split(':')[0] ?? '';
        if (source.startsWith('./'))
          expect({ name, source, exists: fs.existsSync(path.join(root, source)) }).toEqual({
            name,
            source,
            exists: true,
          });
      }
    }
    expect(fs.existsSync(path.join(root, 'deploy/Dockerfile'))).toBe(true);
  });

  it('runs two workers on the pre-built workflow bundle and tuned from configuration', () => {
    expect(workers.map(([n]) => n)).toHaveLength(2);
    for (const [, worker] of workers) {
      expect(worker.environment?.REELFLOW_WORKFLOW_BUNDLE).toBe('/app/dist/workflow-bundle.js');
      expect(worker.environment?.REELFLOW_MAX_CONCURRENT_ACTIVITIES).toMatch(/^\d+$/);
      expect(worker.environment?.TEMPORAL_ADDRESS).toBe('temporal-frontend:7233');
      expect(worker.depends_on?.['temporal-init']?.condition).toBe('service_completed_successfully');
    }
    // `npm run build` writes the bundle where the workers load it from.
    expect(JSON.parse(read('package.json')).scripts.build).toContain('scripts/build-workflow-bundle.ts');
  });

  it('puts two bridges behind one address: nginx upstream lists every bridge on its port', () => {
    expect(bridges.map(([n]) => n)).toHaveLength(2);
    const balancer = compose.services.webhooks as Service;
    expect(balancer.image).toMatch(/^nginx:/);
    const confMount = (balancer.volumes ?? []).find((v) => v.includes('/webhooks-tls.conf:'));
    const conf = read((confMount ?? '').split(':')[0] ?? '');
    for (const [name, bridge] of bridges) {
      expect(bridge.environment?.REELFLOW_BRIDGE_HOST).toBe('0.0.0.0');
      expect(conf).toContain(`server ${name}:${bridge.environment?.REELFLOW_BRIDGE_PORT}`);
      expect(balancer.depends_on?.[name]?.condition).toBe('service_healthy');
    }
    expect(conf).toMatch(/location \/webhooks\s*\{[^}]*proxy_pass http:\/\/reelflow_bridges;/);
  });

  it('gives every worker one shared S3 media store: MinIO, its bucket made before any worker starts', () => {
    const bucketJob = compose.services['media-bucket'] as Service;
    expect(bucketJob.entrypoint).toEqual(['sh', '/setup-media.sh']);
    expect(bucketJob.volumes).toContain('./deploy/minio/setup-media.sh:/setup-media.sh:ro');
    const setup = read('deploy/minio/setup-media.sh');
    expect(setup).toContain('mc mb --ignore-existing "root/$MEDIA_BUCKET"');
    for (const [name, worker] of workers) {
      const store = String(worker.environment?.REELFLOW_MEDIA_STORE);
      expect({ name, store }).toEqual({ name, store: expect.stringMatching(/^s3:\/\//) });
      // The bucket the one-shot container makes is the one the store names.
      const bucket = /^s3:\/\/([^/]+)\//.exec(store)?.[1] ?? '';
      expect(bucketJob.environment?.MEDIA_BUCKET).toBe(bucket);
      expect(worker.environment?.REELFLOW_MEDIA_S3_ENDPOINT).toMatch(/http:\/\/minio:9000\}$/);
      expect(worker.depends_on?.['media-bucket']?.condition).toBe('service_completed_successfully');
      // No per-container filesystem store left.
      expect(worker.volumes ?? []).toEqual([]);
    }
    expect(bucketJob.depends_on?.minio?.condition).toBe('service_healthy');
  });

  it("keeps MinIO's root credentials apart from the workers' keys, which reach only their bucket", () => {
    const minio = compose.services.minio as Service;
    const rootSecrets = [minio.environment?.MINIO_ROOT_USER_FILE, minio.environment?.MINIO_ROOT_PASSWORD_FILE];
    expect(rootSecrets).toEqual(['/run/secrets/minio_root_user', '/run/secrets/minio_root_password']);
    for (const [name, worker] of workers) {
      const keys = [
        worker.environment?.REELFLOW_MEDIA_S3_ACCESS_KEY_ID_FILE,
        worker.environment?.REELFLOW_MEDIA_S3_SECRET_ACCESS_KEY_FILE,
      ];
      expect({ name, keys }).toEqual({
        name,
        keys: ['/run/secrets/media_s3_access_key_id', '/run/secrets/media_s3_secret_access_key'],
      });
      expect(worker.secrets).not.toContain('minio_root_password');
    }
    const setup = read('deploy/minio/setup-media.sh');
    expect(setup).toMatch(/mc admin user add root "\$user"/);
    expect(setup).toContain('"Resource": ["arn:aws:s3:::$MEDIA_BUCKET/*"]');
    expect(setup).not.toMatch(/readwrite/);
  });

  it('has no default for any secret: each is a Docker secret file, read through <NAME>_FILE', () => {
    const text = read('docker-compose.yml');
    // No variable that holds a secret is interpolated with a default (or at all).
    for (const variable of [
      ...SECRET_FILE_VARIABLES,
      'TEMPORAL_DB_PASSWORD',
      'MINIO_ROOT_PASSWORD',
      'GF_SECURITY_ADMIN_PASSWORD',
    ])
      expect({ variable, interpolated: text.includes(`\${${variable}`) }).toEqual({ variable, interpolated: false });
    expect(text).not.toMatch(/PASSWORD:\s*\S/);
    expect(text).not.toMatch(/postgres:\/\/[^@\s]*:[^@\s]*@/);
    const declared = compose.secrets ?? {};
    expect(Object.keys(declared).length).toBeGreaterThanOrEqual(10);
    for (const [secret, source] of Object.entries(declared)) {
      expect({ secret, file: source.file }).toEqual({
        secret,
        file: `\${REELFLOW_SECRETS_DIR:-./deploy/secrets}/${secret}`,
      });
    }
    // Every file a container is told to read is a secret that container mounts.
    for (const [name, service] of services) {
      for (const [variable, value] of Object.entries(service.environment ?? {})) {
        if (!variable.endsWith('_FILE') && !variable.endsWith('__FILE')) continue;
        const secret = /^\/run\/secrets\/([a-z0-9_]+)$/.exec(String(value))?.[1];
        expect({ name, variable, mounted: secret !== undefined && (service.secrets ?? []).includes(secret) }).toEqual({
          name,
          variable,
          mounted: true,
        });
      }
    }
    // Each reelflow container reads its secrets from files only.
    for (const [name, service] of services.filter(([, s]) => isReelflow(s))) {
      const direct = Object.keys(service.environment ?? {}).filter((v) => SECRET_FILE_VARIABLES.includes(v as never));
      expect({ name, direct }).toEqual({ name, direct: [] });
    }
    // The secret files stay out of git and out of the image's build context.
    expect(read('deploy/secrets/.gitignore').split('\n')).toEqual(expect.arrayContaining(['*', '!README.md']));
    expect(read('.dockerignore').split('\n')).toContain('deploy/secrets');
    for (const secret of Object.keys(declared)) expect(read('deploy/secrets/README.md')).toContain(`\`${secret}\``);
  });

  it('refuses to start workers and bridges without REELFLOW_SERVICE_URL (no default pointing at a profile)', () => {
    for (const [name, service] of [...workers, ...bridges]) {
      expect({ name, url: service.environment?.REELFLOW_SERVICE_URL }).toEqual({
        name,
        url: expect.stringMatching(/^\$\{REELFLOW_SERVICE_URL:\?[^}]+\}$/),
      });
    }
  });

  it("gives the route store its own database and role, made on first start, not Temporal's superuser", () => {
    const postgres = compose.services.postgresql as Service;
    expect(postgres.volumes).toContain(
      './deploy/postgres/init-route-store.sh:/docker-entrypoint-initdb.d/10-init-route-store.sh:ro',
    );
    expect(postgres.environment?.REELFLOW_ROUTE_STORE_PASSWORD_FILE).toBe('/run/secrets/route_store_password');
    for (const [name, service] of [...workers, ...bridges])
      expect({ name, store: service.environment?.REELFLOW_ROUTE_STORE_FILE }).toEqual({
        name,
        store: '/run/secrets/route_store_url',
      });
    expect(read('deploy/secrets/README.md')).toContain('postgres://reelflow_routes:');
  });

  it('publishes Temporal, its UI, MinIO, Prometheus and Grafana on loopback only; the webhook address on every interface', () => {
    const published = services.flatMap(([name, s]) => (s.ports ?? []).map((port) => ({ name, port })));
    expect(published.length).toBeGreaterThanOrEqual(6);
    for (const { name, port } of published) {
      if (name === 'webhooks') continue;
      expect({ name, port }).toEqual({
        name,
        port: expect.stringMatching(/^\$\{REELFLOW_PUBLISH_ADDRESS:-127\.0\.0\.1\}:\d+:\d+$/),
      });
    }
  });

  it("tags the image with package.json's version and keeps the build context small (.dockerignore)", () => {
    const version = (JSON.parse(read('package.json')) as { version: string }).version;
    const tags = new Set(services.filter(([, s]) => isReelflow(s)).map(([, s]) => s.image));
    expect([...tags]).toEqual([`reelflow:${version}`]);
    const ignored = read('.dockerignore').split('\n');
    for (const heavy of ['node_modules', '.tools', '.reelflow', '.git', 'dist']) expect(ignored).toContain(heavy);
  });

  it('ends TLS in front of the bridges: nginx serves /webhooks over https on 8443 only (webhooks-tls.conf), with the mounted certificate', () => {
    const balancer = compose.services.webhooks as Service;
    expect(balancer.ports).toEqual(['8443:8443']);
    const mounts = Object.fromEntries(
      (balancer.volumes ?? []).map((v) => [v.split(':').slice(-2)[0], v.split(':')[0]]),
    );
    // The TLS config is the one test/integration/bridge-tls-front.test.ts runs with Debian's nginx.
    expect(mounts['/etc/nginx/conf.d/webhooks-tls.conf']).toBe('./deploy/nginx/webhooks-tls.conf');
    expect(read('test/integration/bridge-tls-front.test.ts')).toContain('webhooks-tls.conf');
    expect(balancer.volumes).toContain('${REELFLOW_TLS_CERT_DIR:-./deploy/nginx/tls}:/etc/nginx/tls:ro');
    expect(fs.existsSync(path.join(root, 'deploy/nginx/tls/README.md'))).toBe(true);
    // Keys and certificates stay out of git.
    expect(read('deploy/nginx/tls/.gitignore')).toMatch(/^\*\.pem$/m);
    const tls = read('deploy/nginx/webhooks-tls.conf');
    expect(tls).toMatch(/listen 8443 ssl;/);
    expect(tls).toContain('ssl_certificate /etc/nginx/tls/fullchain.pem;');
    expect(tls).toContain('ssl_certificate_key /etc/nginx/tls/privkey.pem;');
    expect(tls).toMatch(/location \/webhooks\s*\{[^}]*proxy_pass http:\/\/reelflow_bridges;/);
    // The plain listener is the container's health check only, never the webhook path.
    const plain = read(mounts['/etc/nginx/conf.d/default.conf'] ?? '');
    expect(plain).toMatch(/listen 8080;/);
    expect(plain).not.toMatch(/location \/webhooks/);
    expect(plain).not.toContain('proxy_pass');
    expect([balancer.healthcheck?.test ?? []].flat().join(' ')).toContain('http://127.0.0.1:8080/nginx-health');
  });

  it('checks each worker by its readiness endpoint (Temporal connection and pollers), not the metrics port', () => {
    for (const [name, worker] of workers) {
      const port = worker.environment?.REELFLOW_WORKER_HEALTH_PORT;
      expect({ name, port }).toEqual({ name, port: expect.stringMatching(/^\d+$/) });
      expect(port).not.toBe(worker.environment?.REELFLOW_METRICS_PORT);
      expect(worker.environment?.REELFLOW_WORKER_HEALTH_HOST).toBe('0.0.0.0');
      expect([worker.healthcheck?.test ?? []].flat().join(' ')).toContain(`http://127.0.0.1:${port}/readyz`);
    }
  });

  it('builds the reelflow image on Node 24 and runs it as user node with writable state paths', () => {
    const dockerfile = read('deploy/Dockerfile');
    const bases = [...dockerfile.matchAll(/^FROM (\S+)/gm)].map((m) => m[1]);
    expect(bases.length).toBeGreaterThan(0);
    for (const base of bases) expect(base).toMatch(/^node:24\.\d+\.\d+-bookworm-slim$/);
    expect(dockerfile).toMatch(/^USER node$/m);
    // The local service's data volume starts owned by node (a new named volume copies the image's directory).
    const dataDir = String(compose.services.service?.environment?.REELFLOW_SERVICE_DATA_DIR);
    const chowned = /^RUN mkdir -p (.+) && chown node:node (.+)$/m.exec(dockerfile);
    expect(chowned?.[2]?.split(' ')).toEqual(expect.arrayContaining([dataDir, '/app/.reelflow']));
  });

  it('runs Temporal on PostgreSQL with the UI', () => {
    expect(compose.services.postgresql?.image).toMatch(/^postgres:/);
    expect(compose.services['temporal-ui']?.image).toMatch(/^temporalio\/ui:/);
    expect(compose.services['temporal-ui']?.environment?.TEMPORAL_ADDRESS).toBe('temporal-frontend:7233');
    expect(compose.services['temporal-ui']?.depends_on?.['temporal-frontend']?.condition).toBe('service_healthy');
  });
  it('registers exactly the search attributes of src/workflows/definitions.ts at start', () => {
    const init = compose.services['temporal-init'] as Service;
    const scriptMount = (init.volumes ?? []).find((v) => v.endsWith('.sh:ro') || v.includes('.sh:'));
    const script = read((scriptMount ?? '').split(':')[0] ?? '');
    expect(script).toContain('temporal operator namespace create');
    expect(script).toContain('temporal operator search-attribute create');
    const typeNames: Record<string, string> = {
      KEYWORD: 'Keyword',
      INT: 'Int',
      KEYWORD_LIST: 'KeywordList',
      TEXT: 'Text',
      BOOL: 'Bool',
      DOUBLE: 'Double',
      DATETIME: 'Datetime',
    };
    const registered = [...script.matchAll(/^register (\S+) (\S+)$/gm)].map((m) => `${m[1]}:${m[2]}`).sort();
    const expected = SEARCH_ATTRIBUTE_KEYS.map((key) => `${key.name}:${typeNames[key.type]}`).sort();
    expect(registered).toEqual(expected);
  });
});

describe('docker-compose.yml in step with the tested cluster (scripts/cluster/)', () => {
  const roleServices = services.filter(([, s]) => (s.image ?? '').startsWith('temporalio/server:'));
  const roleOf = (s: Service) => (s.command ?? [])[(s.command ?? []).indexOf('--service') + 1];
  const mountOf = (s: Service, source: string) =>
    (s.volumes ?? []).map((v) => v.split(':')).find(([from]) => from === source)?.[1];

  it(`runs the Temporal server version the cluster builds (v${TEMPORAL_SERVER_VERSION}), admin tools of the same version, no auto-setup image`, () => {
    expect(roleServices.length).toBeGreaterThan(0);
    for (const [name, service] of services.filter(
      ([, s]) => (s.image ?? '').startsWith('temporalio/') && !(s.image ?? '').startsWith('temporalio/ui:'),
    )) {
      expect({ name, image: service.image }).toEqual({
        name,
        image: expect.stringMatching(
          new RegExp(`^temporalio/(server|admin-tools):${TEMPORAL_SERVER_VERSION.replace(/\./g, '\\.')}$`),
        ),
      });
    }
    expect(read('docker-compose.yml')).not.toMatch(/auto-setup/);
  });

  it('splits the server into the same roles, one container each, with the same command line', () => {
    expect(roleServices.map(([, s]) => roleOf(s)).sort()).toEqual([...ROLES].sort());
    for (const [name, service] of roleServices) {
      const role = roleOf(service) as (typeof ROLES)[number];
      const templateDir = mountOf(service, `./${path.relative(root, path.dirname(CONFIG_TEMPLATE))}`);
      expect({ name, templateDir }).toEqual({ name, templateDir: expect.any(String) });
      const inContainer = `${templateDir}/${path.basename(CONFIG_TEMPLATE)}`;
      expect({ name, command: service.command }).toEqual({
        name,
        command: roleArgs(role).map((arg) => (arg === CONFIG_TEMPLATE ? inContainer : arg)),
      });
      expect(service.depends_on?.['temporal-schema']?.condition).toBe('service_completed_successfully');
    }
  });

  it('gives every role the same dynamic config file as the cluster, and history shards a setting with a production default', () => {
    for (const [name, service] of roleServices) {
      const dynamicDir = mountOf(service, `./${path.relative(root, path.dirname(DYNAMIC_CONFIG))}`);
      expect({ name, file: service.environment?.DYNAMIC_CONFIG_FILE_PATH }).toEqual({
        name,
        file: `${dynamicDir}/${path.basename(DYNAMIC_CONFIG)}`,
      });
      // The cluster harness runs with few shards on two cores; a production cluster starts with the
      // Helm chart's default, and the count can never change after the first start.
      expect({ name, shards: service.environment?.NUM_HISTORY_SHARDS }).toEqual({
        name,
        shards: '${TEMPORAL_HISTORY_SHARDS:-512}',
      });
    }
    expect(HISTORY_SHARDS).toBeGreaterThanOrEqual(4);
    expect(read('docs/production.md')).toContain('TEMPORAL_HISTORY_SHARDS');
  });

  it('sets only variables the config template reads, the same ones the cluster script sets', () => {
    const template = fs.readFileSync(CONFIG_TEMPLATE, 'utf8');
    expect(template.split('\n')[0]).toBe('# enable-template');
    const read = new Set([...template.matchAll(/env "([A-Z0-9_]+)"/g)].map((m) => m[1]));
    const ports = Object.fromEntries(
      [
        'postgres',
        'frontend',
        'frontendHttp',
        'frontendMembership',
        'history',
        'historyMembership',
        'matching',
        'matchingMembership',
        'worker',
        'workerMembership',
      ].map((k, i) => [k, 7000 + i]),
    ) as unknown as ClusterPorts;
    const clusterVariables = Object.keys(
      roleEnvironment({
        server: 'server',
        ports,
        historyShards: HISTORY_SHARDS,
        database: { host: 'h', user: 'u', password: 'p' },
        logDir: '/tmp',
      }),
    );
    for (const variable of clusterVariables)
      expect({ variable, read: read.has(variable) }).toEqual({ variable, read: true });
    for (const [name, service] of roleServices) {
      for (const variable of Object.keys(service.environment ?? {}))
        expect({ name, variable, read: read.has(variable) }).toEqual({ name, variable, read: true });
      // What differs between the two is only where things are: database host, ports, bind address.
      const shared = Object.keys(service.environment ?? {}).filter((v) => clusterVariables.includes(v));
      expect(shared).toEqual(
        expect.arrayContaining([
          'NUM_HISTORY_SHARDS',
          'POSTGRES_SEEDS',
          'DB_PORT',
          'POSTGRES_USER',
          'BIND_ON_IP',
          'DYNAMIC_CONFIG_FILE_PATH',
        ]),
      );
      // The password comes from the secret file, read by the entrypoint, never from the compose file.
      expect(service.secrets).toContain('temporal_db_password');
      expect((service.entrypoint ?? []).join(' ')).toContain(
        'POSTGRES_PWD="$$(cat /run/secrets/temporal_db_password)"',
      );
    }
  });

  it('sets up the schemas with temporal-sql-tool through the script the cluster runs, before any role starts', () => {
    const schema = compose.services['temporal-schema'] as Service;
    expect(schema.entrypoint).toEqual(['sh', `/${DEPLOY_SCRIPTS.schema}`]);
    expect(schema.volumes).toContain(`./deploy/temporal/${DEPLOY_SCRIPTS.schema}:/${DEPLOY_SCRIPTS.schema}:ro`);
    expect(schema.environment?.SQL_TOOL).toBe('temporal-sql-tool');
    const script = read(`deploy/temporal/${DEPLOY_SCRIPTS.schema}`);
    expect(script).toMatch(/setup-schema -v 0\.0/);
    expect(script).toMatch(/update-schema -d "\$SCHEMA_DIR\/\$2\/versioned"/);
    const init = compose.services['temporal-init'] as Service;
    expect(init.entrypoint).toEqual(['sh', `/${DEPLOY_SCRIPTS.init}`]);
    for (const role of ROLES) expect(init.depends_on?.[`temporal-${role}`]?.condition).toBe('service_healthy');
  });
});
