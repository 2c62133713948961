/**
 * Test helper: the package as a user gets it. The repository's files that `files` in package.json
 * ships are copied to a temporary directory and built there (the worktree is never written to),
 * `npm pack`ed, and the tarball is installed into an empty project together with what a user of
 * the CLI and of `conduit-mcp/redis` installs beside it (tsx, ioredis, zod), at the versions this
 * repository tests with, `--prefer-offline` (only the npm registry, and only for what the cache
 * lacks). A second empty project, `bare`, has nothing installed. Not a test file itself.
 */
import { execFile } from "node:child_process";
import { cp, mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";

export const run = promisify(execFile);
export const ROOT = fileURLToPath(new URL("../../", import.meta.url));
export const TSC = join(ROOT, "node_modules/typescript/bin/tsc");

/** Everything `files` in package.json ships, except `dist` (built below). */
const SHIPPED_SOURCES = ["package.json", "README.md", "LICENSE", "cjs"];
/** Installed beside the package, as the README tells a user to. */
const BESIDE = ["tsx", "ioredis", "zod"];

/** The temporary directories of one packed and installed package. */
export interface InstalledProject {
  /** The project the tarball is installed in (`"type": "module"`). */
  readonly app: string;
  /** An empty project (no node_modules) beside it. */
  readonly bare: string;
  /** `app/node_modules/conduit-mcp`. */
  readonly installed: string;
  /** The installed executable's file (`bin` of package.json). */
  readonly bin: string;
  /** What `npm install` of the tarball alone printed. */
  readonly installOutput: string;
  /** Removes every directory. */
  remove(): Promise<void>;
}

async function versionOf(name: string): Promise<string> {
  const manifest = JSON.parse(
    await readFile(join(ROOT, "node_modules", name, "package.json"), "utf8"),
  ) as { version: string };
  return `${name}@${manifest.version}`;
}

/** Builds, packs and installs the package (about 30-60 s on two busy cores). */
export async function installPackedProject(): Promise<InstalledProject> {
  const work = await mkdtemp(join(tmpdir(), "conduit-mcp-pack-"));
  const remove = () => rm(work, { recursive: true, force: true });
  try {
    const staging = join(work, "package");
    await mkdir(staging);
    for (const entry of SHIPPED_SOURCES) {
      await cp(join(ROOT, entry), join(staging, entry), { recursive: true });
    }
    // The real build configuration, with only the output directory moved.
    await run(
      process.execPath,
      [TSC, "-p", join(ROOT, "tsconfig.build.json"), "--outDir", join(staging, "dist")],
      { cwd: ROOT, timeout: 90_000 },
    );
    const packed = await run(
      "npm",
      ["pack", "--ignore-scripts", "--json", "--pack-destination", work],
      { cwd: staging, timeout: 60_000 },
    );
    const [{ filename }] = JSON.parse(packed.stdout) as [{ filename: string }];
    const app = join(work, "app");
    const bare = join(work, "bare");
    for (const [dir, name] of [
      [app, "app"],
      [bare, "bare"],
    ] as const) {
      await mkdir(dir);
      await writeFile(
        join(dir, "package.json"),
        JSON.stringify({ name, version: "1.0.0", private: true, type: "module" }),
      );
    }
    const npmInstall = (specs: readonly string[]) =>
      run("npm", ["install", "--prefer-offline", "--no-audit", "--no-fund", ...specs], {
        cwd: app,
        timeout: 90_000,
      });
    // The package alone first, so that what npm prints is about it only (tsx's esbuild, for
    // one, has an install script that npm 11 warns about).
    const install = await npmInstall([join(work, filename)]);
    await npmInstall(await Promise.all(BESIDE.map(versionOf)));
    const installed = join(app, "node_modules/conduit-mcp");
    const manifest = JSON.parse(await readFile(join(installed, "package.json"), "utf8")) as {
      bin: Record<string, string>;
    };
    return {
      app,
      bare,
      installed,
      bin: join(installed, manifest.bin["conduit-mcp"] as string),
      installOutput: `${install.stdout}\n${install.stderr}`,
      remove,
    };
  } catch (error) {
    await remove();
    throw error;
  }
}
