// `require("conduit-mcp")`: see load-esm.cjs.
"use strict";

const { loadEsm } = require("./load-esm.cjs");

module.exports = loadEsm("conduit-mcp", () => require("../dist/index.js"));
