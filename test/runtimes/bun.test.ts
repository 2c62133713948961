/** The door suite and the disconnect latency on bun (test/runtimes/runtime-suite.ts). */
import { runtimeSuite } from "./runtime-suite.js";

runtimeSuite("bun");
