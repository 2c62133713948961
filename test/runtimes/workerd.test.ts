/** The door suite and the disconnect latency on workerd (test/runtimes/runtime-suite.ts). */
import { runtimeSuite } from "./runtime-suite.js";

runtimeSuite("workerd");
