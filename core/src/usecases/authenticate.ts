import { Context, Effect, Option } from "effect"
import { RateLimited, Unauthenticated, type Unavailable } from "../errors.ts"
import { toTimestamp } from "../policy/time.ts"
import { LimitStore } from "../ports/LimitStore.ts"
import { Clock, Secrets, Settings } from "../ports/Platform.ts"
import { AccountRepository, ApiKeyRepository } from "../ports/Repositories.ts"
import type { ApiKeyRecord } from "../ports/records.ts"
import { API_KEY_PATTERN, type Actor, type KeyScope } from "../schema/common.ts"
import { decodeInput } from "../schema/decode.ts"
import { SignInEmail } from "../schema/writes.ts"

/** An authenticated principal: the account and who acts for it. */
export interface Principal {
  readonly accountId: string
  readonly actor: Actor
  readonly scope: KeyScope
}


const FAILURE_WINDOW_SECONDS = 60

const failureKey = (clientAddress: string) => `authfail:${clientAddress}`

/**
 * Refuses a client address that failed authentication too often in the last minute (every
 * authenticated call asks: a chain, not a generator).
 */
export const checkAuthFailureBudget = (clientAddress: string) =>
  Effect.contextWith((services: Context.Context<Settings | LimitStore>) => failureBudget(services, clientAddress))

const failureBudget = (services: Context.Context<Settings | LimitStore>, clientAddress: string) => {
  const { limits } = Context.get(services, Settings)
  return Effect.flatMap(
    Context.get(services, LimitStore).peek(failureKey(clientAddress), limits.authFailuresPerMinute, FAILURE_WINDOW_SECONDS),
    (verdict): Effect.Effect<void, RateLimited> =>
      verdict.remaining <= 0 ? Effect.fail(overBudget(limits.authFailuresPerMinute, verdict.resetSeconds)) : Effect.void,
  )
}

const overBudget = (limit: number, retryAfterSeconds: number) =>
  new RateLimited({ limit, retryAfterSeconds, counted: "failed authentications from this address in a minute" })

/**
 * Counts one authentication failure against a client address; fails with RateLimited when that
 * failure is past the budget. The budget is read before a credential is checked, so requests of a
 * concurrent burst all find it open; the count they then add is atomic (`hit`), and only the
 * failures it admits are answered as such: the rest are refused for the budget, so no more than
 * the budget of answers a minute say whether a credential was right.
 */
export const recordAuthFailure = (clientAddress: string) =>
  Effect.contextWith((services: Context.Context<Settings | LimitStore>) => {
    const { limits } = Context.get(services, Settings)
    return Effect.flatMap(
      Context.get(services, LimitStore).hit(failureKey(clientAddress), limits.authFailuresPerMinute, FAILURE_WINDOW_SECONDS),
      (verdict): Effect.Effect<void, RateLimited> => (verdict.allowed ? Effect.void : Effect.fail(overBudget(limits.authFailuresPerMinute, verdict.resetSeconds))),
    )
  })

/**
 * Authenticates an API key presented by a client: missing, malformed, unknown and revoked keys
 * are all Unauthenticated, and each failure counts against the client's address so keys cannot
 * be guessed at speed.
 *
 * Every authenticated call runs this, so it is written as a chain of the ports' effects rather
 * than a generator (half the cost per call); the steps are, in order: the address's failure
 * budget, the key's shape, its hash looked up, revocation, `last_used_at` at most once a minute.
 */
export const authenticateApiKey = (presented: string | undefined, clientAddress: string) =>
  Effect.contextWith((services: Context.Context<Settings | LimitStore | Secrets | ApiKeyRepository | Clock>) => {
    const fail = (detail: string) => Effect.flatMap(recordAuthFailure(clientAddress), () => Effect.fail(new Unauthenticated({ detail })))
    type Outcome = Effect.Effect<Principal, RateLimited | Unauthenticated | Unavailable, Settings | LimitStore>
    return Effect.flatMap(failureBudget(services, clientAddress), (): Outcome => {
      if (presented === undefined || presented === "") {
        return fail("Send your API key as 'Authorization: Bearer <key>' or 'X-API-Key: <key>'.")
      }
      if (!API_KEY_PATTERN.test(presented)) return fail("The API key is not valid.")
      const keys = Context.get(services, ApiKeyRepository)
      return Effect.flatMap(Effect.flatMap(Context.get(services, Secrets).hashApiKey(presented), keys.findByHash), (found) => {
        if (Option.isNone(found) || found.value.revoked_at !== null) return fail("The API key is not valid or was revoked.")
        const key = found.value
        const principal = principalOf(key)
        return Effect.flatMap(Context.get(services, Clock).now, (now) =>
          key.last_used_at === null || now - Date.parse(key.last_used_at) > 60_000
            ? Effect.as(keys.touch(key.id, toTimestamp(now)), principal)
            : Effect.succeed(principal),
        )
      })
    })
  })

const principalOf = (key: ApiKeyRecord): Principal => ({
  accountId: key.account_id,
  actor: { type: "api_key", id: key.id, name: key.name },
  scope: key.scope,
})

/**
 * Whom a presented API key speaks for, if it is a live key: nothing is counted or touched. A
 * call refused by its address's failure budget is refused whatever key it carries (or guessing
 * would go on behind the budget), with the same answer; this only lets such a refusal still be
 * logged on the account of a live key (the contract: a call refused for a limit is logged).
 */
export const principalOfApiKey = (presented: string | undefined) =>
  presented === undefined || !API_KEY_PATTERN.test(presented)
    ? Effect.succeed(Option.none<Principal>())
    : Effect.flatMap(
        Effect.flatMap(Secrets.use((secrets) => secrets.hashApiKey(presented)), (hash) => ApiKeyRepository.use((keys) => keys.findByHash(hash))),
        (found) => Effect.succeed(Option.map(Option.filter(found, (key) => key.revoked_at === null), principalOf)),
      )

/**
 * Resolves the account behind an OAuth access token's subject for an MCP client; `scope` is what
 * the owner allowed (read-only connections may not write).
 */
export const resolveOAuthPrincipal = (accountId: string, client: { readonly id: string; readonly name: string }, scope: KeyScope) =>
  // every MCP call runs this: a chain, not a generator
  AccountRepository.use((accounts) =>
    accounts.get(accountId).pipe(
      Effect.map((account): Principal => ({ accountId: account.id, actor: { type: "oauth_client", id: client.id, name: client.name }, scope })),
      Effect.catchTag("NotFound", () => Effect.fail(new Unauthenticated({ detail: "The account of this token no longer exists." }))),
    ),
  )

/**
 * Checks an email and password; any mismatch is the same Unauthenticated, and an unknown email
 * costs a password hash like a known one. An email PostgreSQL cannot hold is InvalidRequest.
 */
export const verifyCredentials = (email: string, password: string, clientAddress: string) =>
  Effect.gen(function* () {
    const typed = yield* decodeInput(SignInEmail, email, "Sign-in", "email")
    yield* checkAuthFailureBudget(clientAddress)
    const secrets = yield* Secrets
    const found = yield* (yield* AccountRepository).findByEmail(typed.trim().toLowerCase())
    // An unknown email costs one password hash too (the same function and parameters that made the
    // stored hashes), so how long the answer takes does not tell which emails have an account.
    const ok = Option.isSome(found)
      ? yield* secrets.verifyPassword(password, found.value.password_hash)
      : yield* Effect.as(secrets.hashPassword(password), false)
    if (!ok || Option.isNone(found)) {
      yield* recordAuthFailure(clientAddress)
      return yield* new Unauthenticated({
        detail: "Wrong email or password.",
        ...(Option.isSome(found) ? { attemptedAccountId: found.value.id } : {}),
      })
    }
    return found.value
  })

/** The signed-in user as a principal for the web pages (the editor). */
export const userPrincipal = (account: { readonly id: string; readonly name: string; readonly email: string }): Principal => ({
  accountId: account.id,
  actor: { type: "user", id: account.id, name: account.name || account.email },
  scope: "write",
})

