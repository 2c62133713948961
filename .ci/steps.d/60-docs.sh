#!/usr/bin/env bash
# The documentation (README.md and docs/): every TypeScript block type-checks against the built
# package (scripts/check-doc-blocks.ts; needs dist/, which .ci/run builds before the steps), the
# VitePress site builds (it fails on a link to a page that does not exist), and the built site's
# links are checked offline: every page and asset by linkinator, every #fragment (and the
# README's links into the repository) by scripts/check-doc-anchors.ts. Links to other sites are not followed (CI has no internet).
set -euo pipefail
cd "$(dirname "$0")/../.."

step() { echo "-- $1 ($((SECONDS - started)) s)"; }
started=$SECONDS
node --import tsx scripts/check-doc-blocks.ts
step "code blocks type-checked"
npm run --silent docs:build
step "site built"
npx --no-install linkinator docs/.vitepress/dist --recurse --verbosity error \
  --skip '^https?://(?!localhost)'
node --import tsx scripts/check-doc-anchors.ts
step "links checked"
