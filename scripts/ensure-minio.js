#!/usr/bin/env node
'use strict';
// Makes sure a MinIO server binary is available for the S3 media-store tests (built into .tools/minio
// with `go install` through the Go module proxy when neither MINIO_PATH nor PATH has one).
// Run by `.ci/run` and before `npm test`; prints where the binary came from.
const { resolveMinio, MINIO_MODULE } = require('./minio-tools');

const started = Date.now();
const found = resolveMinio({ install: true });
if (found) {
  console.log(`minio: ${found.path} (${found.source}, ${((Date.now() - started) / 1000).toFixed(1)} s)`);
} else {
  console.error(
    `minio: not found and \`go install ${MINIO_MODULE}\` failed; the S3 media-store tests need it (set MINIO_PATH)`,
  );
  process.exitCode = 1;
}
