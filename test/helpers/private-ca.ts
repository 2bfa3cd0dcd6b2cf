import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';

/** A certificate and its key, PEM files. */
export interface CertFiles {
  cert: string;
  key: string;
}

/** A private CA made with openssl at test time, and the certificates it signs. */
export interface PrivateCa extends CertFiles {
  /** Signs a certificate for `name` (DNS SAN) with the given extended key usages. */
  issue(name: string, usages: ReadonlyArray<'serverAuth' | 'clientAuth'>): CertFiles;
}

const openssl = (args: string[], cwd: string) => execFileSync('openssl', args, { cwd, stdio: 'pipe' });

/** P-256 keys: quick to make, and both rustls (the SDK's core) and Go (the server) take them. */
const NEW_KEY = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes'];

/** Makes a CA called `name` in `dir` (files `<name>-ca.pem`, `<name>-ca.key`), valid for one day. */
export function makePrivateCa(dir: string, name: string): PrivateCa {
  const ca = { cert: path.join(dir, `${name}-ca.pem`), key: path.join(dir, `${name}-ca.key`) };
  openssl(
    [
      'req',
      '-x509',
      ...NEW_KEY,
      '-keyout',
      ca.key,
      '-out',
      ca.cert,
      '-days',
      '1',
      '-subj',
      `/CN=${name} test CA`,
      '-addext',
      'basicConstraints=critical,CA:TRUE',
      '-addext',
      'keyUsage=critical,keyCertSign,cRLSign',
    ],
    dir,
  );
  let serial = 0;
  return {
    ...ca,
    issue(subject, usages) {
      serial += 1;
      const base = path.join(dir, `${name}-${subject.replace(/[^a-z0-9.-]/gi, '_')}`);
      const files = { cert: `${base}.pem`, key: `${base}.key` };
      const csr = `${base}.csr`;
      const extensions = `${base}.ext`;
      fs.writeFileSync(
        extensions,
        [
          'basicConstraints=critical,CA:FALSE',
          'keyUsage=critical,digitalSignature,keyEncipherment',
          `extendedKeyUsage=${usages.join(',')}`,
          `subjectAltName=DNS:${subject}`,
        ].join('\n'),
      );
      openssl(['req', '-new', ...NEW_KEY, '-keyout', files.key, '-out', csr, '-subj', `/CN=${subject}`], dir);
      openssl(
        [
          'x509',
          '-req',
          '-in',
          csr,
          '-CA',
          ca.cert,
          '-CAkey',
          ca.key,
          '-set_serial',
          String(serial),
          '-days',
          '1',
          '-out',
          files.cert,
          '-extfile',
          extensions,
        ],
        dir,
      );
      return files;
    },
  };
}
