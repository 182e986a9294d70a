import { LimitStore, MAX_BODY_BYTES, OAuthStore, type ProtectedBlockViolation, type StoredPayload, toStorableText } from "@content-site/core"
import type { HttpDeps } from "@content-site/http"
import { Option } from "effect"
import type { ParameterizedContext } from "koa"
import { createHash } from "node:crypto"
import { clientAddress, setCookie, token, type WebSession } from "@content-site/http"

/** The OAuthStore model unsaved edits are kept under. */
export const DRAFT_MODEL = "WebDraft"
/**
 * The cookie naming the edits that arrived after their session had expired: one token per edit
 * kept (its slot, its address's tag and a random secret), newest first, joined by `.` (at most
 * MAX_DRAFTS), so that a second one (another tab, another article) does not push the first out of
 * the browser's reach.
 */
export const PENDING_DRAFT_COOKIE = "cs_draft"
/** How long an unsaved edit is kept. */
export const DRAFT_TTL_SECONDS = 24 * 60 * 60
/** Largest body a draft keeps (UTF-8 bytes): an article's own limit; a larger text is not kept. */
export const MAX_DRAFT_BODY_BYTES = MAX_BODY_BYTES
/**
 * Drafts kept per session, and pending drafts per client address: a new one past it takes the
 * oldest's place. (At most 10: a slot is one digit of a draft's id.)
 */
export const MAX_DRAFTS = 5

/**
 * The hidden field of the edit form and the conflict page's form naming the account the page was
 * made for: a form posted after another account signed in on the same browser is told by it.
 */
export const FORM_ACCOUNT = "account"

/** Why an edit was not saved, shown above the form it is offered back in. */
export interface EditRefusal {
  readonly message: string
  readonly blocks: ReadonlyArray<ProtectedBlockViolation>
  readonly details: ReadonlyArray<string>
  /** The revision the edit conflicts with: the draft is settled on the conflict page. */
  readonly conflictWith?: number
  /** The database did not answer: the edit may or may not have been saved, so it is not headed "Not saved". */
  readonly uncertain?: true
}

/**
 * How a refused edit is headed: its notice and the start of the page's title. "Not saved" unless
 * the database did not answer (`uncertain`): then the edit may have been saved, "Not confirmed".
 */
export const refusalHeading = (refusal: Pick<EditRefusal, "uncertain"> | null): { readonly notice: string; readonly title: string } =>
  refusal?.uncertain === true ? { notice: "Not confirmed.", title: "Not confirmed: " } : { notice: "Not saved.", title: "Not saved: " }

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

const hashOf = (s: string): string => createHash("sha256").update(s).digest("base64url")

/*
 * Each owner (a session, or a client address for pending drafts) has MAX_DRAFTS slots: a draft is
 * stored under `<owner>:<slot>`, so an owner never holds more than MAX_DRAFTS rows, however many
 * requests keep drafts at once and on however many instances (no list to read, change and write
 * back, whose concurrent writers lose each other's keys). A new draft's slot comes from a counter
 * every instance shares (`LimitStore.hit`, atomic): the next one, which holds the oldest draft, is
 * overwritten. The draft keeps a hash of a random secret that its id (or pending token) carries,
 * so that an overwritten draft's old address finds nothing rather than the draft now in its slot.
 */

/** A stored draft: the draft, and the hash of the secret its id or token carries. */
type Stored = Draft & { readonly secret: string }

/**
 * The counter's limit: no owner keeps this many drafts in a day, so its `remaining` tells the
 * count. (Past it, every draft goes to the first slot: the bound still holds.)
 */
const SLOT_COUNTER_LIMIT = 1_000_000_000

/**
 * The slot of an owner's next draft: the owner's drafts counted in a shared window of a day,
 * modulo MAX_DRAFTS. On one instance the slots go round in order (the oldest goes first); the
 * PostgreSQL counter leases counts to each instance in batches, so drafts kept side by side on two
 * instances may overwrite one a little newer than the oldest. Never more than MAX_DRAFTS a day.
 */
const slotOf = async (deps: HttpDeps, owner: string): Promise<number> => {
  const verdict = await deps.runtime.runPromise(LimitStore.use((limits) => limits.hit(`drafts:${owner}`, SLOT_COUNTER_LIMIT, DRAFT_TTL_SECONDS)))
  return verdict.allowed ? (SLOT_COUNTER_LIMIT - verdict.remaining - 1) % MAX_DRAFTS : 0
}

/** A session draft's id: its slot (one digit) and its secret. */
const DRAFT_ID = /^([0-9])([A-Za-z0-9_-]{24})$/

/**
 * A session draft's store key and secret from its id, or null (malformed, or not a slot): bound
 * to the session, so another browser cannot read it by its id.
 */
const sessionDraftOf = (session: WebSession, id: string | undefined): { key: string; secret: string } | null => {
  const m = id === undefined ? null : DRAFT_ID.exec(id)
  return m === null || Number(m[1]) >= MAX_DRAFTS ? null : { key: `${session.key}:${m[1]}`, secret: m[2]! }
}

/** The draft stored under `key` if its secret is `secret` (an overwritten draft's is not), or null. */
const find = async (deps: HttpDeps, key: string, secret: string): Promise<Draft | null> => {
  const found = await deps.runtime.runPromise(OAuthStore.use((store) => store.find(DRAFT_MODEL, key)))
  return Option.isNone(found) ? null : draftOf(found.value, secret)
}

/** A stored payload as the draft of `secret`, or null (not a draft, or another secret's). */
const draftOf = (payload: StoredPayload, secret: string): Draft | null => {
  if (!isDraft(payload) || payload["secret"] !== hashOf(secret)) return null
  const { secret: _, ...draft } = payload as unknown as Stored
  return draft
}

const put = (deps: HttpDeps, key: string, secret: string, draft: Draft): Promise<void> => {
  const stored: Stored = { ...storable(draft), secret: hashOf(secret) }
  return deps.runtime.runPromise(OAuthStore.use((store) => store.upsert(DRAFT_MODEL, key, stored as unknown as StoredPayload, DRAFT_TTL_SECONDS)))
}

/**
 * Takes the draft under `key` if it is still the one of `secret`: deleted and answered in one
 * statement (a delete ... returning, conditional on its secret's hash), so that of two calls taking
 * it at once (two tabs, two instances) exactly one gets it, the other null. The draft of an old
 * address, whose slot now holds a newer draft, is gone already, and the newer one stays.
 */
const take = async (deps: HttpDeps, key: string, secret: string): Promise<Draft | null> => {
  const taken = await deps.runtime.runPromise(OAuthStore.use((store) => store.take(DRAFT_MODEL, key, { secret: hashOf(secret) })))
  return Option.isNone(taken) ? null : draftOf(taken.value, secret)
}

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
 * Keeps a refused edit for this session; returns the id its page address carries (`?draft=`), or
 * null when its body is over 1 MiB (not kept). A session keeps at most MAX_DRAFTS (slots), a new
 * one takes the oldest's place.
 */
export const keepDraft = async (deps: HttpDeps, session: WebSession, draft: Draft): Promise<string | null> => {
  if (!keepable(draft)) return null
  const slot = await slotOf(deps, `session:${session.key}`)
  const secret = token(18)
  await put(deps, `${session.key}:${slot}`, secret, draft)
  return `${slot}${secret}`
}

/** This session's draft of an article by id, or null (unknown, expired, overwritten, another session's, another article's). */
export const findDraft = async (deps: HttpDeps, session: WebSession, articleId: string, id: string | undefined): Promise<Draft | null> => {
  const at = sessionDraftOf(session, id)
  if (at === null) return null
  const draft = await find(deps, at.key, at.secret)
  return draft !== null && draft.articleId === articleId ? draft : null
}

/**
 * Forgets a draft once its text was saved (a newer draft in its slot stays), in one statement:
 * true when this call removed it, false when it was gone already (another request dropped it at
 * the same moment, it expired, or its slot holds a newer draft).
 */
export const dropDraft = async (deps: HttpDeps, session: WebSession, id: string | undefined): Promise<boolean> => {
  const at = sessionDraftOf(session, id)
  return at !== null && (await take(deps, at.key, at.secret)) !== null
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
  const address = hashOf(clientAddress(ctx))
  const slot = await slotOf(deps, `address:${address}`)
  const secret = token(24)
  await put(deps, `pending:${address}:${slot}`, secret, { ...draft, keptAt: Date.now() })
  setPendingTokens(ctx, deps, [`${slot}${address}${secret}`, ...pendingTokens(ctx)])
}

/**
 * A pending draft's token: its slot (one digit), the hash of the client address it was kept for
 * (43 characters: the draft is found again from another address after sign-in) and its secret.
 */
const PENDING_TOKEN = /^([0-9])([A-Za-z0-9_-]{43})([A-Za-z0-9_-]{32})$/

/** A pending draft's store key and secret from its token, or null (malformed, or not a slot). */
const pendingDraftOf = (value: string): { key: string; secret: string } | null => {
  const m = PENDING_TOKEN.exec(value)
  return m === null || Number(m[1]) >= MAX_DRAFTS ? null : { key: `pending:${m[2]}:${m[1]}`, secret: m[3]! }
}

/**
 * The pending draft of a `cs_draft` token, or null (malformed, taken, past its day, or its slot
 * taken by a newer pending draft of its address).
 */
export const findPendingDraft = async (deps: HttpDeps, value: string): Promise<Draft | null> => {
  const at = pendingDraftOf(value)
  return at === null ? null : find(deps, at.key, at.secret)
}

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
 * `isCallers` says whether the article is the signed-in account's, asked only when a pending edit
 * of it is found: one of another account's article (the person signed in with another account on
 * this browser) stays pending for its own account's next sign-in.
 */
export const adoptPendingDraft = async (
  ctx: ParameterizedContext,
  deps: HttpDeps,
  session: WebSession,
  articleId: string,
  isCallers: () => Promise<boolean>,
): Promise<string | null> => {
  const tokens = pendingTokens(ctx)
  if (tokens.length === 0) return null
  const left: Array<string> = []
  let adopted: string | null = null
  let callers: boolean | undefined
  // (at most MAX_DRAFTS tokens)
  for (const value of tokens) {
    const at = pendingDraftOf(value)
    const draft = at === null ? null : await find(deps, at.key, at.secret)
    // gone (taken, past its day, or the oldest of its address's): the token goes too
    if (at === null || draft === null) continue
    if (adopted !== null || draft.articleId !== articleId || !(callers ??= await isCallers())) {
      left.push(value)
      continue
    }
    // Only a sign-in after the edit was kept takes it: a session that was alive all along did not
    // send it (a cross-site form, which carries no session cookie, cannot plant text in an editor).
    if (typeof draft.keptAt !== "number" || session.createdAt < draft.keptAt) {
      await take(deps, at.key, at.secret)
      continue
    }
    // Copied into this session first, then taken from the pending ones in one step (deleted and
    // read): of two sign-ins adopting it at once (two tabs, two instances) one takes it, and the
    // other drops its copy, as if it had been taken before. A store failing between the two steps
    // leaves it pending (and maybe copied), never lost.
    const { keptAt: _, ...kept } = draft
    const copy = await keepDraft(deps, session, kept)
    if ((await take(deps, at.key, at.secret)) === null) {
      await dropDraft(deps, session, copy ?? undefined)
      continue
    }
    adopted = copy
  }
  if (left.length !== tokens.length) setPendingTokens(ctx, deps, left)
  return adopted
}
