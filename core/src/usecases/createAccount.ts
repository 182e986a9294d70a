import { Effect, Option } from "effect"
import { InvalidRequest, type Unavailable } from "../errors.ts"
import { toTimestamp } from "../policy/time.ts"
import { Clock, Ids, Secrets } from "../ports/Platform.ts"
import { AccountRepository } from "../ports/Repositories.ts"
import type { AccountRecord } from "../ports/records.ts"
import { decodeInput } from "../schema/decode.ts"
import { characterCount } from "../schema/common.ts"
import { MIN_PASSWORD_CHARACTERS, NewAccount } from "../schema/writes.ts"

/** Creates an account with a hashed password; an email already in use is refused. */
export const createAccount = (input: { readonly email: string; readonly password: string; readonly name?: string; readonly id?: string }) =>
  Effect.gen(function* () {
    yield* decodeInput(NewAccount, input, "Account")
    const email = input.email.trim().toLowerCase()
    if (!/^[^\s@]+@[^\s@]+$/.test(email)) {
      return yield* new InvalidRequest({ detail: "Not an email address.", errors: [{ path: "email", message: "Expected an email address" }] })
    }
    // (counted in characters, as every length of the contract: four emoji are four, not eight)
    if (characterCount(input.password) < MIN_PASSWORD_CHARACTERS) {
      return yield* new InvalidRequest({ detail: `The password needs at least ${MIN_PASSWORD_CHARACTERS} characters.`, errors: [{ path: "password", message: "Too short" }] })
    }
    const accounts = yield* AccountRepository
    const inUse = new InvalidRequest({ detail: `An account with ${email} exists already.`, errors: [{ path: "email", message: "Already in use" }] })
    if (Option.isSome(yield* accounts.findByEmail(email))) return yield* inUse
    const now = yield* (yield* Clock).now
    const record: AccountRecord = {
      id: input.id ?? (yield* (yield* Ids).make("acc")),
      email,
      // (trimmed, a blank one is none: as a key's name, as the API takes it)
      name: input.name?.trim() || email,
      password_hash: yield* (yield* Secrets).hashPassword(input.password),
      created_at: toTimestamp(now),
    }
    // Two creations of one email at once (two operators, a script run twice) both find it free; the
    // store refuses the second, which would read as a database that cannot answer: said as it is.
    yield* accounts.insert(record).pipe(
      Effect.catchTag("Unavailable", (unavailable) =>
        Effect.flatMap(accounts.findByEmail(email), (found) => Effect.fail<InvalidRequest | Unavailable>(Option.isSome(found) && found.value.id !== record.id ? inUse : unavailable)),
      ),
    )
    return record
  })
