import { MAX_BODY_BYTES, OAuthStore, type ProtectedBlockViolation, type StoredPayload, toStorableText } from "@content-site/core"
import type { HttpDeps } from "@content-site/http"
import { Option } from "effect"
import type { ParameterizedContext } from "koa"
import { createHash } from "node:crypto"
import { clientAddress, setCookie, token, type WebSession } from "@content-site/http"

/** The OAuthStore model unsaved edits are kept under. */
export const DRAFT_MODEL = "WebDraft"
/**
 * The cookie naming the edits that arrived after their session had expired: one random token per
 * edit kept, newest first, joined by `.` (at most MAX_DRAFTS), so that a second one (another tab,
 * another article) does not push the first out of the browser's reach.
 */
export const PENDING_DRAFT_COOKIE = "cs_draft"
/** How long an unsaved edit is kept. */
export const DRAFT_TTL_SECONDS = 24 * 60 * 60
/** Largest body a draft keeps (UTF-8 bytes): an article's own limit; a larger text is not kept. */
export const MAX_DRAFT_BODY_BYTES = MAX_BODY_BYTES
/** Drafts kept per session, and pending drafts per client address: a new one past it drops the oldest. */
export const MAX_DRAFTS = 5
/** The OAuthStore model of the lists of drafts kept per session or address (for the count cap). */
const DRAFT_INDEX_MODEL = "WebDraftIndex"

/** Why an edit was not saved, shown above the form it is offered back in. */
export interface EditRefusal {
  readonly message: string
  readonly blocks: ReadonlyArray<ProtectedBlockViolation>
  readonly details: ReadonlyArray<string>
  /** The revision the edit conflicts with: the draft is settled on the conflict page. */
  readonly conflictWith?: number
}

/** An edit that was not saved: what the person typed, and why it was refused. */
export interface Draft {
  readonly articleId: string
  readonly title: string
  readonly body: string
  readonly reason: string
  /** The revision the person started from (optimistic concurrency). */
  readonly revision: number
  readonly refusal: EditRefusal
  /** The editor's mode when it was sent ("source" reopens in HTML source). */
  readonly mode?: "visual" | "source"
  /** When a pending draft was kept (ms): only a session started after it takes it. */
  readonly keptAt?: number
  /**
   * What the person chose and typed on the conflict page against revision `theirs`, by unit
   * ("title", "body/0", ...), kept when that page's form could not be saved in its own session
   * (it expired, or the form is of an earlier sign-in): the conflict page shows them again.
   */
  readonly settling?: Settling
}

/** Choices and typed texts of a conflict page's form, by unit, against revision `theirs`. */
export interface Settling {
  readonly theirs: number
  readonly chosen: Readonly<Record<string, "theirs" | "mine" | "edit">>
  readonly typed: Readonly<Record<string, string>>
}

/** Most units a kept settling names: a forged form cannot make a draft of a million short fields. */
export const MAX_SETTLING_UNITS = 1000

const isDraft = (p: StoredPayload): boolean =>
  typeof p["articleId"] === "string" &&
  typeof p["title"] === "string" &&
  typeof p["body"] === "string" &&
  typeof p["reason"] === "string" &&
  typeof p["revision"] === "number" &&
  typeof p["refusal"] === "object" &&
  p["refusal"] !== null

/** A draft's store key: bound to the session, so another browser cannot read it by its id. */
const sessionKey = (session: WebSession, id: string): string => `${session.key}:${id}`
/** A pending draft's store key: a hash of the cookie value, which itself is never stored. */
const pendingKey = (cookieValue: string): string => `pending:${createHash("sha256").update(cookieValue).digest("base64url")}`

const DRAFT_ID = /^[A-Za-z0-9_-]{16,64}$/

const find = async (deps: HttpDeps, key: string): Promise<Draft | null> => {
  const found = await deps.runtime.runPromise(OAuthStore.use((store) => store.find(DRAFT_MODEL, key)))
  return Option.isSome(found) && isDraft(found.value) ? (found.value as unknown as Draft) : null
}

const put = (deps: HttpDeps, key: string, draft: Draft): Promise<void> =>
  deps.runtime.runPromise(OAuthStore.use((store) => store.upsert(DRAFT_MODEL, key, storable(draft) as unknown as StoredPayload, DRAFT_TTL_SECONDS)))

const drop = (deps: HttpDeps, key: string): Promise<void> => deps.runtime.runPromise(OAuthStore.use((store) => store.destroy(DRAFT_MODEL, key)))

/** Largest title and reason a draft keeps, together (UTF-8 bytes): far past their own limits (500 characters each). */
export const MAX_DRAFT_TEXT_BYTES = 16 * 1024

/**
 * Whether a draft is small enough to keep: its body at most MAX_DRAFT_BODY_BYTES, its title and
 * reason at most MAX_DRAFT_TEXT_BYTES, as they are stored (a NUL, one byte sent, is kept as
 * U+FFFD, three bytes).
 */
export const keepable = (draft: Draft): boolean =>
  storedBytes(draft.body) + settlingBytes(draft.settling) <= MAX_DRAFT_BODY_BYTES && storedBytes(draft.title) + storedBytes(draft.reason) <= MAX_DRAFT_TEXT_BYTES

/**
 * What a draft's settling adds to its body's bound: its typed texts and unit names (a choice is a
 * few bytes beside its unit); more than MAX_SETTLING_UNITS units are never kept.
 */
const settlingBytes = (settling: Settling | undefined): number => {
  if (settling === undefined) return 0
  const typed = Object.entries(settling.typed)
  if (typed.length > MAX_SETTLING_UNITS || Object.keys(settling.chosen).length > MAX_SETTLING_UNITS) return Number.POSITIVE_INFINITY
  let bytes = 0
  for (const [unit, text] of typed) bytes += unit.length + storedBytes(text)
  return bytes + Object.keys(settling.chosen).length * 16
}

/**
 * The UTF-8 bytes of `toStorableText(s)`, without making it (a body is up to 1 MiB): an unpaired
 * surrogate is already counted as U+FFFD's three bytes, a NUL as one, so two more for each NUL.
 * One pass for the length, one `indexOf` scan for the NULs.
 */
const storedBytes = (s: string): number => {
  let bytes = Buffer.byteLength(s)
  for (let at = s.indexOf("\u0000"); at !== -1; at = s.indexOf("\u0000", at + 1)) bytes += 2
  return bytes
}

/** What a kept draft's refusal holds at most: the blocks and details it lists, and the characters of each text. */
const REFUSAL_ITEMS = 20
const REFUSAL_TEXT = 300
const REFUSAL_MESSAGE = 2000

const cut = (s: string, n: number): string => toStorableText(s.length <= n ? s : `${s.slice(0, n)}…`)

/**
 * A draft as it is stored: its texts storable (the store is a JSON column: a NUL or a lone
 * surrogate becomes U+FFFD, so that an edit refused for holding one is kept all the same, the rest
 * of its text as typed), its refusal bounded (at most REFUSAL_ITEMS blocks and
 * details, REFUSAL_TEXT characters each, the message REFUSAL_MESSAGE): a refusal that names forged
 * links of 250 000 characters each is shown cut, not kept whole beside the body. So a draft is its
 * body with what was typed on the conflict page (at most 1 MiB together), its title and reason (at
 * most 16 KiB) and a refusal of at most about 25 KB.
 */
const storable = (draft: Draft): Draft => ({
  ...draft,
  title: toStorableText(draft.title),
  body: toStorableText(draft.body),
  reason: toStorableText(draft.reason),
  refusal: {
    ...draft.refusal,
    message: cut(draft.refusal.message, REFUSAL_MESSAGE),
    blocks: draft.refusal.blocks.slice(0, REFUSAL_ITEMS).map((b) => ({ kind: b.kind, href: b.href === null ? null : cut(b.href, REFUSAL_TEXT), text: cut(b.text, REFUSAL_TEXT) })),
    details: draft.refusal.details.slice(0, REFUSAL_ITEMS).map((d) => cut(d, REFUSAL_TEXT)),
  },
  ...(draft.settling === undefined
    ? {}
    : { settling: { ...draft.settling, typed: Object.fromEntries(Object.entries(draft.settling.typed).map(([unit, text]) => [unit, toStorableText(text)])) } }),
})

/**
 * Notes a kept draft in its owner's list (a session, or a client address) and drops the oldest
 * past MAX_DRAFTS, so one session or address holds at most MAX_DRAFTS drafts (each about 1 MiB at most) for a day.
 */
const listUnder = async (deps: HttpDeps, owner: string, key: string): Promise<void> => {
  const found = await deps.runtime.runPromise(OAuthStore.use((store) => store.find(DRAFT_INDEX_MODEL, owner)))
  const listed = Option.isSome(found) && Array.isArray(found.value["keys"]) ? (found.value["keys"] as Array<unknown>).filter((k): k is string => typeof k === "string") : []
  const keys = [...listed.filter((k) => k !== key), key]
  for (const old of keys.slice(0, Math.max(0, keys.length - MAX_DRAFTS))) await drop(deps, old)
  const kept = keys.slice(-MAX_DRAFTS)
  await deps.runtime.runPromise(OAuthStore.use((store) => store.upsert(DRAFT_INDEX_MODEL, owner, { keys: kept }, DRAFT_TTL_SECONDS)))
}

/**
 * Keeps a refused edit for this session; returns the id its page address carries (`?draft=`), or
 * null when its body is over 1 MiB (not kept). A session keeps at most MAX_DRAFTS, the oldest goes.
 */
export const keepDraft = async (deps: HttpDeps, session: WebSession, draft: Draft): Promise<string | null> => {
  if (!keepable(draft)) return null
  const id = token(18)
  await put(deps, sessionKey(session, id), draft)
  await listUnder(deps, `session:${session.key}`, sessionKey(session, id))
  return id
}

/** This session's draft of an article by id, or null (unknown, expired, another session's, another article's). */
export const findDraft = async (deps: HttpDeps, session: WebSession, articleId: string, id: string | undefined): Promise<Draft | null> => {
  if (id === undefined || !DRAFT_ID.test(id)) return null
  const draft = await find(deps, sessionKey(session, id))
  return draft !== null && draft.articleId === articleId ? draft : null
}

/** Forgets a draft once its text was saved. */
export const dropDraft = async (deps: HttpDeps, session: WebSession, id: string | undefined): Promise<void> => {
  if (id !== undefined && DRAFT_ID.test(id)) await drop(deps, sessionKey(session, id))
}

/**
 * Where the browser says a request came from: `Sec-Fetch-Site` (every current browser sends it),
 * else `Origin` against the public URL. Neither said: unknown (not a browser page of another site,
 * which sends one or the other with every cross-site POST: a script's, or a very old browser's).
 */
const sentFrom = (ctx: ParameterizedContext, deps: HttpDeps): "own page" | "another site" | "unknown" => {
  const site = ctx.get("Sec-Fetch-Site")
  if (site !== "") return site === "same-origin" ? "own page" : "another site"
  const origin = ctx.get("Origin")
  if (origin === "") return "unknown"
  return origin === new URL(deps.publicUrl).origin ? "own page" : "another site"
}

/** Whether a form was sent from a page of this service, as the browser tells; not known to be: no. */
export const sentFromOwnPage = (ctx: ParameterizedContext, deps: HttpDeps): boolean => sentFrom(ctx, deps) === "own page"

/**
 * Whether the browser says a request came from another site's page; a request that says neither
 * was sent by whoever holds the session, so no.
 */
export const sentFromAnotherSite = (ctx: ParameterizedContext, deps: HttpDeps): boolean => sentFrom(ctx, deps) === "another site"

/**
 * Keeps an edit that arrived without a live session, under a fresh cookie of this browser only,
 * until the person signs in again and it is offered back. Only an edit sent from this service's
 * own edit page is kept: without a session its form's CSRF token cannot be checked, and a form
 * another site sends (with no session cookie, SameSite) would otherwise be offered to the person
 * as their own text at their next sign-in. A body over 1 MiB is not kept, and a client address
 * keeps at most MAX_DRAFTS pending drafts (the oldest goes): a signed-out sender cannot fill the
 * store.
 */
export const keepPendingDraft = async (ctx: ParameterizedContext, deps: HttpDeps, draft: Draft): Promise<void> => {
  if (!sentFromOwnPage(ctx, deps) || !keepable(draft)) return
  const value = token()
  await put(deps, pendingKey(value), { ...draft, keptAt: Date.now() })
  await listUnder(deps, `address:${createHash("sha256").update(clientAddress(ctx)).digest("base64url")}`, pendingKey(value))
  setPendingTokens(ctx, deps, [value, ...pendingTokens(ctx)])
}

const PENDING_TOKEN = /^[A-Za-z0-9_-]{20,100}$/

/** The tokens of this browser's pending edits, newest first (malformed ones left out). */
const pendingTokens = (ctx: ParameterizedContext): Array<string> => {
  const value = ctx.cookies.get(PENDING_DRAFT_COOKIE, { signed: false })
  return value === undefined ? [] : [...new Set(value.split(".").filter((t) => PENDING_TOKEN.test(t)))].slice(0, MAX_DRAFTS)
}

/** Writes this browser's pending tokens (none: the cookie is cleared). */
const setPendingTokens = (ctx: ParameterizedContext, deps: HttpDeps, tokens: ReadonlyArray<string>): void =>
  tokens.length === 0 ? setCookie(ctx, deps, PENDING_DRAFT_COOKIE, "", 0) : setCookie(ctx, deps, PENDING_DRAFT_COOKIE, tokens.slice(0, MAX_DRAFTS).join("."), DRAFT_TTL_SECONDS)

/**
 * After sign-in: moves this browser's pending edit of the article into the session and returns
 * its draft id, or null when there is none for this article (another article's stays pending).
 */
export const adoptPendingDraft = async (ctx: ParameterizedContext, deps: HttpDeps, session: WebSession, articleId: string): Promise<string | null> => {
  const tokens = pendingTokens(ctx)
  if (tokens.length === 0) return null
  const left: Array<string> = []
  let adopted: string | null = null
  for (const value of tokens) {
    const draft = await find(deps, pendingKey(value))
    // gone (taken, past its day, or the oldest of its address's): the token goes too
    if (draft === null) continue
    if (adopted !== null || draft.articleId !== articleId) {
      left.push(value)
      continue
    }
    // Only a sign-in after the edit was kept takes it: a session that was alive all along did not
    // send it (a cross-site form, which carries no session cookie, cannot plant text in an editor).
    if (typeof draft.keptAt !== "number" || session.createdAt < draft.keptAt) {
      await drop(deps, pendingKey(value))
      continue
    }
    const { keptAt: _, ...kept } = draft
    adopted = await keepDraft(deps, session, kept)
    await drop(deps, pendingKey(value))
  }
  if (left.length !== tokens.length) setPendingTokens(ctx, deps, left)
  return adopted
}
