import { Effect, Option } from "effect"
import { InvalidRequest } from "../errors.ts"
import { countWords, sanitizeArticleHtml } from "../html/index.ts"
import { toTimestamp } from "../policy/time.ts"
import { DataImporter, type ImportedKind, type ImportPlan } from "../ports/DataImporter.ts"
import { Clock, Secrets } from "../ports/Platform.ts"
import { AccountRepository, ApiKeyRepository } from "../ports/Repositories.ts"
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

/** An import refused for one entry, named by its JSON path. */
const refuse = (path: string, message: string): InvalidRequest =>
  new InvalidRequest({ detail: `Import file: ${path}: ${message}`, errors: [{ path, message }] })

/**
 * Refuses a plan the store would write only in part: an id used twice in the file (the second
 * entry would be skipped as "already present"), an account whose email another account has
 * (its row would be skipped while its keys, sites and articles were written for an account that
 * does not exist, and its key would work), an account whose id another email has (its keys and
 * sites would be written into that account), and a known plaintext `key` that another key holds,
 * in the file or stored (keys are unique by hash: the new key would be skipped, and the
 * plaintext would keep opening the other key's account). Named by the path of the entry at fault.
 * Answers the ids of the file's accounts that are stored already (same id, same email).
 */
const checkPlan = (plan: ImportPlan, paths: ReadonlyMap<object, string>, knownKeys: ReadonlyArray<ApiKeyRecord>) =>
  Effect.gen(function* () {
    const seen = new Map<string, string>()
    const once = (kind: string, id: string, path: string) => {
      const key = `${kind}\u0000${id}`
      if (seen.has(key)) return refuse(path, `the ${kind} id '${id}' is used twice in the file (first at ${seen.get(key)})`)
      seen.set(key, path)
      return null
    }
    const rows: ReadonlyArray<readonly [string, ReadonlyArray<{ readonly id: string }>, string]> = [
      ["account", plan.accounts, "id"],
      ["account email", plan.accounts.map((a) => ({ id: a.email, at: a })), "email"],
      ["API key", plan.apiKeys, "id"],
      ["site", plan.sites, "id"],
      ["article", plan.articles.map((x) => x.article), "id"],
      ["backlink", plan.backlinks, "id"],
    ]
    for (const [kind, list, field] of rows) {
      for (const row of list) {
        const at = (row as { at?: object }).at ?? row
        const refused = once(kind, row.id, `${paths.get(at) ?? "?"}/${field}`)
        if (refused !== null) return yield* Effect.fail(refused)
      }
    }
    // An id stored already under another account: the entry would be skipped while what it
    // holds (a site's articles, say) was written into that account's site or beside its rows.
    const importer = yield* DataImporter
    const kinds: ReadonlyArray<readonly [ImportedKind, ReadonlyArray<{ readonly id: string; readonly account_id: string }>, string]> = [
      ["apiKeys", plan.apiKeys, "API key"],
      ["sites", plan.sites, "site"],
      ["articles", plan.articles.map((x) => x.article), "article"],
      ["backlinks", plan.backlinks, "backlink"],
    ]
    for (const [kind, list, name] of kinds) {
      const stored = new Map((yield* importer.owners(kind, list.map((x) => x.id))).map((o) => [o.id, o.accountId] as const))
      const taken = list.find((x) => stored.has(x.id) && stored.get(x.id) !== x.account_id)
      if (taken !== undefined) return yield* Effect.fail(refuse(`${paths.get(taken) ?? "?"}/id`, `the ${name} id '${taken.id}' belongs to another account already`))
    }
    // One lookup per key whose plaintext the file sets (a loop over the file's keys, no more).
    const keyAt = new Map<string, ApiKeyRecord>()
    const storedKeys = yield* ApiKeyRepository
    for (const k of knownKeys) {
      const path = `${paths.get(k) ?? "?"}/key`
      const first = keyAt.get(k.key_hash)
      if (first !== undefined) return yield* Effect.fail(refuse(path, `the same key is set for the API key at ${paths.get(first) ?? "?"}; every key must be different`))
      keyAt.set(k.key_hash, k)
      const stored = yield* storedKeys.findByHash(k.key_hash)
      if (Option.isSome(stored) && stored.value.id !== k.id) {
        return yield* Effect.fail(refuse(path, `this key is stored already as the API key '${stored.value.id}'; every key must be different`))
      }
    }
    const accounts = yield* AccountRepository
    const storedAccounts = new Set<string>()
    for (const a of plan.accounts) {
      const found = yield* accounts.findByEmail(a.email)
      if (Option.isSome(found) && found.value.id !== a.id) {
        return yield* Effect.fail(refuse(`${paths.get(a) ?? "?"}/email`, `the email ${a.email} belongs to another account already (${found.value.id})`))
      }
      // An id stored already under another email: the entry would be skipped while its keys
      // (a known plaintext among them) and sites were written into that other account.
      const byId = yield* accounts.get(a.id).pipe(Effect.map(Option.some), Effect.catchTag("NotFound", () => Effect.succeed(Option.none<AccountRecord>())))
      if (Option.isSome(byId) && byId.value.email !== a.email) {
        return yield* Effect.fail(refuse(`${paths.get(a) ?? "?"}/id`, `the account id '${a.id}' belongs to another account already (${byId.value.email})`))
      }
      if (Option.isSome(byId)) storedAccounts.add(a.id)
    }
    return storedAccounts
  })

/**
 * The password hash planned for an account that is stored already: its row is left as it is
 * (accounts are never deleted), so its password is not hashed again. A memory-hard hash for each
 * account made a second import of a file as slow as the first while it wrote nothing. (Verifying
 * the stored hash instead would cost as much as hashing.) No password verifies this value.
 */
const NOT_HASHED = "!stored"

type ImportPlanDraft = { -readonly [K in keyof ImportPlan]: Array<ImportPlan[K][number]> }

/** An import file checked on its own and turned into the rows it writes (`prepareImport`), for `writeImport`. */
export interface PreparedImport {
  readonly plan: ImportPlan
  /** Where each entry of the plan came from in the file, to name it when it is refused. */
  readonly paths: ReadonlyMap<object, string>
  /** The keys whose plaintext the file sets. */
  readonly knownKeys: ReadonlyArray<ApiKeyRecord>
  /** The keys whose plaintext the service made, with the email of their account. */
  readonly madeKeys: ReadonlyArray<{ readonly record: ApiKeyRecord; readonly email: string; readonly plaintext: string }>
  /** Each account's password, hashed only if the account is not stored yet. */
  readonly passwords: ReadonlyMap<AccountRecord, string>
}

/**
 * Validates a whole import file without the database (a bad entry is named by its JSON path):
 * its shape and bounds, its bodies (sanitised as the editor does, word counts computed), and
 * makes its rows; every new article gets its first revision (origin `editor`). The admin command
 * line runs it before it opens (and so migrates) the database: a refused file touches nothing.
 */
export const prepareImport = (input: unknown) =>
  Effect.gen(function* () {
    const file = yield* decodeInput(ImportFile, input, "Import file")
    const secrets = yield* Secrets
    const now = toTimestamp(yield* (yield* Clock).now)
    // Where each entry of the plan came from in the file, to name it when it is refused.
    const paths = new Map<object, string>()
    const plan: ImportPlanDraft = {
      accounts: [],
      apiKeys: [],
      sites: [],
      articles: [],
      backlinks: [],
    }
    // Each account's password, hashed only for the accounts not stored yet.
    const passwords = new Map<AccountRecord, string>()
    // The keys whose plaintext the file sets, to check none is another key's.
    const knownKeys: Array<ApiKeyRecord> = []
    // The keys whose plaintext the service makes: shown once, as `key create` shows one.
    const madeKeys: Array<{ readonly record: ApiKeyRecord; readonly email: string; readonly plaintext: string }> = []
    for (const [ai, a] of file.accounts.entries()) {
      const email = a.email.trim().toLowerCase()
      const accountId = a.id ?? stableId("acc", email)
      const account: AccountRecord = {
        id: accountId,
        email,
        // (trimmed, a blank one is none, as account create and the API's key creation take them)
        name: a.name?.trim() || email,
        // hashed once the stored accounts are known: only a new account's is (see NOT_HASHED)
        password_hash: NOT_HASHED,
        created_at: now,
      }
      plan.accounts.push(account)
      passwords.set(account, a.password)
      paths.set(account, `accounts/${ai}`)
      for (const [ki, k] of (a.api_keys ?? []).entries()) {
        const plaintext = k.key ?? (yield* secrets.generateApiKey)
        const key: ApiKeyRecord = {
          id: k.id ?? stableId("key", accountId, String(ki), k.name),
          account_id: accountId,
          name: k.name.trim() || "API key",
          scope: k.scope,
          key_hash: yield* secrets.hashApiKey(plaintext),
          created_at: now,
          last_used_at: null,
          revoked_at: null,
        }
        plan.apiKeys.push(key)
        paths.set(key, `accounts/${ai}/api_keys/${ki}`)
        if (k.key !== undefined) knownKeys.push(key)
        else madeKeys.push({ record: key, email, plaintext })
      }
      for (const [si, s] of (a.sites ?? []).entries()) {
        const siteId = s.id ?? stableId("site", accountId, s.url)
        const site: SiteRecord = { id: siteId, account_id: accountId, name: s.name, url: s.url, created_at: now }
        plan.sites.push(site)
        paths.set(site, `accounts/${ai}/sites/${si}`)
        for (const [ri, r] of (s.articles ?? []).entries()) {
          const articleId = r.id ?? stableId("art", siteId, r.url)
          const clean = yield* sanitizeArticleHtml(r.body).pipe(
            Effect.mapError(
              (e) =>
                new InvalidRequest({
                  detail: `Import file: accounts/${ai}/sites/${si}/articles/${ri}/body: ${e.detail}`,
                  errors: [{ path: `accounts/${ai}/sites/${si}/articles/${ri}/body`, message: e.detail }],
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
          paths.set(article, `accounts/${ai}/sites/${si}/articles/${ri}`)
        }
        for (const [bi, b] of (s.backlinks ?? []).entries()) {
          const backlink: BacklinkRecord = {
            id: b.id ?? stableId("bl", siteId, b.source_url, b.target_url, b.date_acquired),
            account_id: accountId,
            site_id: siteId,
            ...b,
          }
          plan.backlinks.push(backlink)
          paths.set(backlink, `accounts/${ai}/sites/${si}/backlinks/${bi}`)
        }
      }
    }
    const prepared: PreparedImport = { plan, paths, knownKeys, madeKeys, passwords }
    return prepared
  })

/**
 * Writes a prepared import in one transaction, idempotent by id, after checking it against the
 * stored rows (ids and emails of other accounts, keys stored already), all while no other import
 * runs. Only a new account's password is hashed.
 */
export const writeImport = (prepared: PreparedImport) =>
  Effect.gen(function* () {
    const importer = yield* DataImporter
    // The checks against the stored rows and the writes as one step: another import at the same
    // moment (another process) waits, so an id found free here is still free when written.
    return yield* importer.exclusive(writeWhileExclusive(prepared))
  })

/**
 * `writeImport` into a database that holds no account yet (the demo data), or null when it holds
 * one: asked while no other import runs, so an import another process makes at the same moment
 * (`admin import` beside a first start) is either seen here or waits for this one, and an
 * operator's accounts never sit beside an account of a known sign-in.
 */
export const writeImportIntoEmpty = (prepared: PreparedImport) =>
  Effect.gen(function* () {
    const importer = yield* DataImporter
    const accounts = yield* AccountRepository
    return yield* importer.exclusive(Effect.flatMap(accounts.hasAny, (any) => (any ? Effect.succeed(null) : writeWhileExclusive(prepared))))
  })

/** The checks and writes of `writeImport`, the caller holding the import lock. */
const writeWhileExclusive = ({ plan, paths, knownKeys, madeKeys, passwords }: PreparedImport) =>
  Effect.gen(function* () {
    const secrets = yield* Secrets
    const importer = yield* DataImporter
    const storedAccounts = yield* checkPlan(plan, paths, knownKeys)
    // (one hash a new account, as many as the file has: an import of new accounts waits for no more)
    const accounts: Array<AccountRecord> = []
    for (const a of plan.accounts) {
      accounts.push(storedAccounts.has(a.id) ? a : { ...a, password_hash: yield* secrets.hashPassword(passwords.get(a)!) })
    }
    // A made key whose id is stored already is left unchanged (its plaintext is the one made
    // when it was first imported): only the keys written now are shown.
    const stored = new Set((yield* importer.owners("apiKeys", madeKeys.map((k) => k.record.id))).map((o) => o.id))
    const summary = yield* importer.apply({ ...plan, accounts })
    const newKeys: ReadonlyArray<ImportedKey> = madeKeys
      .filter((k) => !stored.has(k.record.id))
      .map((k) => ({ id: k.record.id, account: k.email, name: k.record.name, scope: k.record.scope, key: k.plaintext }))
    return { ...summary, newKeys }
  })

/**
 * Validates an import file (a bad entry is named by its JSON path and nothing is imported) and
 * writes it in one transaction, idempotent by id: `prepareImport`, then `writeImport`.
 */
export const importData = (input: unknown) => Effect.flatMap(prepareImport(input), writeImport)

/** An API key an import made (the file set no `key`): its plaintext, shown only once. */
export interface ImportedKey {
  readonly id: string
  /** The email of its account. */
  readonly account: string
  readonly name: string
  readonly scope: ApiKeyRecord["scope"]
  readonly key: string
}
