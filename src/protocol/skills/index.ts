/**
 * The Skills extension (`io.modelcontextprotocol/skills`): skills served as `skill://` resources,
 * with `skills/list` and `skills/get` on the extension seam.
 *
 * The room's face: what the rest of the package uses of it. Modules outside the room import
 * only this file (scripts/check-layers.ts).
 */
export type {
  Skill,
  SkillDefinition,
  SkillFile,
  SkillsExtension,
  SkillsExtensionOptions,
} from "./define-skill.js";
export {
  defineSkill,
  MAX_SKILL_BYTES,
  MAX_SKILL_RESOURCES,
  SKILLS_EXTENSION,
  skillsExtension,
} from "./define-skill.js";
