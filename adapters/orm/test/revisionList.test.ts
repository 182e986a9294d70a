/**
 * A list of an article's revisions (`GET .../revisions`, the merge's look for an edit saved
 * already, the pages' "made by") shows no body: the database sends none. Before, each listed
 * revision's whole body came back with it and was dropped: a page of 100 revisions of a 1 MiB
 * article read 100 MiB from the database into the process.
 */
import { ArticleRepository, ArticleWriter, DataImporter, RevisionRepository, type ArticleChange, type ArticleRecord } from "@content-site/core"
import { Effect } from "effect"
import { createRequire } from "node:module"
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest"
import { worldPlan } from "../../../test/persistence/fixtures/world.ts"
import { openTestStore, type TestStore } from "../../../test/support/testStore.ts"

// The `pg` the ORM's driver loads (it may be a copy of its own, not the one this package names).
const pg = createRequire(import.meta.resolve("@mikro-orm/postgresql"))("pg") as typeof import("pg")

const BODY = `<p>${"A long body of a revision. ".repeat(4_000)}</p>`
const REVISIONS = 6

const changeOf = (current: ArticleRecord, n: number): ArticleChange => ({
  title: `Revision ${n}`,
  body: `${BODY}<p>${n}</p>`,
  word_count: 20_000,
  featured_image: current.featured_image,
  updated_at: "2026-11-29T10:00:00.000Z",
  revision: {
    id: `rev_list_${n}`,
    origin: "api",
    reason: null,
    actor: { type: "api_key", id: "key_1", name: "ci" },
    restored_from: null,
    created_at: "2026-11-29T10:00:00.000Z",
  },
  activity: null,
})

describe("a list of revisions (postgresql)", () => {
  let orm: TestStore
  const article = "acc_revlist_art0"

  beforeAll(async () => {
    orm = await openTestStore()
    await orm.runtime.runPromise(DataImporter.use((i) => i.apply(worldPlan("acc_revlist", 1))))
    for (let n = 1; n <= REVISIONS; n++) {
      await orm.runtime.runPromise(ArticleWriter.use((w) => w.change("acc_revlist", article, null, (current) => Effect.succeed(changeOf(current, n)))))
    }
  })
  afterAll(async () => {
    vi.restoreAllMocks()
    await orm?.close()
  })

  it("should read no body from the database: the characters it answers do not grow with the bodies", async () => {
    let answered = 0
    const query = pg.Client.prototype.query as (...args: Array<unknown>) => unknown
    const count = (r: { rows?: ReadonlyArray<unknown> } | undefined) => (answered += JSON.stringify(r?.rows ?? []).length)
    const spy = vi.spyOn(pg.Client.prototype, "query").mockImplementation(function (this: unknown, ...args: Array<unknown>) {
      // (the driver passes a callback, or takes the promise)
      const last = args.length - 1
      const callback = args[last]
      if (typeof callback === "function") {
        args[last] = (e: unknown, r: { rows?: ReadonlyArray<unknown> }) => {
          if (!e) count(r)
          return (callback as (e: unknown, r: unknown) => unknown)(e, r)
        }
        return query.apply(this, args)
      }
      const result = query.apply(this, args) as { then?: unknown }
      return typeof result?.then === "function"
        ? (result as Promise<{ rows?: ReadonlyArray<unknown> }>).then((r) => {
            count(r)
            return r
          })
        : result
    } as never)
    const { items, total } = await orm.runtime.runPromise(RevisionRepository.use((r) => r.list("acc_revlist", article, { offset: 0, limit: 20 })))
    spy.mockRestore()

    expect(total).toBeGreaterThan(REVISIONS)
    expect(items.map((r) => r.number).slice(0, 2)).toEqual([total, total - 1])
    expect(items[0]).toMatchObject({ id: `rev_list_${REVISIONS}`, title: `Revision ${REVISIONS}`, origin: "api", restored_from: null })
    expect("body" in items[0]!).toBe(false)
    // 108 000 characters a body: six of them were 648 000 characters answered; now a few hundred a revision
    expect(BODY.length).toBeGreaterThan(100_000)
    expect(answered).toBeGreaterThan(0)
    expect(answered).toBeLessThan(items.length * 1_000)
    // a single revision is still read whole
    const one = await orm.runtime.runPromise(RevisionRepository.use((r) => r.get("acc_revlist", article, total)))
    expect(one.body).toBe(`${BODY}<p>${REVISIONS}</p>`)
    expect(await orm.runtime.runPromise(ArticleRepository.use((r) => r.get("acc_revlist", article)))).toMatchObject({ revision: total })
  })
})
