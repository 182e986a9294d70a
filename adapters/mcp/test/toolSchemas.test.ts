import Ajv2020 from "ajv/dist/2020.js"
import { describe, expect, it } from "vitest"
import { decodeInput } from "@content-site/core"
import { Effect, Exit } from "effect"
import { toolDefinitions, toolNamed } from "../src/tools.ts"

type Properties = Record<string, { minLength?: number; maxLength?: number; items?: { properties?: Properties } }>
const propertiesOf = (name: string): Properties => {
  const tool = toolDefinitions.find((t) => t.name === name)
  if (tool === undefined) throw new Error(`no tool ${name}`)
  return tool.inputSchema.properties as Properties
}

const EMOJI = "\u{1F600}"

describe("tool input schemas", () => {
  it("should carry the character limits of the write tools' texts as minLength and maxLength", () => {
    for (const name of ["update_article", "edit_article", "restore_revision"]) expect(propertiesOf(name)["reason"]?.maxLength, name).toBe(500)
    for (const name of ["update_article", "edit_article"]) expect(propertiesOf(name)["title"]?.minLength, name).toBe(1)
    expect(propertiesOf("replace_featured_image")["alt"]?.maxLength).toBe(500)
    expect(propertiesOf("replace_featured_image")["url"]?.maxLength).toBe(2048)
    const edit = propertiesOf("edit_article")["edits"]?.items?.properties
    expect(edit?.["find"]).toMatchObject({ minLength: 1, maxLength: 1024 * 1024 })
    expect(edit?.["replace"]).toMatchObject({ maxLength: 1024 * 1024 })
  })

  it("should keep every input schema a plain object schema, with no anyOf, oneOf or allOf at the top", () => {
    // Some model APIs refuse a tool whose input schema combines schemas at the top level; the
    // REST bodies publish their "at least one of" rules, the tools say them in their descriptions.
    for (const tool of toolDefinitions) {
      expect(tool.inputSchema.type, tool.name).toBe("object")
      for (const combinator of ["anyOf", "oneOf", "allOf", "not"]) expect(tool.inputSchema, `${tool.name} ${combinator}`).not.toHaveProperty(combinator)
    }
  })

  it("should accept and refuse astral texts at the limits exactly as the tool's own decoder does", () => {
    const cases: ReadonlyArray<readonly [string, Record<string, unknown>, boolean]> = [
      ["update_article", { article_id: "art_1", title: EMOJI.repeat(300), reason: EMOJI.repeat(500) }, true],
      ["update_article", { article_id: "art_1", title: "t", reason: EMOJI.repeat(501) }, false],
      ["edit_article", { article_id: "art_1", title: EMOJI.repeat(151) }, true],
      ["replace_featured_image", { article_id: "art_1", url: "https://img.test/a.png", alt: EMOJI.repeat(500) }, true],
      ["replace_featured_image", { article_id: "art_1", url: "https://img.test/a.png", alt: EMOJI.repeat(501) }, false],
    ]
    for (const [name, args, accepted] of cases) {
      const validate = new (Ajv2020 as unknown as typeof Ajv2020.default)({ strict: false }).compile(toolDefinitions.find((t) => t.name === name)!.inputSchema)
      const decoded = Exit.isSuccess(Effect.runSyncExit(decodeInput(toolNamed(name)!.input, args, "Tool arguments")))
      expect([validate(args), decoded], `${name} ${JSON.stringify(args).length}`).toEqual([accepted, accepted])
    }
  })
})
