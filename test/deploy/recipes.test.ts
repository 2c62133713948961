/**
 * The deploy recipes in deploy/ checked against each other and against the CLI they start: every
 * command line parses with the CLI's own parser (a renamed flag breaks this test, not a rollout),
 * the probes point at /ready and /health, the drain fits the grace periods, selectors match, the
 * image runs as non-root with a HEALTHCHECK, and HAProxy accepts its configuration
 * (`haproxy -c`). Docker and a cluster are not needed: test/deploy/topology.test.ts runs the
 * topology itself.
 */
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, describe, it } from "node:test";
import { parseAllDocuments, parse as parseYaml } from "yaml";

import { parseCli, type ServeCommand } from "../../src/cli/args.js";

const read = (path: string): string =>
  readFileSync(new URL(`../../deploy/${path}`, import.meta.url), "utf8");

/** A key file standing in for the secret a recipe mounts (the parser reads it). */
const keyDir = mkdtempSync(join(tmpdir(), "conduit-deploy-"));
const KEY_FILE = join(keyDir, "state-keys");
writeFileSync(KEY_FILE, `${randomBytes(48).toString("base64")}\n`);
after(() => rmSync(keyDir, { recursive: true, force: true }));

/**
 * The CLI's parse of a container command (`node_modules/.bin/conduit-mcp serve …`), and the path
 * its `--secret-file` names (read from a stand-in file, since the secret is not mounted here).
 * A node on Redis listening beyond loopback must share its secrets, or `serve` refuses to start
 * (docs/cli.md, `--secret-file`): every recipe's command is held to that.
 */
function serveCommand(argv: readonly string[]): ServeCommand & { keyFile?: string } {
  assert.equal(argv[0], "node_modules/.bin/conduit-mcp");
  const at = argv.indexOf("--secret-file");
  const keyFile = at < 0 ? undefined : argv[at + 1];
  const args = argv.slice(1).map((arg, i) => (i + 1 === at + 1 && at >= 0 ? KEY_FILE : arg));
  const parsed = parseCli(args, { REDIS_URL: "redis://redis:6379" });
  assert.ok(parsed.ok, parsed.ok ? "" : parsed.message);
  assert.equal(parsed.command.kind, "serve");
  const command = parsed.command as ServeCommand;
  assert.ok(command.redis !== undefined, "the recipes run on Redis (REDIS_URL)");
  assert.ok(
    command.secrets !== undefined,
    "a Redis node on a non-loopback host needs --secret-file, or serve refuses to start",
  );
  return { ...command, ...(keyFile === undefined ? {} : { keyFile }) };
}

/** The library default of --stream-cancel-timeout (docs/server-options.md). */
const STREAM_CANCEL_TIMEOUT_MS = 5_000;

describe("deploy/Dockerfile", () => {
  const text = read("Dockerfile");
  const lines = text.split("\n").filter((line) => !line.startsWith("#"));

  it("runs as a non-root user, checks /health, and its CMD parses", () => {
    const users = lines.filter((line) => line.startsWith("USER "));
    assert.deepEqual(users, ["USER node"]);
    assert.ok(lines.some((line) => line.startsWith("HEALTHCHECK ")));
    assert.match(text, /127\.0\.0\.1:3000\/health/);
    assert.ok(lines.includes("STOPSIGNAL SIGTERM"));
    const cmd = lines.find((line) => line.startsWith("CMD "));
    assert.ok(cmd);
    const command = serveCommand(JSON.parse(cmd.slice(4)) as string[]);
    assert.equal(command.port, 3000);
    assert.equal(command.host, "0.0.0.0");
    assert.equal(command.module, "./server.js");
    assert.ok(command.closeGraceMs !== undefined);
    assert.equal(command.keyFile, "/run/secrets/conduit-state-keys");
    // The final stage installs no dev dependencies and copies no source tree.
    assert.match(text, /npm ci --omit=dev/);
  });
});

describe("deploy/compose.yaml", () => {
  const compose = parseYaml(read("compose.yaml"), { merge: true }) as {
    services: Record<string, Record<string, unknown>>;
    secrets: Record<string, { file: string }>;
  };

  it("has three nodes on Redis behind HAProxy, each with a drain shorter than its stop grace", () => {
    assert.deepEqual(Object.keys(compose.services).sort(), [
      "haproxy",
      "node1",
      "node2",
      "node3",
      "redis",
    ]);
    for (const name of ["node1", "node2", "node3"]) {
      const node = compose.services[name] as {
        command: string[];
        environment: Record<string, string>;
        stop_grace_period: string;
        secrets: string[];
        depends_on: Record<string, { condition: string }>;
      };
      assert.equal(node.environment.REDIS_URL, "redis://redis:6379");
      const command = serveCommand(node.command);
      assert.equal(command.redis, "redis://redis:6379");
      assert.equal(command.port, 3000);
      const graceMs = Number(/^(\d+)s$/.exec(node.stop_grace_period)?.[1]) * 1_000;
      // HAProxy checks /ready every second and takes a node out at the first failure: the
      // delay must outlast that, so no request races the closing listener (docs/deploy.md).
      const delayMs = command.closeDelayMs ?? 0;
      assert.ok(delayMs >= 2_000, `--drain-delay-ms ${delayMs}`);
      assert.ok(delayMs + (command.closeGraceMs ?? 5_000) + STREAM_CANCEL_TIMEOUT_MS < graceMs);
      assert.deepEqual(node.secrets, ["conduit-state-keys"]);
      assert.equal(command.keyFile, "/run/secrets/conduit-state-keys");
      assert.ok(compose.secrets["conduit-state-keys"]);
      assert.equal(node.depends_on.redis?.condition, "service_healthy");
    }
    const haproxy = compose.services.haproxy as { volumes: string[] };
    assert.ok(haproxy.volumes.some((v) => v.startsWith("./haproxy/haproxy.cfg:")));
  });

  it("HAProxy checks /ready and names the three nodes on the port they listen on", () => {
    const cfg = read("haproxy/haproxy.cfg");
    assert.match(cfg, /option httpchk GET \/ready/);
    assert.match(cfg, /balance roundrobin/);
    const servers = [...cfg.matchAll(/^\s*server (\S+) (\S+)$/gm)].map((m) => `${m[1]} ${m[2]}`);
    assert.deepEqual(servers, ["node1 node1:3000", "node2 node2:3000", "node3 node3:3000"]);
  });
});

describe("deploy/haproxy/haproxy.cfg", () => {
  const probe = spawnSync("haproxy", ["-v"], { encoding: "utf8" });
  const missing = probe.error ? "haproxy not installed (Debian package haproxy)" : undefined;
  if (missing !== undefined && process.env.CI === "true") throw new Error(`${missing} (CI=true)`);

  it("passes haproxy -c", { skip: missing ?? false }, () => {
    const check = spawnSync(
      "haproxy",
      ["-c", "-f", new URL("../../deploy/haproxy/haproxy.cfg", import.meta.url).pathname],
      { encoding: "utf8" },
    );
    assert.equal(check.status, 0, `${check.stdout}\n${check.stderr}`);
    assert.match(check.stdout, /Configuration file is valid/);
  });
});

describe("deploy/kubernetes", () => {
  type Doc = Record<string, unknown> & {
    apiVersion: string;
    kind: string;
    metadata: { name: string };
  };
  const docs = ["deployment.yaml", "service.yaml", "pdb.yaml", "secret.yaml"].flatMap((file) =>
    parseAllDocuments(read(`kubernetes/${file}`)).map((doc) => {
      assert.deepEqual(doc.errors, [], file);
      return doc.toJS() as Doc;
    }),
  );
  const byKind = new Map(docs.map((doc) => [doc.kind, doc]));

  it("has a Deployment, a Service, a PodDisruptionBudget and a Secret of known API versions", () => {
    assert.deepEqual(
      docs.map((doc) => `${doc.apiVersion} ${doc.kind}`),
      ["apps/v1 Deployment", "v1 Service", "policy/v1 PodDisruptionBudget", "v1 Secret"],
    );
  });

  it("the Deployment probes /ready and /health, drains within its grace, runs as non-root", () => {
    const deployment = byKind.get("Deployment") as unknown as {
      spec: {
        replicas: number;
        selector: { matchLabels: Record<string, string> };
        template: {
          metadata: { labels: Record<string, string> };
          spec: {
            terminationGracePeriodSeconds: number;
            securityContext: { runAsNonRoot: boolean; runAsUser: number };
            containers: Array<{
              command: string[];
              ports: Array<{ name: string; containerPort: number }>;
              readinessProbe: { httpGet: { path: string; port: string } };
              livenessProbe: { httpGet: { path: string; port: string } };
              lifecycle: { preStop: { exec: { command: string[] } } };
              env: Array<{
                name: string;
                valueFrom: { secretKeyRef: { name: string; key: string } };
              }>;
              volumeMounts: Array<{ name: string; mountPath: string }>;
            }>;
            volumes: Array<{
              name: string;
              secret?: { secretName: string; items: Array<{ key: string; path: string }> };
            }>;
          };
        };
      };
    };
    const spec = deployment.spec;
    assert.equal(spec.replicas, 3);
    assert.deepEqual(spec.selector.matchLabels, spec.template.metadata.labels);
    const pod = spec.template.spec;
    assert.equal(pod.securityContext.runAsNonRoot, true);
    assert.ok(pod.securityContext.runAsUser > 0);
    const [container] = pod.containers;
    assert.ok(container);
    const command = serveCommand(container.command);
    assert.equal(container.ports[0]?.containerPort, command.port);
    assert.deepEqual(container.readinessProbe.httpGet, {
      path: "/ready",
      port: container.ports[0]?.name,
    });
    assert.deepEqual(container.livenessProbe.httpGet, {
      path: "/health",
      port: container.ports[0]?.name,
    });
    const preStop = container.lifecycle.preStop.exec.command;
    assert.equal(preStop[0], "sleep");
    const preStopMs = Number(preStop[1]) * 1_000;
    const drainMs = command.closeGraceMs ?? 5_000;
    assert.ok(
      preStopMs + drainMs + STREAM_CANCEL_TIMEOUT_MS < pod.terminationGracePeriodSeconds * 1_000,
      "preStop + drain + stream cancel timeout must fit terminationGracePeriodSeconds",
    );
    // The key file the command names is the Secret's, mounted where the command reads it.
    const keys = pod.volumes.find((volume) => volume.secret !== undefined);
    const mount = container.volumeMounts.find((m) => m.name === keys?.name);
    const item = keys?.secret?.items[0];
    assert.equal(command.secrets?.length, 1);
    assert.equal(command.keyFile, `${mount?.mountPath}/${item?.path}`);
    const secret = byKind.get("Secret") as unknown as {
      metadata: { name: string };
      stringData: Record<string, string>;
    };
    assert.equal(keys?.secret?.secretName, secret.metadata.name);
    assert.ok(item && item.key in secret.stringData);
    const redisUrl = container.env.find((e) => e.name === "REDIS_URL")?.valueFrom.secretKeyRef;
    assert.deepEqual(redisUrl, { name: secret.metadata.name, key: "redis-url" });
    assert.ok("redis-url" in secret.stringData);
  });

  it("the Service and the PodDisruptionBudget select the Deployment's pods", () => {
    const labels = (
      byKind.get("Deployment") as unknown as {
        spec: { template: { metadata: { labels: Record<string, string> } } };
      }
    ).spec.template.metadata.labels;
    const service = byKind.get("Service") as unknown as {
      spec: { selector: Record<string, string>; ports: Array<{ targetPort: string }> };
    };
    assert.deepEqual(service.spec.selector, labels);
    assert.equal(service.spec.ports[0]?.targetPort, "http");
    const pdb = byKind.get("PodDisruptionBudget") as unknown as {
      spec: { minAvailable: number; selector: { matchLabels: Record<string, string> } };
    };
    assert.deepEqual(pdb.spec.selector.matchLabels, labels);
    assert.ok(pdb.spec.minAvailable < 3);
  });

  it("the shipped Secret holds no key, so a pod started on it refuses to run", () => {
    const secret = byKind.get("Secret") as unknown as { stringData: Record<string, string> };
    const keyLines = (secret.stringData["state-keys"] ?? "")
      .split("\n")
      .map((line) => line.trim())
      .filter((line) => line.length > 0 && !line.startsWith("#"));
    assert.deepEqual(keyLines, []);
  });
});
