import { Effect } from "effect"
import { InvalidRequest } from "../errors.ts"
import { countWords, sanitizeArticleHtml } from "../html/index.ts"
import { toTimestamp } from "../policy/time.ts"
import { DataImporter, type ImportPlan } from "../ports/DataImporter.ts"
import { Clock, Secrets } from "../ports/Platform.ts"
import type { AccountRecord, ApiKeyRecord, ArticleRecord, BacklinkRecord, RevisionRecord, SiteRecord } from "../ports/records.ts"
import { decodeInput } from "../schema/decode.ts"
import { ImportFile } from "../schema/importFile.ts"

/** A short stable hash (FNV-1a, 64 bit, base36) used to derive ids for entries that have none. */
export const stableId = (prefix: string, ...parts: ReadonlyArray<string>): string => {
  let h = 0xcbf29ce484222325n
  for (const ch of new TextEncoder().encode(parts.join("\u0000"))) {
    h ^= BigInt(ch)
    h = (h * 0x100000001b3n) & 0xffffffffffffffffn
  }
  return `${prefix}_${h.toString(36)}`
}

const bound = (s: string | null | undefined): string | null => {
  if (s === undefined || s === null) return null
  return toTimestamp(Date.parse(s.length === 10 ? `${s}T00:00:00Z` : s))
}

/**
 * Validates an import file (a bad entry is named by its JSON path and nothing is imported) and
 * writes it in one transaction, idempotent by id. Bodies are sanitised like the editor does and
 * word counts computed; every new article gets its first revision (origin `editor`).
 */
export const importData = (input: unknown) =>
  Effect.gen(function* () {
    const file = yield* decodeInput(ImportFile, input, "Import file")
    const secrets = yield* Secrets
    const now = toTimestamp(yield* (yield* Clock).now)
    const plan: { -readonly [K in keyof ImportPlan]: Array<ImportPlan[K][number]> } = {
      accounts: [],
      apiKeys: [],
      sites: [],
      articles: [],
      backlinks: [],
    }
    for (const [ai, a] of file.accounts.entries()) {
      const email = a.email.trim().toLowerCase()
      const accountId = a.id ?? stableId("acc", email)
      const account: AccountRecord = {
        id: accountId,
        email,
        name: a.name ?? email,
        password_hash: yield* secrets.hashPassword(a.password),
        created_at: now,
      }
      plan.accounts.push(account)
      for (const [ki, k] of (a.api_keys ?? []).entries()) {
        const plaintext = k.key ?? (yield* secrets.generateApiKey)
        const key: ApiKeyRecord = {
          id: k.id ?? stableId("key", accountId, String(ki), k.name),
          account_id: accountId,
          name: k.name,
          scope: k.scope,
          key_hash: yield* secrets.hashApiKey(plaintext),
          created_at: now,
          last_used_at: null,
          revoked_at: null,
        }
        plan.apiKeys.push(key)
      }
      for (const [si, s] of (a.sites ?? []).entries()) {
        const siteId = s.id ?? stableId("site", accountId, s.url)
        const site: SiteRecord = { id: siteId, account_id: accountId, name: s.name, url: s.url, created_at: now }
        plan.sites.push(site)
        for (const [ri, r] of (s.articles ?? []).entries()) {
          const articleId = r.id ?? stableId("art", siteId, r.url)
          const clean = yield* sanitizeArticleHtml(r.body).pipe(
            Effect.mapError(
              (e) =>
                new InvalidRequest({
                  detail: `Import file: accounts[${ai}].sites[${si}].articles[${ri}].body: ${e.detail}`,
                  errors: [{ path: `accounts[${ai}].sites[${si}].articles[${ri}].body`, message: e.detail }],
                }),
            ),
          )
          const image = r["featured image"]
          const featured = image ? { url: image.url, alt: image.alt ?? "" } : null
          const article: ArticleRecord = {
            id: articleId,
            account_id: accountId,
            site_id: siteId,
            title: r.title.trim(),
            url: r.url,
            status: r.status,
            published_at: bound(r.published_at),
            target_keyword: r["target keyword"] ?? "",
            word_count: countWords(clean.html),
            featured_image: featured,
            body: clean.html,
            updated_at: now,
            revision: 1,
          }
          const firstRevision: RevisionRecord = {
            id: stableId("rev", articleId, "1"),
            account_id: accountId,
            article_id: articleId,
            number: 1,
            origin: "editor",
            title: article.title,
            body: article.body,
            featured_image: featured,
            reason: "Imported",
            actor: { type: "system", id: "import", name: "Import" },
            restored_from: null,
            created_at: now,
          }
          plan.articles.push({ article, firstRevision })
        }
        for (const b of s.backlinks ?? []) {
          const backlink: BacklinkRecord = {
            id: b.id ?? stableId("bl", siteId, b.source_url, b.target_url, b.date_acquired),
            account_id: accountId,
            site_id: siteId,
            ...b,
          }
          plan.backlinks.push(backlink)
        }
      }
    }
    return yield* (yield* DataImporter).apply(plan)
  })
