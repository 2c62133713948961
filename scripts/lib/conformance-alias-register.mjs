// Loaded with `--import` *after* ../shared/tools/conformance-on-node20/register.mjs when the
// conformance suite runs on Node 20 (see scripts/conformance.ts).
//
// Why: that shim swaps in an `fs` with `globSync` only for modules whose URL contains
// `/@modelcontextprotocol/conformance/`, but this repo installs the suite under npm aliases
// (`node_modules/conformance-stable/`, `node_modules/conformance-alpha/`). Hooks registered later
// run first, so this one presents the aliased parent URL under the package's real name for `fs`
// imports only, and the shared shim then does its usual job. Everything else passes through.
import { register } from "node:module";

register("./conformance-alias-hooks.mjs", import.meta.url);
