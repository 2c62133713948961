#!/usr/bin/env bash
# The observability pack (docs/observability.md): promtool accepts the alert rules, and the
# dashboard is valid JSON. That every series they use is exposed and documented is checked by
# test/telemetry/scrape.test.ts (npm test), which also lints a live scrape with promtool.
set -euo pipefail
cd "$(dirname "$0")/../.."
echo "promtool check rules deploy/prometheus/alerts.yml"
promtool check rules deploy/prometheus/alerts.yml
echo "deploy/grafana/conduit-mcp.json is JSON"
node -e 'JSON.parse(require("node:fs").readFileSync("deploy/grafana/conduit-mcp.json", "utf8"))'
