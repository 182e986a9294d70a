import { fixedClock, headerImageInspector, inlineHtmlAnalyzer, makeMemoryState, memoryStorage, settingsLayer, tableImageFetcher } from "@content-site/memory"
import { randomIds, webCryptoSecrets } from "@content-site/platform/web"
import { Cause, Effect, Exit, Layer, ManagedRuntime } from "effect"
import { analyzeArticleHtml, applyTextEdits, compareBodies, HtmlAnalyzer as HtmlAnalyzerTag, makeDiffBudget, mergeArticle, proseOfHtml, readStoredBody, sanitizeEachPart } from "../../src/index.ts"
import { type Caller, type CoreServices, type HtmlAnalyzer, importData, type LimitSettings, Secrets } from "../../src/index.ts"

/** A PNG header of the given size (enough for header-only inspection). */
export const pngHeader = (width: number, height: number): Uint8Array => {
  const b = new Uint8Array(33)
  b.set([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 13, 0x49, 0x48, 0x44, 0x52])
  new DataView(b.buffer).setUint32(16, width)
  new DataView(b.buffer).setUint32(20, height)
  return b
}

export const NOW = Date.parse("2026-11-22T12:00:00.000Z")

const body1 =
  '<p>Intro text about gardens.</p><p>See <a href="https://partner.test/x" data-service-protected="backlink">partner</a> and <a href="/internal" data-service-protected="internal">our guide</a>.</p>'

/** The fixture every use-case test starts from: two accounts, each with a site. */
export const fixture = {
  accounts: [
    {
      id: "acc_a",
      email: "a@example.com",
      password: "password-a",
      name: "Alice",
      api_keys: [
        { id: "key_a", name: "ci", key: "cs_aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", scope: "write" },
        { id: "key_ro", name: "ro", key: "cs_rrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrr", scope: "read-only" },
      ],
      sites: [
        {
          id: "site_a",
          name: "Garden",
          url: "https://garden.test",
          articles: [
            { id: "art_1", title: "Roses", url: "https://garden.test/roses", status: "published", published_at: "2026-11-03T09:00:00Z", "target keyword": "roses", body: body1 },
            { id: "art_2", title: "Tulips", url: "https://garden.test/tulips", status: "published", published_at: "2026-10-15T09:00:00Z", "target keyword": "tulips", body: "<p>one two three</p>" },
            { id: "art_3", title: "Draft", url: "https://garden.test/draft", status: "draft", "target keyword": "x", body: "<p>draft</p>" },
          ],
          backlinks: [
            { id: "bl_1", date_acquired: "2026-11-05", source_domain: "news.test", source_url: "https://news.test/p", target_url: "https://garden.test/roses", anchor_text: "roses", anchor_type: "exact", category: "industry" },
            { id: "bl_2", date_acquired: "2026-11-01", source_domain: "town.test", source_url: "https://town.test/p", target_url: "https://garden.test/", anchor_text: "garden", anchor_type: "brand", category: "local" },
            { id: "bl_3", date_acquired: "2026-10-31", source_domain: "old.test", source_url: "https://old.test/p", target_url: "https://garden.test/", anchor_text: "old", anchor_type: "brand", category: "local" },
          ],
        },
      ],
    },
    {
      id: "acc_b",
      email: "b@example.com",
      password: "password-b",
      sites: [
        { id: "site_b", name: "Bakery", url: "https://bakery.test", articles: [{ id: "art_b", title: "Bread", url: "https://bakery.test/bread", status: "published", published_at: "2026-11-02T09:00:00Z", body: "<p>bread</p>" }] },
      ],
    },
  ],
}

/** A use-case test world on the memory Layers, with a fixed clock. */
export const makeWorld = async (
  limits: Partial<LimitSettings> = {},
  images: ReadonlyMap<string, Uint8Array> = new Map(),
  htmlAnalyzer: Layer.Layer<HtmlAnalyzer> = inlineHtmlAnalyzer,
  secrets: Layer.Layer<Secrets> = webCryptoSecrets(1_000),
) => {
  const state = makeMemoryState()
  const clock = fixedClock(NOW)
  const layer = Layer.mergeAll(
    memoryStorage(state, clock.now),
    clock.layer,
    randomIds,
    secrets,
    settingsLayer("https://cs.test", limits),
    headerImageInspector,
    htmlAnalyzer,
    tableImageFetcher(images),
  )
  const runtime = ManagedRuntime.make(layer)
  await runtime.runPromise(importData(fixture))
  const run = <A, E>(eff: Effect.Effect<A, E, CoreServices>) => runtime.runPromise(eff)
  const exit = <A, E>(eff: Effect.Effect<A, E, CoreServices>) => runtime.runPromiseExit(eff)
  return { state, clock, runtime, run, exit }
}

/** Web Crypto secrets that count every password hash computed (made or checked). */
export const countingSecrets = () => {
  const counts = { hashes: 0 }
  const inner = Effect.runSync(Effect.provide(Secrets.use((s) => Effect.succeed(s)), webCryptoSecrets(1_000)))
  const layer = Layer.succeed(Secrets, {
    ...inner,
    hashPassword: (password) => Effect.suspend(() => (counts.hashes++, inner.hashPassword(password))),
    verifyPassword: (password, hash) => Effect.suspend(() => (counts.hashes++, inner.verifyPassword(password, hash))),
  })
  return { counts, layer }
}

/** The tag of the expected failure of an exit, or a description of why there is none. */
export const failureTag = <A, E>(exit: Exit.Exit<A, E>): string => {
  if (Exit.isSuccess(exit)) return "(succeeded)"
  const failure = exit.cause.reasons.find(Cause.isFailReason)
  if (failure) return (failure.error as { _tag: string })._tag
  return `(defect: ${Cause.pretty(exit.cause)})`
}

/** The failure value of an exit (throws when it succeeded). */
export const failureOf = <A, E>(exit: Exit.Exit<A, E>): E => {
  if (Exit.isSuccess(exit)) throw new Error("expected a failure")
  const failure = exit.cause.reasons.find(Cause.isFailReason)
  if (!failure) throw new Error(`expected a failure, got ${Cause.pretty(exit.cause)}`)
  return failure.error as E
}

/**
 * The HTML policy in the calling thread, noting every body it is asked to analyse (`analyze`),
 * and, as `readStored: <body>`, `prose: <body>` and `compare: <from> | <to>`, the other work it is given.
 */
export const recordingHtmlAnalyzer = (seen: Array<string>): Layer.Layer<HtmlAnalyzer> =>
  Layer.succeed(HtmlAnalyzerTag, {
    analyze: (html: string) =>
      Effect.suspend(() => {
        seen.push(html)
        return analyzeArticleHtml(html)
      }),
    merge: (base, theirs, mine) => Effect.sync(() => mergeArticle(base, theirs, mine)),
    sanitizeEach: (parts: ReadonlyArray<string>) => Effect.sync(() => sanitizeEachPart(parts)),
    readStored: (html: string) =>
      Effect.sync(() => {
        seen.push(`readStored: ${html}`)
        return readStoredBody(html)
      }),
    prose: (html: string) =>
      Effect.sync(() => {
        seen.push(`prose: ${html}`)
        return proseOfHtml(html)
      }),
    compare: (fromHtml, toHtml, options) =>
      Effect.sync(() => {
        seen.push(`compare: ${fromHtml} | ${toHtml}`)
        return compareBodies(fromHtml, toHtml, options, makeDiffBudget())
      }),
    applyEdits: (text: string, edits: ReadonlyArray<{ readonly find: string; readonly replace: string }>) =>
      Effect.sync(() => {
        seen.push(`applyEdits: ${edits.length}`)
        return applyTextEdits(text, edits)
      }),
    admits: () => Effect.succeed(() => undefined),
  })

let seq = 0
/** A caller of account `acc_a` (or another) through a channel. */
export const caller = (over: Partial<Caller> = {}): Caller => ({
  accountId: "acc_a",
  actor: { type: "api_key", id: "key_a", name: "ci" },
  scope: "write",
  channel: "api",
  requestId: `req_${++seq}`,
  action: "TEST",
  startedAt: NOW,
  ...over,
})

/**
 * An import of one account (`acc_<tag>`) with one site (`site_<tag>`) of `n` published articles,
 * `art_<tag>00`, `art_<tag>01`, ..., each titled and bodied by `article`.
 */
export const oneSiteOfArticles = (tag: string, n: number, article: (i: number) => { readonly title: string; readonly body: string }) => ({
  accounts: [
    {
      id: `acc_${tag}`,
      email: `${tag}@example.com`,
      password: `password-${tag}`,
      sites: [
        {
          id: `site_${tag}`,
          name: `Site ${tag}`,
          url: `https://${tag}.test`,
          articles: Array.from({ length: n }, (_, i) => ({
            id: `art_${tag}${String(i).padStart(2, "0")}`,
            url: `https://${tag}.test/${i}`,
            status: "published",
            published_at: "2026-11-01T09:00:00Z",
            ...article(i),
          })),
        },
      ],
    },
  ],
})
