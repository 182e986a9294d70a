import Ajv2020 from "ajv/dist/2020.js"
import { describe, expect, it } from "vitest"
import { decodeInput, defaultLimits } from "@content-site/core"
import { Effect, Exit } from "effect"
import fc from "fast-check"
import { toolDefinitionsFor, toolNamed } from "../src/tools.ts"
import { schemaValues } from "../../../test/support/schemaArbitrary.ts"

const toolDefinitions = toolDefinitionsFor(defaultLimits)

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

  it("should accept and refuse texts at the limits (astral ones, idempotency keys) exactly as the tool's own decoder does", () => {
    const cases: ReadonlyArray<readonly [string, Record<string, unknown>, boolean]> = [
      ["update_article", { article_id: "art_1", title: EMOJI.repeat(300), reason: EMOJI.repeat(500) }, true],
      ["update_article", { article_id: "art_1", title: "t", reason: EMOJI.repeat(501) }, false],
      ["edit_article", { article_id: "art_1", title: EMOJI.repeat(151) }, true],
      ["replace_featured_image", { article_id: "art_1", url: "https://img.test/a.png", alt: EMOJI.repeat(500) }, true],
      ["replace_featured_image", { article_id: "art_1", url: "https://img.test/a.png", alt: EMOJI.repeat(501) }, false],
      // unknown keys are refused inside the arguments too, as the decoder refuses them
      ["edit_article", { article_id: "art_1", edits: [{ find: "a", replace: "b" }] }, true],
      ["edit_article", { article_id: "art_1", edits: [{ find: "a", replace: "b", note: "x" }] }, false],
      // an idempotency_key is 1 to 255 visible ASCII characters, in the schema as in the decoder
      ...["update_article", "edit_article", "restore_revision", "replace_featured_image"].flatMap((name) => {
        const base: Record<string, unknown> =
          name === "restore_revision" ? { article_id: "art_1", number: 1 } : name === "replace_featured_image" ? { article_id: "art_1", url: "https://img.test/a.png" } : { article_id: "art_1", title: "t" }
        return [
          [name, { ...base, idempotency_key: "k".repeat(255) }, true],
          [name, { ...base, idempotency_key: "" }, false],
          [name, { ...base, idempotency_key: "k".repeat(256) }, false],
          [name, { ...base, idempotency_key: "a key" }, false],
          [name, { ...base, idempotency_key: "clé" }, false],
        ] as const
      }),
    ]
    for (const [name, args, accepted] of cases) {
      const validate = new (Ajv2020 as unknown as typeof Ajv2020.default)({ strict: false }).compile(toolDefinitions.find((t) => t.name === name)!.inputSchema)
      const decoded = Exit.isSuccess(Effect.runSyncExit(decodeInput(toolNamed(name)!.input, args, "Tool arguments")))
      expect([validate(args), decoded], `${name} ${JSON.stringify(args).length}`).toEqual([accepted, accepted])
    }
  })

  it("should refuse in image_base64's schema, as its decoder does, what is not standard base64: a data: URL, other characters, padding inside", () => {
    const png = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg=="
    const cases: ReadonlyArray<readonly [string, boolean]> = [
      [png, true],
      // line breaks and spaces are ignored, as MIME base64 wraps its lines
      [`${png.slice(0, 40)}\r\n${png.slice(40, 80)}\n ${png.slice(80)}`, true],
      ["QUJD", true],
      ["QQ==", true],
      [`data:image/png;base64,${png}`, false],
      ["!!!!", false],
      ["QQ==QUJD", false],
      ["QUJD-_8=", false],
      // every ASCII white space between the letters and after the padding; others (a no-break space) are not base64's
      ["Q\tU\u000bJ\fD Q Q = =\n", true],
      ["QUJD\u00a0QUJD", false],
      ["QQ===", false],
    ]
    const tool = toolDefinitions.find((t) => t.name === "replace_featured_image")!
    const validate = new (Ajv2020 as unknown as typeof Ajv2020.default)({ strict: false }).compile(tool.inputSchema)
    for (const [image_base64, accepted] of cases) {
      const args = { article_id: "art_1", image_base64, mime_type: "image/png" }
      const decoded = Exit.isSuccess(Effect.runSyncExit(decodeInput(toolNamed("replace_featured_image")!.input, args, "Tool arguments")))
      expect([validate(args), decoded], image_base64.slice(0, 40)).toEqual([accepted, accepted])
    }
    // a 10 MiB image's base64 wrapped as MIME wraps it (CR LF every 76 letters) is within the published maxLength
    const letters = Math.ceil((10 * 1024 * 1024) / 3) * 4
    const wrapped = letters + Math.ceil(letters / 76) * 2
    expect((tool.inputSchema as unknown as { properties: { image_base64: { maxLength: number } } }).properties.image_base64.maxLength).toBeGreaterThanOrEqual(wrapped)
    // a length of 4n+1 holds no whole byte's worth of base64, in any layout: the decoder refuses it (the schema says so in words only)
    for (const image_base64 of ["QUJDQ", "Q U J D\nQ"]) {
      expect(Exit.isSuccess(Effect.runSyncExit(decodeInput(toolNamed("replace_featured_image")!.input, { article_id: "art_1", image_base64, mime_type: "image/png" }, "Tool arguments")))).toBe(false)
    }
  })
})

describe("tool input schemas against the tools' decoders", () => {
  it("should refuse, for every tool and argument, each value the schema forbids, and accept each value it allows", () => {
    // Arguments besides the one tried, chosen so that the tool accepts them (rules across arguments are the descriptions' business).
    const baselines: Record<string, Record<string, unknown>> = {
      update_article: { article_id: "art_1", title: "t" },
      edit_article: { article_id: "art_1", title: "t" },
      replace_featured_image: { article_id: "art_1", url: "https://img.test/a.png" },
      restore_revision: { article_id: "art_1", number: 1 },
      get_revision: { article_id: "art_1", number: 1 },
      diff_revisions: { article_id: "art_1", from: 1 },
      search_articles: { q: "x" },
      search: { query: "x" },
      fetch: { id: "art_1" },
    }
    const misses: Array<string> = []
    let tried = 0
    for (const definition of toolDefinitions) {
      const schema = definition.inputSchema as Record<string, any>
      const values = schemaValues({ components: { schemas: schema["$defs"] ?? {} } })
      const base = baselines[definition.name] ?? Object.fromEntries(((schema["required"] ?? []) as Array<string>).map((k) => [k, "site_1"]))
      for (const [name, property] of Object.entries(schema["properties"] as Record<string, Record<string, unknown>>)) {
        // image_base64 goes with mime_type instead of url: tried in its own test above
        if (name === "image_base64") continue
        const args = (value: unknown) => ({ ...base, [name]: value })
        // null when the decoder accepts, else why it refuses
        const refusal = (value: unknown) =>
          Effect.runSync(Effect.match(decodeInput(toolNamed(definition.name)!.input, args(value), "Tool arguments"), { onFailure: (e) => e.detail, onSuccess: () => null }))
        for (const value of values.invalid(property)) {
          tried++
          if (refusal(value) === null) misses.push(`${definition.name} ${name}=${JSON.stringify(value).slice(0, 60)}: forbidden, accepted`)
        }
        for (const value of fc.sample(values.valid(property), { numRuns: 20, seed: 7 })) {
          tried++
          const why = refusal(value)
          // a date its month lacks (2026-02-30) is refused as the description says; a pattern cannot say it
          if (why !== null && !/Not a real date/.test(why)) misses.push(`${definition.name} ${name}=${JSON.stringify(value).slice(0, 60)}: allowed, refused`)
        }
      }
    }
    expect(misses).toEqual([])
    expect(tried).toBeGreaterThan(1000)
  })
})

describe("tool descriptions", () => {
  it("should state the limits in force, not the defaults", () => {
    const configured = toolDefinitionsFor({ requestsPerMinute: 7, dailyEdits: 9, maxPerPage: 33 })
    for (const tool of configured) {
      expect(tool.description, tool.name).toMatch(/\b7 requests per minute\b/)
      expect(tool.description, tool.name).not.toMatch(/\{[a-z_]+\}|\b60\b|\b200\b/)
      if (tool.annotations.readOnlyHint === false) expect(tool.description, tool.name).toMatch(/\b9 article changes per UTC day\b/)
      if (tool.name.startsWith("list_")) expect(tool.description, tool.name).toMatch(/per_page 1 to 33\b/)
    }
    const defaults = toolDefinitions.find((t) => t.name === "list_articles")!.description
    expect(defaults).toMatch(/60 requests per minute.*per_page 1 to 100\b/)
  })

  it("should state how many results search answers at the page size in force (the operator's, when below 20)", () => {
    const searchOf = (maxPerPage: number) => toolDefinitionsFor({ requestsPerMinute: 7, dailyEdits: 9, maxPerPage }).find((t) => t.name === "search")!.description
    expect(searchOf(5)).toMatch(/\bat most 5 results\b/)
    expect(searchOf(100)).toMatch(/\bat most 20 results\b/)
  })

  it("should give every per_page the configured page size as its maximum and default, as the server checks it", () => {
    const configured = toolDefinitionsFor({ requestsPerMinute: 7, dailyEdits: 9, maxPerPage: 5 })
    const paged = configured.filter((t) => "per_page" in (t.inputSchema.properties as object))
    expect(paged.map((t) => t.name)).toEqual(expect.arrayContaining(["list_sites", "list_articles", "list_backlinks", "list_revisions", "search_articles"]))
    for (const tool of paged) {
      const perPage = (tool.inputSchema.properties as Record<string, Record<string, unknown>>)["per_page"]
      expect(perPage, tool.name).toMatchObject({ type: "integer", minimum: 1, maximum: 5, default: 5, description: "Items per page, 1 to 5 (default 5)." })
      const validate = new (Ajv2020 as unknown as typeof Ajv2020.default)({ strict: false }).compile(tool.inputSchema)
      const required = Object.fromEntries(((tool.inputSchema.required as Array<string> | undefined) ?? []).map((k) => [k, k === "q" ? "x" : "art_1"]))
      expect([validate({ ...required, per_page: 5 }), validate({ ...required, per_page: 6 })], tool.name).toEqual([true, false])
    }
    // at the default setting, the schema's own ceiling and default
    const list = toolDefinitions.find((t) => t.name === "list_sites")!
    expect((list.inputSchema.properties as Record<string, unknown>)["per_page"]).toMatchObject({ maximum: 100, default: 20 })
  })

  it("should give a site_id argument a website's id as its example and an article_id an article's", () => {
    for (const tool of toolDefinitions) {
      const properties = tool.inputSchema.properties as Record<string, { examples?: Array<string> }>
      if (properties["site_id"] !== undefined) expect(properties["site_id"].examples, tool.name).toEqual(["site_1"])
      if (properties["article_id"] !== undefined) expect(properties["article_id"].examples, tool.name).toEqual(["art_1"])
    }
    const list = toolDefinitions.find((t) => t.name === "list_articles")!
    expect((list.inputSchema.properties as Record<string, unknown>)["site_id"]).toMatchObject({ examples: ["site_1"] })
  })

  it("should speak of paging only for the tools that page", () => {
    for (const tool of toolDefinitions) {
      const pages = Object.keys(tool.inputSchema.properties as object).includes("page")
      expect(/per_page|\bpage size\b/.test(tool.description), tool.name).toBe(pages)
    }
  })

  it("should describe every argument of every tool", () => {
    const missing: Array<string> = []
    for (const tool of toolDefinitions) {
      const defs = ((tool.inputSchema as { $defs?: Record<string, { description?: string }> }).$defs ?? {})
      for (const [name, property] of Object.entries(tool.inputSchema.properties as Record<string, { description?: string; $ref?: string }>)) {
        const description = property.description ?? (property.$ref !== undefined ? defs[property.$ref.split("/").pop()!]?.description : undefined)
        missing.push(...(typeof description === "string" && /\w{3,}/.test(description) ? [] : [`${tool.name}.${name}`]))
      }
    }
    expect(missing).toEqual([])
  })
})

