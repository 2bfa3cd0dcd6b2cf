'use strict';
/** The MinIO server the S3 media-store tests run against (scripts/go-tools.js finds or builds it). */
const { resolveGoTool, toolsDir } = require('./go-tools');

/** Pinned pseudo-version of github.com/minio/minio (what @latest resolved to when this was written). */
const MINIO_MODULE = 'github.com/minio/minio@v0.0.0-20260212201848-7aac2a2c5b7c';
const MINIO = { name: 'minio', binary: 'minio', variable: 'MINIO_PATH', module: MINIO_MODULE };

/**
 * @param {{ install?: boolean }} [options] build with `go install` when nothing else is found
 * @returns {{ path: string, source: string } | null}
 */
const resolveMinio = (options = {}) => resolveGoTool(MINIO, options);

module.exports = { resolveMinio, MINIO, TOOLS_DIR: toolsDir(MINIO), MINIO_MODULE };
