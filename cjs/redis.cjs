// `require("conduit-mcp/redis")`: see load-esm.cjs.
"use strict";

const { loadEsm } = require("./load-esm.cjs");

module.exports = loadEsm("conduit-mcp/redis", () => require("../dist/redis/index.js"));
