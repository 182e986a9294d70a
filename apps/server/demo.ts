/**
 * Demo data: on an empty database (no account at all), imports `demo-data.json` (one account with
 * three sites, 30 articles and 40 backlinks) through the core `importData` use case and creates a
 * fresh write API key, returned once so the server can print it. Dates in the file are relative
 * to DEMO_BASE_DATE and are moved forward to today, so the demo always covers the last 3 months.
 */
import { AccountRepository, createApiKey, prepareImport, writeImportIntoEmpty, type CoreServices } from "@content-site/core"
import { Effect, Option, type ManagedRuntime } from "effect"
import { readFileSync } from "node:fs"

/** The day the file's dates were written against. */
export const DEMO_BASE_DATE = "2026-11-22"

const DAY = 86_400_000

interface DemoFile {
  accounts: Array<{
    email: string
    password: string
    sites?: Array<{ articles?: Array<{ published_at?: string }>; backlinks?: Array<{ date_acquired: string }> }>
  }>
}

/** The demo file with every date moved by whole days so that DEMO_BASE_DATE becomes `today`. */
export const demoData = (now: number = Date.now()): DemoFile => {
  const file = JSON.parse(readFileSync(new URL("./demo-data.json", import.meta.url), "utf8")) as DemoFile
  const shift = Math.max(0, Math.floor((now - Date.parse(`${DEMO_BASE_DATE}T00:00:00Z`)) / DAY)) * DAY
  for (const account of file.accounts) {
    for (const site of account.sites ?? []) {
      for (const article of site.articles ?? []) {
        if (article.published_at) article.published_at = new Date(Date.parse(article.published_at) + shift).toISOString()
      }
      for (const backlink of site.backlinks ?? []) {
        backlink.date_acquired = new Date(Date.parse(`${backlink.date_acquired}T00:00:00Z`) + shift).toISOString().slice(0, 10)
      }
    }
  }
  return file
}

/**
 * Seeds the demo account into an empty database; returns its sign-in and a new write API key
 * (shown once), or null when nothing was seeded.
 */
export const seedDemo = async (
  runtime: ManagedRuntime.ManagedRuntime<CoreServices, never>,
): Promise<{ email: string; password: string; apiKey: string } | null> => {
  const file = demoData()
  const owner = file.accounts[0]!
  return runtime.runPromise(
    Effect.gen(function* () {
      const accounts = yield* AccountRepository
      // only into an empty database: an operator's own accounts never gain a known sign-in (asked
      // under the import lock: an `admin import` or another instance's seeding at the same moment
      // is seen here, or waits for this one and then finds the demo account)
      if (yield* accounts.hasAny) return null
      if ((yield* writeImportIntoEmpty(yield* prepareImport(file))) === null) return null
      const account = Option.getOrThrow(yield* accounts.findByEmail(owner.email))
      const { key } = yield* createApiKey(account.id, { name: "Demo key", scope: "write" })
      return { email: owner.email, password: owner.password, apiKey: key }
    }),
  )
}
