#!/usr/bin/env bash
# The package as a user installs it: `npm pack`, the tarball installed into an empty project on
# this Node.js (CI runs Node.js 20, the oldest the package supports), then its CLI (a .ts and a
# .js module, over HTTP and stdio), both entries (import, require, types) and the README's
# examples used there by plain `node`. See test/package/installed.test.ts. About a minute.
set -euo pipefail
cd "$(dirname "$0")/../.."
echo "packaging, on Node.js $(node --version)"
npm run test:package
