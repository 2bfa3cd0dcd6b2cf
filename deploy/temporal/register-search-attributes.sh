#!/bin/sh
# Creates reelflow's namespace and registers the custom search attributes reelflow sets
# (SEARCH_ATTRIBUTES in src/workflows/definitions.ts; test/unit/compose-file.test.ts checks the two
# lists match). Run by the one-shot `temporal-init` service of docker-compose.yml and by
# `npm run cluster` (scripts/cluster/). Idempotent: what already exists is left as it is.
set -eu
ADDRESS="${TEMPORAL_ADDRESS:-temporal:7233}"
NAMESPACE="${TEMPORAL_NAMESPACE:-default}"

until temporal operator cluster health --address "$ADDRESS" >/dev/null 2>&1; do
  echo "waiting for Temporal at $ADDRESS"
  sleep 2
done

if temporal operator namespace describe --address "$ADDRESS" --namespace "$NAMESPACE" >/dev/null 2>&1; then
  echo "namespace $NAMESPACE already exists"
else
  temporal operator namespace create --address "$ADDRESS" --namespace "$NAMESPACE" --retention "${NAMESPACE_RETENTION:-72h}"
fi
# A new namespace reaches every frontend's cache within seconds; wait until it answers.
until temporal operator search-attribute list --address "$ADDRESS" --namespace "$NAMESPACE" >/dev/null 2>&1; do
  echo "waiting for namespace $NAMESPACE"
  sleep 1
done

register() {
  if temporal operator search-attribute list --address "$ADDRESS" --namespace "$NAMESPACE" | grep -qw "$1"; then
    echo "search attribute $1 already registered"
  else
    temporal operator search-attribute create --address "$ADDRESS" --namespace "$NAMESPACE" --name "$1" --type "$2"
  fi
}

register ReelflowStatus Keyword
register ReelflowCurrentStep Keyword
register ReelflowCreditsSpent Int
register ReelflowRequestIds KeywordList
register ReelflowPipeline Keyword
register ReelflowModels KeywordList
register ReelflowOverBudget Bool
register ReelflowBatch Keyword
