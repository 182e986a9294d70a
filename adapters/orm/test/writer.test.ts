/**
 * An article's change on PostgreSQL: its body is sent to the database as a bind parameter of the
 * revision's insert and of the article's update, never written into a statement's text (MikroORM's
 * unit of work would inline it: a 1 MiB literal, escaped and copied, for each statement). The
 * contract suite covers what a change writes on every adapter; this covers how it is sent.
 */
import { ArticleRepository, ArticleWriter, DataImporter, RevisionRepository, type ArticleChange, type ArticleRecord } from "@content-site/core"
import { Effect } from "effect"
import { createRequire } from "node:module"
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest"
import { worldPlan } from "../../../test/persistence/fixtures/world.ts"
import { openTestStore, type TestStore } from "../../../test/support/testStore.ts"

// The `pg` the ORM's driver loads (it may be a copy of its own, not the one this package names).
const pg = createRequire(import.meta.resolve("@mikro-orm/postgresql"))("pg") as typeof import("pg")

// Quotes, backslashes, a NUL-free mix of scripts and an emoji: what an inlined literal must escape, bound as it is.
const BODY = `<p>${"It's a \\back\\slash, «ça», 日本語 and 😀 ".repeat(9_000)}</p>`

const changeOf = (current: ArticleRecord): ArticleChange => ({
  title: "Bound 'title'",
  body: BODY,
  word_count: 12_345,
  featured_image: { url: "https://cdn.example.com/a.png", alt: "An 'alt'" },
  updated_at: "2026-11-22T10:00:00.123Z",
  revision: {
    id: "rev_bound_1",
    origin: "api",
    reason: "bound",
    actor: { type: "api_key", id: "key_1", name: "ci" },
    restored_from: current.revision,
    created_at: "2026-11-22T10:00:00.123Z",
  },
  activity: null,
})

describe("an article's change sent with bind parameters (postgresql)", () => {
  let orm: TestStore

  beforeAll(async () => {
    orm = await openTestStore()
    await orm.runtime.runPromise(DataImporter.use((i) => i.apply(worldPlan("acc_bound", 1))))
  })
  afterAll(async () => {
    vi.restoreAllMocks()
    await orm?.close()
  })

  it("should send a 400 KB body as a parameter of both statements, and read back every column as written", async () => {
    const sent: Array<{ text: string; values: ReadonlyArray<unknown> }> = []
    const query = pg.Client.prototype.query as (...args: Array<unknown>) => unknown
    const spy = vi.spyOn(pg.Client.prototype, "query").mockImplementation(function (this: unknown, ...args: Array<unknown>) {
      const [first, second] = args
      const text = typeof first === "string" ? first : ((first as { text?: string }).text ?? "")
      const values = Array.isArray(second) ? second : ((first as { values?: Array<unknown> }).values ?? [])
      sent.push({ text, values })
      return query.apply(this, args)
    } as never)
    const article = { id: "acc_bound_art0" }
    const before = await orm.runtime.runPromise(ArticleRepository.use((r) => r.get("acc_bound", article!.id)))
    const out = await orm.runtime.runPromise(ArticleWriter.use((w) => w.change("acc_bound", article!.id, null, (current) => Effect.succeed(changeOf(current)))))
    spy.mockRestore()

    expect(Buffer.byteLength(BODY)).toBeGreaterThan(400_000)
    // no statement of the change carries the body in its text; two carry it as a parameter
    expect(sent.length).toBeGreaterThan(2)
    expect(Math.max(...sent.map((s) => s.text.length))).toBeLessThan(2_000)
    const carrying = sent.filter((s) => s.values.includes(BODY))
    expect(carrying.map((s) => s.text.trim().split(/\s+/).slice(0, 2).join(" "))).toEqual(["insert into", "update articles"])

    const expected = { ...before, title: "Bound 'title'", body: BODY, word_count: 12_345, featured_image: changeOf(before).featured_image, updated_at: "2026-11-22T10:00:00.123Z", revision: before.revision + 1 }
    expect(out.committed?.article).toEqual(expected)
    expect(await orm.runtime.runPromise(ArticleRepository.use((r) => r.get("acc_bound", article!.id)))).toEqual(expected)
    const revision = await orm.runtime.runPromise(RevisionRepository.use((r) => r.get("acc_bound", article!.id, before.revision + 1)))
    expect(revision).toMatchObject({
      id: "rev_bound_1",
      number: before.revision + 1,
      title: "Bound 'title'",
      body: BODY,
      featured_image: { url: "https://cdn.example.com/a.png", alt: "An 'alt'" },
      reason: "bound",
      actor: { type: "api_key", id: "key_1", name: "ci" },
      restored_from: before.revision,
      created_at: "2026-11-22T10:00:00.123Z",
    })
  })
})
