#!/usr/bin/env bash
# Other runtimes (docs/runtimes.md): the door suite through server.fetch on Bun, Deno and
# Cloudflare's workerd, with the disconnect → ctx.signal figure of each; then the door, protocol,
# cancellation and packaging suites on Node.js 22 and 24 beside the Node.js 20 that runs the rest
# of CI. Every runtime comes from an npm package that ships its binary, pinned in
# .ci/runtimes/package-lock.json and installed there (not as devDependencies: several hundred MB
# that only this step needs).
set -euo pipefail
cd "$(dirname "$0")/../.."

step() { echo "-- $1 ($((SECONDS - started)) s)"; }
started=$SECONDS
npm ci --prefix .ci/runtimes --no-audit --no-fund --loglevel=error
step "runtimes installed"
.ci/runtimes/node_modules/.bin/bun --version
.ci/runtimes/node_modules/.bin/deno --version | head -1
.ci/runtimes/node_modules/.bin/workerd --version

# Needs dist/ (the Worker is bundled from the built package): .ci/run builds before the steps.
# Three files at once: their time is mostly waiting on the other runtime.
CONDUIT_RUNTIME_TESTS=1 node --import tsx --test --test-concurrency=3 \
  test/runtimes/bun.test.ts test/runtimes/deno.test.ts test/runtimes/workerd.test.ts
step "Bun, Deno, workerd done"

mapfile -t suites < <(
  find test/doors test/protocol test/cancellation -name '*.test.ts' | sort
  echo test/package-entry.test.ts
  find test/runtimes -name 'edge-imports.test.ts' -o -name 'package-version.test.ts' -o -name 'route-handler.test.ts'
)
for version in 22 24; do
  node_bin=".ci/runtimes/node_modules/node-${version}/bin/node"
  echo "== Node.js $("$node_bin" --version): ${#suites[@]} test files"
  # The child processes the suites start (the stdio door's server) run on this Node too.
  PATH="$(dirname "$node_bin"):$PATH" "$node_bin" --import tsx --test --test-concurrency=2 \
    "${suites[@]}"
  step "Node.js ${version} done"
done
