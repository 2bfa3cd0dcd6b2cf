#!/bin/sh
# Makes the route store's own role and database (reelflow_routes), so that workers and bridges never
# connect as Temporal's superuser. Run once by the postgres image on a new data volume
# (/docker-entrypoint-initdb.d/); on a volume made before, run it by hand (docs/production.md).
# Idempotent: an existing role gets the password again, an existing database is left as it is.
#   REELFLOW_ROUTE_STORE_PASSWORD_FILE   file holding the role's password (a Docker secret)
#   POSTGRES_USER                        the superuser to run as (the image sets it)
#   PGHOST, PGPORT                       where PostgreSQL is (unset: the image's local socket)
set -eu
: "${REELFLOW_ROUTE_STORE_PASSWORD_FILE:?set REELFLOW_ROUTE_STORE_PASSWORD_FILE}"
ROLE="${REELFLOW_ROUTE_STORE_ROLE:-reelflow_routes}"
DATABASE="${REELFLOW_ROUTE_STORE_DATABASE:-reelflow_routes}"
password="$(cat "$REELFLOW_ROUTE_STORE_PASSWORD_FILE")"
[ -n "$password" ] || { echo "init-route-store: $REELFLOW_ROUTE_STORE_PASSWORD_FILE is empty" >&2; exit 1; }

# psql's variables quote the values (:'pw' as a literal, :"role" as an identifier), so nothing from the
# files is spliced into SQL text; the password never appears on a command line.
psql -v ON_ERROR_STOP=1 --no-psqlrc --username "${POSTGRES_USER:-postgres}" --dbname postgres \
  -v role="$ROLE" -v database="$DATABASE" -v pw="$password" <<'SQL'
SELECT format('CREATE ROLE %I LOGIN', :'role') WHERE NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = :'role')
\gexec
ALTER ROLE :"role" WITH LOGIN NOSUPERUSER NOCREATEDB NOCREATEROLE PASSWORD :'pw';
SELECT format('CREATE DATABASE %I OWNER %I', :'database', :'role')
  WHERE NOT EXISTS (SELECT 1 FROM pg_database WHERE datname = :'database')
\gexec
REVOKE ALL ON DATABASE :"database" FROM PUBLIC;
GRANT ALL ON DATABASE :"database" TO :"role";
SQL
echo "route store ready: role $ROLE, database $DATABASE"
