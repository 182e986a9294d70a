import { Effect, Exit } from "effect"
import { describe, expect, it } from "vitest"
import { decodeInput, DiffRevisionsArgs, EditArticleArgs, GetRevisionArgs, MAX_REVISION_NUMBER, RestoreRevisionArgs, UpdateArticleArgs } from "../../src/index.ts"

const decodes = (schema: Parameters<typeof decodeInput>[0], value: unknown): boolean => Exit.isSuccess(Effect.runSyncExit(decodeInput(schema, value, "Arguments")))

describe("revision numbers in tool arguments", () => {
  it("should take 1 to 2^31 - 1 and refuse what PostgreSQL's integer cannot hold", () => {
    const cases: ReadonlyArray<readonly [Parameters<typeof decodeInput>[0], (n: number) => unknown]> = [
      [GetRevisionArgs, (n) => ({ article_id: "art_1", number: n })],
      [RestoreRevisionArgs, (n) => ({ article_id: "art_1", number: n })],
      [DiffRevisionsArgs, (n) => ({ article_id: "art_1", from: n })],
      [UpdateArticleArgs, (n) => ({ article_id: "art_1", title: "t", if_revision: n })],
      [UpdateArticleArgs, (n) => ({ article_id: "art_1", title: "t", base_revision: n })],
      [EditArticleArgs, (n) => ({ article_id: "art_1", title: "t", if_revision: n })],
    ]
    for (const [schema, args] of cases) {
      expect(decodes(schema, args(1))).toBe(true)
      expect(decodes(schema, args(MAX_REVISION_NUMBER))).toBe(true)
      expect(decodes(schema, args(MAX_REVISION_NUMBER + 1))).toBe(false)
      expect(decodes(schema, args(0))).toBe(false)
    }
  })
})
