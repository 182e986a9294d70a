/**
 * Embedding the Content-Site core: a whole account in memory, driven through the same use cases
 * the REST API and the MCP connector run. Runs on Node (`node examples/embed/main.ts`) and under
 * Deno (the test suite runs it there too: core/test/embedExample.test.ts).
 *
 * It imports an account, reads an article with the links it must keep, changes one sentence by
 * find and replace, sees that a change removing a protected link is refused, reads the diff of
 * the two revisions, and undoes the edit by restoring the first revision.
 */
import {
  type Caller,
  type CoreServices,
  diffRevisions,
  editArticle,
  getArticle,
  importData,
  restoreRevision,
  updateArticle,
} from "@content-site/core"
import { headerImageInspector, makeMemoryState, memoryPlatform, settingsLayer, tableImageFetcher } from "@content-site/memory"
import { Cause, type Effect, Exit, Layer, ManagedRuntime, Option } from "effect"

const PROTECTED = '<a href="https://partner.example/offer" data-service-protected="backlink">partner offer</a>'

/** What an embedder brings: its own data, in the import file's shape (the admin CLI reads the same). */
const data = {
  accounts: [
    {
      id: "acc_demo",
      email: "owner@example.com",
      password: "a long demo password",
      sites: [
        {
          id: "site_demo",
          name: "Demo garden",
          url: "https://garden.example",
          articles: [
            {
              id: "art_demo",
              title: "Roses in November",
              url: "https://garden.example/roses",
              status: "published",
              published_at: "2026-11-03T09:00:00Z",
              "target keyword": "roses",
              body: `<p>Roses rest in November.</p><p>Read the ${PROTECTED} before you prune.</p>`,
            },
          ],
        },
      ],
    },
  ],
}

/** Who calls: the core logs and limits by account, actor, scope and channel. */
const caller: Caller = {
  accountId: "acc_demo",
  actor: { type: "system", id: "embedder", name: "Embedding example" },
  scope: "write",
  channel: "api",
  requestId: "example-1",
  action: "example",
  startedAt: Date.now(),
}

export interface ExampleOutcome {
  readonly protectedLinks: ReadonlyArray<{ type: string; href: string | null; text: string }>
  readonly editedBody: string
  readonly refusal: string
  readonly diff: { readonly unified: string; readonly added: number; readonly removed: number }
  readonly restoredBody: string
  readonly revisions: number
}

/** Runs the example and answers what it saw. */
export const runExample = async (): Promise<ExampleOutcome> => {
  // Every port the use cases need: in-memory storage with the web-standard platform (clock, ids,
  // Web Crypto), settings, and image ports (header-only inspection, fetches from a table).
  const layer = Layer.mergeAll(
    memoryPlatform(makeMemoryState()),
    settingsLayer("https://content.example"),
    headerImageInspector,
    tableImageFetcher(new Map()),
  )
  const runtime = ManagedRuntime.make(layer)
  const run = <A, E>(effect: Effect.Effect<A, E, CoreServices>) => runtime.runPromise(effect)
  try {
    await run(importData(data))
    const before = await run(getArticle(caller, "art_demo"))

    const edited = await run(
      editArticle(caller, "art_demo", { edits: [{ find: "Roses rest in November.", replace: "Roses rest from November to March." }] }, { dryRun: false }),
    )

    // A change that drops the protected link is refused with the blocks it would break.
    const refused = await runtime.runPromiseExit(updateArticle(caller, "art_demo", { body: "<p>No links any more.</p>" }, { dryRun: false }))
    const refusal = Exit.isFailure(refused)
      ? Option.match(Cause.findErrorOption(refused.cause), { onNone: () => "a defect", onSome: (error) => error._tag })
      : "accepted"

    const diff = await run(diffRevisions(caller, "art_demo", 1, 2))
    const restored = await run(restoreRevision(caller, "art_demo", 1, "undo the example's edit"))
    return {
      protectedLinks: before.protected_links,
      editedBody: edited.result.article.body,
      refusal,
      diff: { unified: diff.body.unified, added: diff.body.added_words, removed: diff.body.removed_words },
      restoredBody: restored.result.article.body,
      revisions: restored.result.article.revision,
    }
  } finally {
    await runtime.dispose()
  }
}

// Run directly (Node 24 and Deno set import.meta.main), print what happened.
if ((import.meta as ImportMeta & { main?: boolean }).main === true) {
  const outcome = await runExample()
  console.log("links to keep:", outcome.protectedLinks)
  console.log("after the edit:", outcome.editedBody)
  console.log("a body without the link:", outcome.refusal)
  console.log(`diff (+${outcome.diff.added} words, -${outcome.diff.removed}):\n${outcome.diff.unified}`)
  console.log(`restored as revision ${outcome.revisions}:`, outcome.restoredBody)
}
