import { Context, type Effect, type Option } from "effect"
import type { Unavailable } from "../errors.ts"
import type { ActivityRecord } from "./records.ts"

/** A JSON object as stored for the OAuth server and web sessions. */
export type StoredPayload = { readonly [key: string]: unknown }

/**
 * Expiring storage for the OAuth authorization server's models (clients, grants, codes, tokens,
 * interactions, sessions) and for web sign-in sessions, shared by every instance. It mirrors the
 * adapter interface of `oidc-provider`: ids are unique within a model.
 */
export class OAuthStore extends Context.Service<OAuthStore, {
  readonly upsert: (model: string, id: string, payload: StoredPayload, expiresInSeconds: number | undefined) => Effect.Effect<void, Unavailable>
  /**
   * Rewrites a live payload (and its expiry) in one statement: one destroyed, expired or never
   * stored stays so (false), however recently the caller read it.
   */
  readonly replace: (model: string, id: string, payload: StoredPayload, expiresInSeconds: number | undefined) => Effect.Effect<boolean, Unavailable>
  readonly find: (model: string, id: string) => Effect.Effect<Option.Option<StoredPayload>, Unavailable>
  readonly findByUid: (model: string, uid: string) => Effect.Effect<Option.Option<StoredPayload>, Unavailable>
  readonly findByUserCode: (model: string, userCode: string) => Effect.Effect<Option.Option<StoredPayload>, Unavailable>
  /**
   * Marks a live payload consumed (a code redeemed, a refresh token rotated): true for the one call
   * that consumed it, false when it was consumed already (by another call, on any instance) or is gone.
   */
  readonly consume: (model: string, id: string) => Effect.Effect<boolean, Unavailable>
  readonly destroy: (model: string, id: string) => Effect.Effect<void, Unavailable>
  /**
   * Deletes a live payload whose fields include every one of `match` (each equal) and answers it,
   * in one statement: of calls taking the same payload at once, on any instance, exactly one gets
   * it; the others get none, as does a call for a payload gone, expired or not matching (which stays).
   */
  readonly take: (model: string, id: string, match: Readonly<Record<string, string>>) => Effect.Effect<Option.Option<StoredPayload>, Unavailable>
  readonly revokeByGrantId: (grantId: string) => Effect.Effect<void, Unavailable>
  /**
   * Disconnects a client from an account in one step: every grant of it (`Grant` payloads with
   * that `accountId` and `clientId`), what they issued, and the payload `also` names (its usage
   * record) are deleted, with `activity` (the entry of the call) written when a grant was: all or
   * nothing. Answers whether the client was connected.
   */
  readonly revokeClient: (
    accountId: string,
    clientId: string,
    also: { readonly model: string; readonly id: string },
    activity?: ActivityRecord,
  ) => Effect.Effect<boolean, Unavailable>
  /** Payloads of a model whose `accountId` field is the given account (connected clients). */
  readonly listByAccount: (model: string, accountId: string) => Effect.Effect<ReadonlyArray<{ readonly id: string; readonly payload: StoredPayload }>, Unavailable>
}>()("core/OAuthStore") {}
