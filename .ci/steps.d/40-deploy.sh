#!/usr/bin/env bash
# The deploy recipes (docs/deploy.md): HAProxy accepts deploy/haproxy/haproxy.cfg. Its node names
# resolve only inside Docker, so "could not resolve address" warnings are expected here; a syntax
# or semantic error fails. The manifests, the compose file and the Dockerfile are checked by
# test/deploy/recipes.test.ts, the topology itself by test/deploy/topology.test.ts (npm test).
set -euo pipefail
cd "$(dirname "$0")/../.."
echo "haproxy -c -f deploy/haproxy/haproxy.cfg"
haproxy -c -f deploy/haproxy/haproxy.cfg
