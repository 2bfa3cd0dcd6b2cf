#!/usr/bin/env node
'use strict';
// Makes sure a MinIO server binary is available for the S3 media-store tests (built into .tools/minio
// with `go install` through the Go module proxy when neither MINIO_PATH nor PATH has one).
// Run by `.ci/run` and before `npm test`; prints where the binary came from.
const { ensureGoTool } = require('./go-tools');
const { MINIO } = require('./minio-tools');

ensureGoTool(MINIO, 'the S3 media-store tests need it');
