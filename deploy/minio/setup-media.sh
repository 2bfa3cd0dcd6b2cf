#!/bin/sh
# Creates the media bucket and the workers' own MinIO user, allowed that bucket only; MinIO's root
# credentials stay with administration. Run by the one-shot `media-bucket` service of
# docker-compose.yml before any worker starts. Idempotent: re-running sets the same user and policy.
#   MEDIA_BUCKET                    the bucket REELFLOW_MEDIA_STORE names
#   /run/secrets/minio_root_user, /run/secrets/minio_root_password                  MinIO's root
#   /run/secrets/media_s3_access_key_id, /run/secrets/media_s3_secret_access_key    the workers' user
set -eu
: "${MEDIA_BUCKET:?set MEDIA_BUCKET}"
SECRETS="${SECRETS_DIR:-/run/secrets}"
MINIO_URL="${MINIO_URL:-http://minio:9000}"
mc alias set root "$MINIO_URL" "$(cat "$SECRETS/minio_root_user")" "$(cat "$SECRETS/minio_root_password")" >/dev/null
mc mb --ignore-existing "root/$MEDIA_BUCKET"

policy=$(mktemp)
cat >"$policy" <<JSON
{
  "Version": "2012-10-17",
  "Statement": [
    { "Effect": "Allow", "Action": ["s3:GetBucketLocation", "s3:ListBucket"], "Resource": ["arn:aws:s3:::$MEDIA_BUCKET"] },
    { "Effect": "Allow", "Action": ["s3:GetObject", "s3:PutObject", "s3:DeleteObject"], "Resource": ["arn:aws:s3:::$MEDIA_BUCKET/*"] }
  ]
}
JSON
user="$(cat "$SECRETS/media_s3_access_key_id")"
mc admin user add root "$user" "$(cat "$SECRETS/media_s3_secret_access_key")" >/dev/null
mc admin policy create root reelflow-media "$policy"
mc admin policy attach root reelflow-media --user "$user" 2>/dev/null || echo "policy reelflow-media was attached before"
rm -f "$policy"
echo "media store ready: bucket $MEDIA_BUCKET, user $user"
