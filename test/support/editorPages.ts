/**
 * A browser test file's editor pages: one server on memory storage holding one person's site and
 * articles, and one Chromium, started in the file's `beforeAll` and closed in its `afterAll`; each
 * case opens an article's editor in a signed-in context of its own.
 */
import { importData } from "@content-site/core"
import type { Browser } from "playwright-core"
import { afterAll, beforeAll } from "vitest"
import { type StartedServer, startServer } from "../../apps/server/server.ts"
import { launchChromium, signedInContext } from "./browser.ts"

/** Whose articles: the account and site ids, the site's name and host, the person who signs in. */
export interface EditorOwner {
  readonly accountId: string
  readonly siteId: string
  readonly siteName: string
  readonly host: string
  readonly person: { readonly email: string; readonly password: string }
}

/** Registers the server and browser of a test file; `editorOf(id)` opens the editor of article `id` (titled by its id). */
export const editorPages = <Id extends string>(owner: EditorOwner, articles: Readonly<Record<Id, string>>) => {
  let server: StartedServer | undefined
  let browser: Browser | undefined
  beforeAll(async () => {
    server = await startServer({ storage: "memory", quiet: true, env: { PORT: "0", HOST: "127.0.0.1", SEED_DEMO: "false" } })
    const { accountId, siteId, siteName, host, person } = owner
    const listed = Object.entries(articles) as Array<[Id, string]>
    await server.runtime.runPromise(
      importData({
        accounts: [
          {
            id: accountId,
            ...person,
            sites: [{ id: siteId, name: siteName, url: `https://${host}`, articles: listed.map(([id, body]) => ({ id, title: id, url: `https://${host}/${id}`, status: "published" as const, body })) }],
          },
        ],
      }),
    )
    browser = await launchChromium()
  }, 120_000)
  afterAll(async () => {
    await browser?.close()
    await server?.close()
  })
  const url = (): string => {
    if (server === undefined) throw new Error("the editor pages' server has not started (use editorPages at a test file's top level)")
    return server.url
  }
  return {
    url,
    /** A signed-in page with the editor of `id` loaded. */
    editorOf: async (id: Id) => {
      if (browser === undefined) throw new Error("the editor pages' browser has not started")
      const { context, page } = await signedInContext(browser, url(), owner.person, { width: 1280, height: 900 })
      await page.goto(`${url()}/articles/${id}`)
      await page.waitForSelector(".editor-content")
      return { context, page }
    },
  }
}
