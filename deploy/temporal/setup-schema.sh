#!/bin/sh
# Creates (or upgrades) Temporal's two PostgreSQL schemas with temporal-sql-tool, the way the
# server's own docs do it (the auto-setup image is deprecated upstream). Run by `npm run cluster`
# (scripts/cluster/) and by the one-shot `temporal-schema` service of docker-compose.yml, so both
# set up the database the same way. A new database gets the schema; an existing one is left as it is
# unless TEMPORAL_SCHEMA_UPDATE=true (after a backup: docs/operations.md, "Temporal's schema"), so
# an `up` never changes Temporal's schema behind the operator's back.
#   SQL_TOOL     temporal-sql-tool binary (default: on PATH)
#   SCHEMA_DIR   .../schema/postgresql/v12 of the same server version
#   POSTGRES_SEEDS, DB_PORT, POSTGRES_USER, POSTGRES_PWD   where PostgreSQL is and who to be
#   POSTGRES_PWD_FILE   a file holding the password instead (a Docker secret)
#   TEMPORAL_SCHEMA_UPDATE   true: update an existing schema to SCHEMA_DIR's version (back up first)
set -eu
if [ -z "${POSTGRES_PWD:-}" ] && [ -n "${POSTGRES_PWD_FILE:-}" ]; then POSTGRES_PWD="$(cat "$POSTGRES_PWD_FILE")"; fi
SQL_TOOL="${SQL_TOOL:-temporal-sql-tool}"
SCHEMA_DIR="${SCHEMA_DIR:-/etc/temporal/schema/postgresql/v12}"
: "${POSTGRES_SEEDS:?set POSTGRES_SEEDS}" "${POSTGRES_USER:?set POSTGRES_USER}" "${POSTGRES_PWD:?set POSTGRES_PWD}"
# The tool reads the password from SQL_PASSWORD, which keeps it off the command line (ps).
export SQL_PASSWORD="$POSTGRES_PWD"

sql() {
  "$SQL_TOOL" --plugin postgres12 --endpoint "$POSTGRES_SEEDS" --port "${DB_PORT:-5432}" --user "$POSTGRES_USER" "$@"
}

setup() { # database, schema folder
  sql --database "$1" create-database 2>/dev/null || echo "database $1 exists"
  # setup-schema fails harmlessly on a database set up before.
  if sql --database "$1" setup-schema -v 0.0 2>/dev/null; then
    sql --database "$1" update-schema -d "$SCHEMA_DIR/$2/versioned"
  elif [ "${TEMPORAL_SCHEMA_UPDATE:-false}" = true ]; then
    echo "updating the schema of $1 (TEMPORAL_SCHEMA_UPDATE=true)"
    sql --database "$1" update-schema -d "$SCHEMA_DIR/$2/versioned"
  else
    echo "schema of $1 was set up before: left as it is. A new Temporal server version may need an update:" \
      "back up the database, then run this with TEMPORAL_SCHEMA_UPDATE=true (docs/operations.md)"
  fi
}
setup temporal temporal
setup temporal_visibility visibility
echo "schemas ready: temporal, temporal_visibility"
