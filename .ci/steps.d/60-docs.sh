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
# The type check and the site build are independent: run them side by side.
blocks_log=$(mktemp)
node --import tsx scripts/check-doc-blocks.ts >"$blocks_log" 2>&1 &
blocks=$!
npm run --silent docs:build
step "site built"
status=0
wait "$blocks" || status=$?
cat "$blocks_log"
rm -f "$blocks_log"
[ "$status" -eq 0 ] || exit "$status"
step "code blocks type-checked"
npx --no-install linkinator docs/.vitepress/dist --recurse --verbosity error \
  --skip '^https?://(?!localhost)'
node --import tsx scripts/check-doc-anchors.ts
step "links checked"
