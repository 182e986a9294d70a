import { activityFor, Clock, Ids, type LoggedCaller, OAuthStore, type StoredPayload, toTimestamp } from "@content-site/core"
import { displayName, type HttpDeps } from "@content-site/http"
import { Effect, Option } from "effect"

/** One client (an MCP app) connected to an account. */
export interface ConnectedClient {
  readonly clientId: string
  readonly name: string
  readonly redirectHost: string
  /** When the account first allowed it (RFC 3339). */
  readonly connectedAt: string
  /** When it last called `/mcp` (to the minute), or null. */
  readonly lastUsedAt: string | null
  /** What the owner allowed: every tool, or the read tools only. */
  readonly access: "write" | "read"
}

/** Whether a stored grant gives full access (`mcp` granted and not refused) to some resource. */
export const grantsWrite = (payload: StoredPayload): boolean => {
  const resources = (payload["resources"] ?? {}) as Record<string, unknown>
  const rejected = ((payload["rejected"] as { resources?: Record<string, unknown> } | undefined)?.resources ?? {}) as Record<string, unknown>
  return Object.entries(resources).some(
    ([resource, scope]) =>
      typeof scope === "string" &&
      scope.split(" ").includes("mcp") &&
      !(typeof rejected[resource] === "string" && (rejected[resource] as string).split(" ").includes("mcp")),
  )
}

/** The OAuthStore model that remembers when a client last used its connection. */
export const USAGE_MODEL = "McpClientUsage"

/** The usage record id of an account's client. */
export const usageId = (accountId: string, clientId: string) => `${accountId}:${clientId}`

const hostOf = (uri: unknown): string => {
  if (typeof uri !== "string") return "(unknown)"
  try {
    const url = new URL(uri)
    return url.host === "" ? url.protocol : url.host
  } catch {
    return "(unknown)"
  }
}

const grantsOf = (accountId: string) =>
  Effect.map(
    OAuthStore.use((store) => store.listByAccount("Grant", accountId)),
    (grants) => grants.filter((g) => typeof g.payload["clientId"] === "string"),
  )

/** The MCP clients an account has allowed, oldest first (for the web page `/connect`). */
export const listConnectedClients = (deps: HttpDeps, accountId: string): Promise<Array<ConnectedClient>> =>
  deps.runtime.runPromise(
    Effect.gen(function* () {
      const store = yield* OAuthStore
      const grants = yield* grantsOf(accountId)
      const byClient = new Map<string, Array<{ id: string; payload: StoredPayload }>>()
      for (const g of grants) {
        const clientId = g.payload["clientId"] as string
        byClient.set(clientId, [...(byClient.get(clientId) ?? []), g])
      }
      const out: Array<ConnectedClient> = []
      for (const [clientId, clientGrants] of byClient) {
        const client = Option.getOrUndefined(yield* store.find("Client", clientId))
        const usage = Option.getOrUndefined(yield* store.find(USAGE_MODEL, usageId(accountId, clientId)))
        const issued = Math.min(...clientGrants.map((g) => (typeof g.payload["iat"] === "number" ? g.payload["iat"] : Infinity)))
        const redirectUris = client?.["redirect_uris"]
        // A client described by a metadata document (its client_id that document's https URL) has
        // no stored registration: named as its last token named it, placed by the document's host.
        const described = client === undefined && URL.parse(clientId)?.protocol === "https:"
        const name = typeof client?.["client_name"] === "string" ? client["client_name"] : described && typeof usage?.["clientName"] === "string" ? usage["clientName"] : clientId
        out.push({
          clientId,
          name: displayName(name),
          redirectHost: described ? hostOf(clientId) : hostOf(Array.isArray(redirectUris) ? redirectUris[0] : undefined),
          connectedAt: Number.isFinite(issued) ? toTimestamp(issued * 1000) : toTimestamp(Date.now()),
          lastUsedAt: typeof usage?.["lastUsedAt"] === "string" ? usage["lastUsedAt"] : null,
          access: clientGrants.some((g) => grantsWrite(g.payload)) ? "write" : "read",
        })
      }
      return out.sort((a, b) => a.connectedAt.localeCompare(b.connectedAt) || a.clientId.localeCompare(b.clientId))
    }) as Effect.Effect<Array<ConnectedClient>>,
  )

/**
 * Revokes a client's connection to an account: its grants, refresh tokens and codes are destroyed,
 * and its access tokens stop working at once (the resource server checks the grant on every call),
 * in one step with the activity entry of `call` (answered with `httpStatus`): all or nothing.
 * Resolves false when the client was not connected to that account (then no entry is written).
 */
export const revokeConnectedClient = (
  deps: HttpDeps,
  accountId: string,
  clientId: string,
  call?: { readonly caller: LoggedCaller; readonly httpStatus: number },
): Promise<boolean> =>
  deps.runtime.runPromise(
    Effect.gen(function* () {
      const store = yield* OAuthStore
      const now = yield* (yield* Clock).now
      const activity = call === undefined ? undefined : activityFor(call.caller, { id: yield* (yield* Ids).make("act"), nowMs: now, ok: true, httpStatus: call.httpStatus })
      return yield* store.revokeClient(accountId, clientId, { model: USAGE_MODEL, id: usageId(accountId, clientId) }, activity)
    }) as Effect.Effect<boolean>,
  )
