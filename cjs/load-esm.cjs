// The `require` door of conduit-mcp, an ES module package. Node 20.19+ and 22.12+ can require()
// an ES module graph without top-level await, so the module is handed over as is (the same
// instance `import` gets: no dual-package hazard). Older runtimes refuse with ERR_REQUIRE_ESM;
// that error is replaced by one that says what to do instead.
// https://nodejs.org/docs/latest-v20.x/api/modules.html#loading-ecmascript-modules-using-require
"use strict";

/** Errors meaning "this runtime cannot require() that ES module". */
const ESM_ONLY_CODES = new Set(["ERR_REQUIRE_ESM", "ERR_REQUIRE_ASYNC_MODULE"]);

/**
 * Requires `load()`'s ES module, or throws an Error that says the package is ESM only.
 *
 * @param {string} specifier what the caller required, for the message
 * @param {() => unknown} load requires the module (a literal require call, so bundlers see it)
 * @returns {unknown} the module namespace
 */
function loadEsm(specifier, load) {
  try {
    return load();
  } catch (error) {
    if (error === null || typeof error !== "object" || !ESM_ONLY_CODES.has(error.code)) throw error;
    const message =
      `${specifier} is ESM only and this Node.js (${process.version}) cannot require() it. ` +
      `Use \`import { createMcpServer } from "${specifier}"\` or \`await import("${specifier}")\`, ` +
      "or run Node.js 20.19+ / 22.12+, where require() of ES modules works.";
    const replacement = new Error(message, { cause: error });
    replacement.code = "ERR_CONDUIT_MCP_ESM_ONLY";
    throw replacement;
  }
}

module.exports = { loadEsm };
