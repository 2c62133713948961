/**
 * The demo server's skill (the Skills extension, `io.modelcontextprotocol/skills`): `roll-dice`,
 * instructions for using the demo's `roll_dice` tool, with one supporting file. Served as
 * `skill://roll-dice/SKILL.md` and `skill://roll-dice/references/NOTATION.md`, listed by
 * `skills/list` and returned by `skills/get`.
 */
import { defineSkill, skillsExtension } from "../protocol/index.js";

const rollDice = defineSkill({
  frontmatter: {
    name: "roll-dice",
    description: "Roll dice with the demo server's roll_dice tool and report the result",
  },
  body: [
    "# Rolling dice",
    "",
    "1. Read references/NOTATION.md to turn the user's request (`3d6`) into a count and sides.",
    '2. Call the `roll_dice` tool with `{ "count": 3, "sides": 6 }`.',
    "3. Report the numbers rolled and their sum; offer to roll again.",
    "",
  ].join("\n"),
  files: {
    "references/NOTATION.md": [
      "# Dice notation",
      "",
      "`MdN` is M dice of N sides each: 3d6 is three cubes, d20 one icosahedron.",
      "",
    ].join("\n"),
  },
});

/** The Skills extension and the resources of the demo's skill. */
export const demoSkills = skillsExtension([rollDice]);
