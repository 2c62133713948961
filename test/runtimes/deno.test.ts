/** The door suite and the disconnect latency on deno (test/runtimes/runtime-suite.ts). */
import { runtimeSuite } from "./runtime-suite.js";

runtimeSuite("deno");
