/**
 * The Skills extension, `io.modelcontextprotocol/skills` (SEP-2640; specification:
 * https://github.com/modelcontextprotocol/ext-skills/blob/main/specification/stable/skills.mdx,
 * against base revision 2026-07-28). A skill is a directory of files, minimally a `SKILL.md`
 * whose YAML frontmatter carries `name` and `description` (Agent Skills specification,
 * https://agentskills.io/specification). Every file is an ordinary resource under
 * `skill://<skill-path>/<file-path>` ("Resource Mapping"), read with `resources/read`; the
 * extension adds `skills/list` and `skills/get`, whose `Skill` entries carry the frontmatter and a
 * complete manifest of the skill's files with their SHA-256 digests and sizes ("Skill Entries").
 * `resources/directory/read` is optional and not served: the extension is declared with `{}`
 * (`directoryRead` false, "Capability Negotiation").
 *
 * The frontmatter is given as an object and `SKILL.md` is written from it, so the two are
 * identical in content by construction ("Frontmatter": "MUST be identical in content").
 */
import { createHash } from "node:crypto";

import { InvalidOptionError, InvalidParamsError } from "../../errors.js";
import type { Extension, JsonObject } from "../calls/index.js";
import { defineExtension } from "../calls/index.js";
import { defineResource, type Resource } from "../resources/index.js";
import { isPlainObject } from "../wire/index.js";

/** The extension's identifier ("Extension Identifier"). */
export const SKILLS_EXTENSION = "io.modelcontextprotocol/skills";
/** Per-skill limits every host accepts ("Limits"): servers should not serve beyond them. */
export const MAX_SKILL_RESOURCES = 512;
export const MAX_SKILL_BYTES = 16 * 1024 * 1024;

/** One supporting file of a skill: text (UTF-8) or bytes, and its MIME type. */
export type SkillFile =
  | string
  | Uint8Array
  | {
      readonly text?: string | undefined;
      readonly bytes?: Uint8Array | undefined;
      /** Default `text/markdown` for `.md`, `text/plain` for other text, else `application/octet-stream`. */
      readonly mimeType?: string | undefined;
    };

/** What {@link defineSkill} takes. */
export interface SkillDefinition {
  /**
   * The `SKILL.md` frontmatter: `name` (1–64 lowercase letters, digits and single hyphens, not
   * at either end) and `description` (1–1 024 characters) are required; any other JSON field
   * passes through to the entries unchanged.
   */
  readonly frontmatter: { readonly name: string; readonly description: string } & JsonObject;
  /** The markdown of `SKILL.md` after its frontmatter. */
  readonly body: string;
  /**
   * Where the skill sits in the server's skill namespace: `/`-separated segments whose last one is
   * the skill's name. Default: the name (`skill://<name>/SKILL.md`).
   */
  readonly path?: string | undefined;
  /** Supporting files by path relative to the skill's root (`references/GUIDE.md`). Default none. */
  readonly files?: Readonly<Record<string, SkillFile>> | undefined;
}

/** One file of a skill as served: its URI, bytes, digest and MIME type. */
interface ServedFile {
  readonly uri: string;
  readonly name: string;
  readonly bytes: Uint8Array;
  readonly text: string | null;
  readonly mimeType: string;
  readonly digest: string;
}

/** A skill as {@link defineSkill} checked it: give it to {@link skillsExtension}. */
export interface Skill {
  /** The URI of its `SKILL.md`. */
  readonly uri: string;
  readonly frontmatter: JsonObject;
  /** Its `Skill` entry (the shape of `skills/list` and `skills/get`), frozen. */
  readonly entry: JsonObject;
  /** Its files as resources (the `SKILL.md` first). */
  readonly resources: readonly Resource[];
}

// Agent Skills specification, "name" field: lowercase alphanumerics and hyphens, no hyphen at
// either end, none doubled.
const SKILL_NAME = /^[a-z0-9](?:[a-z0-9]|-(?!-))*$/;
/** A path segment: RFC 3986 unreserved characters (a safe subset of `pchar`). */
const SEGMENT = /^[A-Za-z0-9._~-]+$/;
const UTF8 = new TextEncoder();

/**
 * Checks a skill once, at definition (throws {@link InvalidOptionError}): its name and
 * description, its path, its files, and the per-skill limits.
 *
 * @example
 * ```ts
 * const review = defineSkill({
 *   frontmatter: { name: "code-review", description: "Review a change the team's way" },
 *   body: "# Code review\n\nRead references/CHECKLIST.md first.\n",
 *   files: { "references/CHECKLIST.md": "- tests\n- names\n" },
 * });
 * const skills = skillsExtension([review]);
 * createMcpServer({ extensions: [skills.extension], resources: skills.resources });
 * ```
 */
export function defineSkill(definition: SkillDefinition): Skill {
  if (!isPlainObject(definition)) throw new InvalidOptionError("skill", "an object", definition);
  const { frontmatter, body } = definition;
  if (!isPlainObject(frontmatter)) {
    throw new InvalidOptionError("skill.frontmatter", "an object", frontmatter);
  }
  const { name, description } = frontmatter;
  if (typeof name !== "string" || name.length > 64 || !SKILL_NAME.test(name)) {
    throw new InvalidOptionError(
      "skill.frontmatter.name",
      "1-64 lowercase letters, digits and single hyphens (not at either end)",
      name,
    );
  }
  if (typeof description !== "string" || description.length === 0 || description.length > 1024) {
    throw new InvalidOptionError("skill.frontmatter.description", "1-1024 characters", description);
  }
  let rendered: string;
  try {
    rendered = renderFrontmatter(frontmatter);
  } catch {
    throw new InvalidOptionError("skill.frontmatter", "JSON values only", frontmatter);
  }
  if (typeof body !== "string") throw new InvalidOptionError("skill.body", "a string", body);
  const path = definition.path ?? name;
  const segments = typeof path === "string" ? path.split("/") : [];
  if (segments.length === 0 || !segments.every((s) => SEGMENT.test(s) && s !== "." && s !== "..")) {
    throw new InvalidOptionError("skill.path", "`/`-separated URI path segments", path);
  }
  if (segments.at(-1) !== name) {
    // "Resource Mapping": the final segment of <skill-path> MUST equal the frontmatter's name.
    throw new InvalidOptionError("skill.path", `a path ending in the skill's name (${name})`, path);
  }
  const root = `skill://${path}`;
  const skillMd = `---\n${rendered}---\n${body}`;
  const files: ServedFile[] = [
    servedFile(`${root}/SKILL.md`, "SKILL.md", skillMd, "text/markdown"),
  ];
  for (const [relative, file] of Object.entries(definition.files ?? {})) {
    const parts = relative.split("/");
    if (
      !parts.every((s) => SEGMENT.test(s) && s !== "." && s !== "..") ||
      relative === "SKILL.md"
    ) {
      throw new InvalidOptionError(
        `skill ${name}: file`,
        "a relative path of URI segments",
        relative,
      );
    }
    files.push(fileOf(`${root}/${relative}`, parts.at(-1) as string, file, name));
  }
  if (files.length > MAX_SKILL_RESOURCES) {
    throw new InvalidOptionError(
      `skill ${name}: files`,
      `at most ${MAX_SKILL_RESOURCES - 1}`,
      files.length,
    );
  }
  const total = files.reduce((sum, file) => sum + file.bytes.byteLength, 0);
  if (total > MAX_SKILL_BYTES) {
    throw new InvalidOptionError(`skill ${name}: size`, `at most ${MAX_SKILL_BYTES} bytes`, total);
  }
  const skillUri = `${root}/SKILL.md`;
  const entry = Object.freeze({
    uri: skillUri,
    frontmatter: structuredClone(frontmatter),
    resources: files.map((file) => ({
      uri: file.uri,
      digest: file.digest,
      size: file.bytes.byteLength,
    })),
  });
  const resources = files.map((file, index) =>
    defineResource({
      uri: file.uri,
      // "Resource Metadata": SKILL.md's name and description from its frontmatter.
      name: index === 0 ? name : file.name,
      ...(index === 0 ? { description } : {}),
      mimeType: file.mimeType,
      size: file.bytes.byteLength,
      read: () => file.text ?? file.bytes,
    }),
  );
  return Object.freeze({ uri: skillUri, frontmatter: entry.frontmatter, entry, resources });
}

function fileOf(uri: string, name: string, file: SkillFile, skill: string): ServedFile {
  if (typeof file === "string") return servedFile(uri, name, file, textType(name));
  if (file instanceof Uint8Array) return servedFile(uri, name, file, "application/octet-stream");
  if (!isPlainObject(file)) throw new InvalidOptionError(`skill ${skill}: ${name}`, "a file", file);
  const { text, bytes, mimeType } = file;
  if (mimeType !== undefined && (typeof mimeType !== "string" || mimeType.length > 255)) {
    throw new InvalidOptionError(`skill ${skill}: ${name}.mimeType`, "a MIME type", mimeType);
  }
  if (typeof text === "string") return servedFile(uri, name, text, mimeType ?? textType(name));
  if (bytes instanceof Uint8Array) {
    return servedFile(uri, name, bytes, mimeType ?? "application/octet-stream");
  }
  throw new InvalidOptionError(`skill ${skill}: ${name}`, "text or bytes", file);
}

function servedFile(
  uri: string,
  name: string,
  content: string | Uint8Array,
  mimeType: string,
): ServedFile {
  const bytes = typeof content === "string" ? UTF8.encode(content) : Uint8Array.from(content);
  // "Integrity and Verification": SHA-256 of the raw bytes, `sha256:` and 64 lowercase hex digits.
  const digest = `sha256:${createHash("sha256").update(bytes).digest("hex")}`;
  return { uri, name, bytes, text: typeof content === "string" ? content : null, mimeType, digest };
}

function textType(name: string): string {
  return name.endsWith(".md") ? "text/markdown" : "text/plain";
}

/**
 * The frontmatter as YAML: one `key: value` line per field, each value written as JSON (a JSON
 * value is a YAML 1.2 flow node, https://yaml.org/spec/1.2.2/#chapter-7-flow-style-productions),
 * so a YAML parser reads back exactly the object given. Keys that are not plain words are quoted.
 */
function renderFrontmatter(frontmatter: JsonObject): string {
  let text = "";
  for (const [key, value] of Object.entries(frontmatter)) {
    const json = JSON.stringify(value);
    if (json === undefined || !isJsonValue(value)) throw new TypeError("not JSON");
    const yamlKey = /^[A-Za-z_][A-Za-z0-9_-]*$/.test(key) ? key : JSON.stringify(key);
    text += `${yamlKey}: ${json}\n`;
  }
  return text;
}

function isJsonValue(value: unknown, depth = 0): boolean {
  if (depth > 32) return false;
  if (value === null || typeof value === "string" || typeof value === "boolean") return true;
  if (typeof value === "number") return Number.isFinite(value);
  if (Array.isArray(value)) return value.every((item) => isJsonValue(item, depth + 1));
  if (isPlainObject(value)) return Object.values(value).every((v) => isJsonValue(v, depth + 1));
  return false;
}

function isSkill(value: unknown): value is Skill {
  return isPlainObject(value) && typeof value.uri === "string" && Object.isFrozen(value);
}

/** What {@link skillsExtension} takes besides the skills. */
export interface SkillsExtensionOptions {
  /** Entries per `skills/list` page. Default 100. */
  readonly pageSize?: number | undefined;
  /** `ttlMs` of `skills/list` and `skills/get` results ("CacheableResult"). Default 300 000. */
  readonly ttlMs?: number | undefined;
}

/** The Skills extension and the resources serving its skills' files. */
export interface SkillsExtension {
  readonly extension: Extension;
  readonly resources: readonly Resource[];
}

/** The `cursor` of a `skills/list` page: the offset of its first entry, as text. */
const CURSOR = /^o:(0|[1-9][0-9]{0,6})$/;

/**
 * Serves `skills`: the `io.modelcontextprotocol/skills` extension (`skills/list`, `skills/get`;
 * it also needs the `resources` capability, which every conduit-mcp server declares) and every
 * skill file as a resource. Pass both to `createMcpServer`.
 *
 * @example
 * ```ts
 * const skills = skillsExtension([review]);
 * const server = createMcpServer({ extensions: [skills.extension], resources: skills.resources });
 * ```
 */
export function skillsExtension(
  skills: readonly Skill[],
  options: SkillsExtensionOptions = {},
): SkillsExtension {
  if (!Array.isArray(skills)) throw new InvalidOptionError("skills", "an array of skills", skills);
  const byUri = new Map<string, Skill>();
  for (const skill of skills as readonly unknown[]) {
    if (!isSkill(skill)) {
      throw new InvalidOptionError("skills[]", "what defineSkill returned", skill);
    }
    if (byUri.has(skill.uri)) throw new InvalidOptionError("skills[]", "unique paths", skill.uri);
    byUri.set(skill.uri, skill);
  }
  const pageSize = options.pageSize ?? 100;
  if (!Number.isInteger(pageSize) || pageSize < 1 || pageSize > 10_000) {
    throw new InvalidOptionError("skills.pageSize", "an integer in [1, 10000]", pageSize);
  }
  const ttlMs = options.ttlMs ?? 300_000;
  if (!Number.isInteger(ttlMs) || ttlMs < 0 || ttlMs > 2_147_483_647) {
    throw new InvalidOptionError("skills.ttlMs", "an integer in [0, 2^31 - 1]", ttlMs);
  }
  const entries = [...byUri.values()].map((skill) => skill.entry);
  // "Listing Skills"/"Getting a Skill": CacheableResult; the same for every caller.
  const caching = { ttlMs, cacheScope: "public" };
  const extension = defineExtension({
    id: SKILLS_EXTENSION,
    // "Capability Negotiation": `directoryRead` defaults to false; nothing else is defined.
    settings: {},
    capabilities: { resources: {} },
    methods: {
      "skills/list": {
        holds: "request",
        checkParams: (params) =>
          params.cursor === undefined ||
          (typeof params.cursor === "string" && CURSOR.test(params.cursor))
            ? null
            : "Invalid cursor",
        handler: (params) => {
          const offset = typeof params.cursor === "string" ? Number(params.cursor.slice(2)) : 0;
          if (offset > entries.length) throw new InvalidParamsError("Invalid cursor");
          const end = offset + pageSize;
          const page: Record<string, unknown> = { skills: entries.slice(offset, end), ...caching };
          if (end < entries.length) page.nextCursor = `o:${end}`;
          return page;
        },
      },
      "skills/get": {
        holds: "request",
        checkParams: (params) => (typeof params.uri === "string" ? null : "uri must be a string"),
        handler: (params) => {
          const skill = byUri.get(params.uri as string);
          // "Error Handling": an unknown skill is -32602, as resources/read answers.
          if (skill === undefined) throw new InvalidParamsError("No skill is served at this URI");
          return { skill: skill.entry, ...caching };
        },
      },
    },
  });
  return {
    extension,
    resources: [...byUri.values()].flatMap((skill) => skill.resources),
  };
}
