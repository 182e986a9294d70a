/**
 * What the consent page offers and what the token then carries, through the real OAuth flow
 * (registration, authorize with PKCE S256, sign-in, consent, token): a client asking for no scope
 * gets `mcp`; whenever full access is asked for (or nothing), the person may grant read-only
 * instead; a client that asked for `mcp:read` only is offered nothing more.
 */
import { OAuthStore } from "@content-site/core"
import { listConnectedClients } from "@content-site/mcp"
import { Effect, Option } from "effect"
import { createHash, randomBytes } from "node:crypto"
import pg from "pg"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { eventually } from "../support/eventually.ts"
import { ALICE, formOf, type PersonScript, registerAndAuthorize, ScriptedOAuthProvider, type SeededServer, startSeeded } from "./support.ts"

let server: SeededServer
let mcpUrl: string

beforeAll(async () => {
  // (every case registers a client of its own: more than the default 20 an hour from one address)
  server = await startSeeded({ OAUTH_REGISTRATION_LIMIT_PER_HOUR: "1000" })
  mcpUrl = `${server.url}/mcp`
}, 60_000)

afterAll(async () => {
  await server?.close()
})

const decodeJwt = (token: string) => JSON.parse(Buffer.from(token.split(".")[1] ?? "", "base64url").toString()) as Record<string, unknown>

interface Flow {
  readonly clientId: string
  /** The consent page as the person saw it. */
  readonly consent: string
  readonly error: string | undefined
  /** The token response (scope and the access token's own `scope` claim), when a code came back. */
  readonly token?: { readonly scope: Array<string>; readonly claim: Array<string>; readonly access_token: string }
}

/**
 * Registers a client (with `client.registeredScope` as its registered `scope`, if given), sends the
 * person to /oauth/authorize with `scope` (left out when undefined),
 * lets them sign in and answer the consent page (`access`: the radio they pick, if any), and
 * exchanges the code with its PKCE verifier.
 */
const authorize = async (
  name: string,
  scope: string | undefined,
  person: { readonly decision?: "allow" | "deny"; readonly access?: "read" | "write" } = {},
  client: { readonly registeredScope?: string } = {},
): Promise<Flow> => {
  const provider = new ScriptedOAuthProvider({ ...ALICE, decision: person.decision ?? "allow", ...(person.access ? { access: person.access } : {}) }, name, client)
  const { clientId, verifier } = await registerAndAuthorize(server.url, provider, { scope })
  const flow = { clientId, consent: provider.lastPage, error: provider.authorizationError }
  if (provider.authorizationCode === undefined) return flow
  const response = await fetch(`${server.url}/oauth/token`, {
    method: "POST",
    headers: { "content-type": "application/x-www-form-urlencoded" },
    body: new URLSearchParams({
      grant_type: "authorization_code",
      code: provider.authorizationCode,
      redirect_uri: provider.redirectUrl,
      client_id: clientId,
      code_verifier: verifier,
      resource: mcpUrl,
    }),
  })
  expect(response.status).toBe(200)
  const body = (await response.json()) as { scope: string; access_token: string }
  return {
    ...flow,
    token: { scope: body.scope.split(" "), claim: String(decodeJwt(body.access_token)["scope"]).split(" "), access_token: body.access_token },
  }
}

/** The radios of the consent page named `access`: value and whether it is checked. */
const radiosOf = (html: string) =>
  [...html.matchAll(/<input type="radio" name="access" value="([^"]+)"([^>]*)>/g)].map((m) => ({ value: m[1], checked: / checked/.test(m[2] ?? "") }))

/** The page's submit buttons and their visible text. */
const buttonsOf = (html: string) => [...html.matchAll(/<button[^>]*type="submit"[^>]*>([^<]*)<\/button>/g)].map((m) => m[1])

/** A tools/call with the token: whether the write tool was refused for scope. */
const writeRefused = async (accessToken: string): Promise<boolean> => {
  const response = await fetch(mcpUrl, {
    method: "POST",
    headers: { authorization: `Bearer ${accessToken}`, "content-type": "application/json", accept: "application/json, text/event-stream" },
    body: JSON.stringify({
      jsonrpc: "2.0",
      id: 1,
      method: "tools/call",
      params: { name: "update_article", arguments: { article_id: "art_a1_1", title: "Checked by a dry run", dry_run: true } },
    }),
  })
  // Refused for its scope: the specification's challenge, HTTP 403 with the scope to ask for.
  if (response.status !== 403) {
    const { result } = (await response.json()) as { result: { isError?: boolean } }
    expect(result.isError).not.toBe(true)
    return false
  }
  expect(response.headers.get("www-authenticate")).toContain('error="insufficient_scope", scope="mcp"')
  expect(await response.json()).toMatchObject({ code: "insufficient_scope" })
  return true
}

/** The access /connect shows for a client. */
const listedAccess = async (clientId: string) =>
  (await listConnectedClients({ runtime: server.runtime, publicUrl: server.url, env: {} }, "acc_alice")).find((c) => c.clientId === clientId)?.access


/** An app registered at `base` whose agent sign-in page is sent Alice's email with a wrong password. */
const signInWrongly = async (base: string, name: string): Promise<ScriptedOAuthProvider> => {
  const provider = new ScriptedOAuthProvider({ ...ALICE, password: "not-the-password", decision: "allow" }, name)
  await registerAndAuthorize(base, provider, { scope: "mcp", state: undefined })
  return provider
}

describe("a client asking for no scope", () => {
  it("should get the consent page and, allowed as it stands, a token with mcp (full access)", async () => {
    for (const [i, scope] of [undefined, "", "offline_access"].entries()) {
      const flow = await authorize(`No Scope Agent ${i}`, scope)
      expect(flow.error, `scope ${JSON.stringify(scope)}`).toBeUndefined()
      expect(flow.consent).toContain(">Allow</button>")
      expect(radiosOf(flow.consent)).toEqual([
        { value: "write", checked: true },
        { value: "read", checked: false },
      ])
      expect(flow.token?.scope).toContain("mcp")
      expect(flow.token?.claim).toContain("mcp")
      expect(await writeRefused(flow.token?.access_token ?? "")).toBe(false)
      expect(await listedAccess(flow.clientId)).toBe("write")
    }
  })

  it("should let the person grant read-only instead: the token carries mcp:read only", async () => {
    const flow = await authorize("No Scope Reader", undefined, { access: "read" })
    expect(flow.token?.scope).not.toContain("mcp")
    expect(flow.token?.claim).toEqual(["mcp:read"])
    expect(await writeRefused(flow.token?.access_token ?? "")).toBe(true)
    expect(await listedAccess(flow.clientId)).toBe("read")
  })

  it("should still send the person back with access_denied when they click Deny", async () => {
    const flow = await authorize("No Scope Denied", undefined, { decision: "deny" })
    expect(flow.error).toBe("access_denied")
    expect(flow.token).toBeUndefined()
  })
})

describe("a client asking for mcp", () => {
  it("should offer full access (checked) or read-only on a page that keeps its two buttons and CSRF token", async () => {
    const flow = await authorize("Full Agent", "mcp")
    expect(radiosOf(flow.consent)).toEqual([
      { value: "write", checked: true },
      { value: "read", checked: false },
    ])
    expect(buttonsOf(flow.consent)).toEqual(["Allow", "Deny"])
    expect(formOf(flow.consent, "/confirm").fields["csrf"]).toBeTruthy()
    expect(flow.consent).not.toContain("<script")
    expect(flow.token?.claim).toContain("mcp")
    expect(await writeRefused(flow.token?.access_token ?? "")).toBe(false)
  })

  it("should obey at once a grant narrowed to reading since its token was issued, not when that token expires", async () => {
    const flow = await authorize("Full Agent Narrowed", "mcp")
    const token = flow.token?.access_token ?? ""
    expect(await writeRefused(token)).toBe(false)
    // what the consent page stores when the person picks read-only for this app again (same grant): `mcp` refused
    const grantId = String(decodeJwt(token)["gid"])
    await server.runtime.runPromise(
      OAuthStore.use((store) =>
        Effect.flatMap(store.find("Grant", grantId), (grant) =>
          store.upsert("Grant", grantId, { ...Option.getOrThrow(grant), rejected: { resources: { [mcpUrl]: "mcp" } } }, 3600),
        ),
      ),
    )
    expect(await listedAccess(flow.clientId)).toBe("read")
    expect(await writeRefused(token)).toBe(true)
  })

  it("should give a token with mcp:read only when the person picks read-only", async () => {
    const flow = await authorize("Full Agent Read", "mcp", { access: "read" })
    expect(flow.token?.scope).not.toContain("mcp")
    expect(flow.token?.claim).toEqual(["mcp:read"])
    expect(await writeRefused(flow.token?.access_token ?? "")).toBe(true)
    expect(await listedAccess(flow.clientId)).toBe("read")
  })
})

describe("a client asking for mcp:read only", () => {
  it("should offer read-only access only, say so, and keep its two buttons and CSRF token", async () => {
    const flow = await authorize("Reader Agent", "mcp:read")
    expect(radiosOf(flow.consent).filter((r) => r.value === "write")).toEqual([])
    expect(flow.consent).not.toContain('value="write"')
    expect(flow.consent).not.toContain("Read and edit")
    expect(flow.consent).toContain("read-only access")
    expect(flow.consent).not.toMatch(/edit article titles/i)
    expect(buttonsOf(flow.consent)).toEqual(["Allow", "Deny"])
    expect(formOf(flow.consent, "/confirm").fields["csrf"]).toBeTruthy()
    expect(flow.token?.claim).toEqual(["mcp:read"])
    expect(await writeRefused(flow.token?.access_token ?? "")).toBe(true)
    expect(await listedAccess(flow.clientId)).toBe("read")
  })

  it("should grant reading only even when the form is posted with access=write", async () => {
    const flow = await authorize("Forging Reader", "mcp:read", { access: "write" })
    expect(flow.token?.scope).not.toContain("mcp")
    expect(flow.token?.claim).toEqual(["mcp:read"])
    expect(await listedAccess(flow.clientId)).toBe("read")
  })
})

describe("a client registered for a scope, asking for less or more (RFC 6749 section 3.3)", () => {
  it("should let a client registered for mcp ask for mcp:read alone: read-only offered, a read-only token", async () => {
    for (const registeredScope of ["mcp", "mcp offline_access"]) {
      const flow = await authorize(`Registered Full, Asking Read (${registeredScope})`, "mcp:read", {}, { registeredScope })
      expect(flow.error, registeredScope).toBeUndefined()
      expect(flow.consent).toContain(">Allow</button>")
      expect(flow.consent).not.toContain('value="write"')
      expect(flow.consent).toContain("read-only access")
      expect(flow.token?.scope).toEqual(["mcp:read"])
      expect(flow.token?.claim).toEqual(["mcp:read"])
      expect(await writeRefused(flow.token?.access_token ?? "")).toBe(true)
      expect(await listedAccess(flow.clientId)).toBe("read")
    }
  })

  it("should still offer a client registered for mcp and asking for it full access or read-only", async () => {
    const flow = await authorize("Registered Full, Asking Full", "mcp", { access: "read" }, { registeredScope: "mcp" })
    expect(radiosOf(flow.consent)).toEqual([
      { value: "write", checked: true },
      { value: "read", checked: false },
    ])
    expect(flow.token?.claim).toEqual(["mcp:read"])
    expect(await writeRefused(flow.token?.access_token ?? "")).toBe(true)
  })

  it("should refuse a client registered for mcp:read that asks for mcp with invalid_scope, and give it no code", async () => {
    const flow = await authorize("Registered Read, Asking Full", "mcp", {}, { registeredScope: "mcp:read" })
    expect(flow.error).toBe("invalid_scope")
    expect(flow.token).toBeUndefined()
  })

  it("should give a client registered for mcp:read that asks for no scope read-only access", async () => {
    const flow = await authorize("Registered Read, Asking Nothing", undefined, {}, { registeredScope: "mcp:read" })
    expect(flow.error).toBeUndefined()
    expect(flow.consent).not.toContain('value="write"')
    expect(flow.token?.claim).toEqual(["mcp:read"])
    expect(await writeRefused(flow.token?.access_token ?? "")).toBe(true)
  })
})

describe("the activity log", () => {
  const SIGN_IN = "POST /oauth/interaction/{uid}/login (sign in)"
  const ALLOW_FULL = "POST /oauth/interaction/{uid}/confirm (allow mcp)"
  const ALLOW_READ = "POST /oauth/interaction/{uid}/confirm (allow mcp:read)"

  /** Alice's web entries, newest first, as a client reads them. */
  const webEntries = async () => {
    const response = await fetch(`${server.url}/api/v1/activity?channel=web&per_page=100`, { headers: { authorization: `Bearer ${ALICE.apiKey}` } })
    expect(response.status).toBe(200)
    return ((await response.json()) as { data: Array<Record<string, unknown>> }).data
  }
  /** The entries written since `before` was read. */
  const newSince = async (before: ReadonlyArray<Record<string, unknown>>) => {
    const seen = new Set(before.map((e) => e["id"]))
    return (await webEntries()).filter((e) => !seen.has(e["id"]))
  }

  it("should log the agent sign-in and the Allow with the access granted, channel web, the person as actor", async () => {
    const before = await webEntries()
    await authorize("Logged Agent", "mcp")
    const entries = await newSince(before)
    // The Allow names the agent it connected.
    expect(entries.map((e) => e["action"]).sort()).toEqual([`${ALLOW_FULL} “Logged Agent”`, SIGN_IN])
    for (const e of entries) {
      expect(e).toMatchObject({ channel: "web", account_id: "acc_alice", status: 303, error_code: null, actor: { type: "user", id: "acc_alice" } })
    }
    expect(new Set(entries.map((e) => e["request_id"])).size).toBe(2)
  })

  it("should name read-only access when the person grants reading only", async () => {
    const before = await webEntries()
    await authorize("Logged Reader", "mcp", { access: "read" })
    expect((await newSince(before)).map((e) => e["action"]).sort()).toEqual([`${ALLOW_READ} “Logged Reader”`, SIGN_IN])
  })

  it("should log the sign-in but no connection when the person clicks Deny", async () => {
    const before = await webEntries()
    const flow = await authorize("Logged Denied", "mcp", { decision: "deny" })
    expect(flow.error).toBe("access_denied")
    expect((await newSince(before)).map((e) => e["action"])).toEqual([SIGN_IN])
  })

  it("should log a sign-in refused for a wrong password on the account whose email was given, as / does, and nothing else", async () => {
    const before = await webEntries()
    const provider = await signInWrongly(server.url, "Wrong Password Agent")
    expect(provider.signInStatus).toBe(401)
    // recorded beside the answer (not awaited: a known email answers as fast as an unknown one)
    const logged = await eventually(() => newSince(before), (entries) => entries.length > 0, 10_000)
    expect(logged).toHaveLength(1)
    expect(logged[0]).toMatchObject({ action: "POST /oauth/interaction/{uid}/login (sign in, wrong password)", status: 401, error_code: "unauthenticated", actor: null, channel: "web" })
    // never the password typed
    expect(JSON.stringify(logged[0])).not.toContain("not-the-password")
  })
})

describe("an agent sign-in refused for its address's failures", () => {
  it("should answer 429 and log the refusal (channel web, no account, counted against the address), as the API logs its own", async () => {
    const limited = await startSeeded({ AUTH_FAILURE_LIMIT_PER_MINUTE: "1" })
    try {
      const guesser = await signInWrongly(limited.url, "Guessing Agent")
      expect(guesser.signInStatus).toBe(401)
      // the same sign-in form sent again, past the address's budget
      const login = formOf(guesser.lastPage, "/login")
      const browser = (guesser as unknown as { browser: { request: (url: string, init: { form: Record<string, string> }) => Promise<Response> } }).browser
      const again = await browser.request(new URL(login.action, limited.url).toString(), { form: { ...login.fields, email: ALICE.email, password: "still-not-it" } })
      expect(again.status).toBe(429)
      const db = new pg.Client({ connectionString: limited.databaseUrl })
      await db.connect()
      try {
        const rows = await eventually(
          async () => (await db.query<{ account_id: string | null; actor: unknown; channel: string; action: string; status: string; error_code: string }>("select account_id, actor, channel, action, status, error_code from activity where status = '429'")).rows,
          (r) => r.length > 0,
          10_000,
        )
        expect(rows).toEqual([{ account_id: null, actor: null, channel: "web", action: "POST /oauth/interaction/{uid}/login (sign in)", status: "429", error_code: "rate_limited" }])
      } finally {
        await db.end()
      }
    } finally {
      await limited.close()
    }
  }, 60_000)
})

describe("asking for more after a read-only grant", () => {
  it("should ask the person again when the app, challenged for the scope mcp, asks for it (and grant it if they allow)", async () => {
    const provider = new ScriptedOAuthProvider({ ...ALICE, decision: "allow", access: "read" }, "Step-up Agent")
    const register = await fetch(`${server.url}/oauth/register`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(provider.clientMetadata) })
    const { client_id: clientId } = (await register.json()) as { client_id: string }
    /** One authorization in the same browser, the code exchanged: the token's scope claim. */
    const authorizeOnce = async (scope: string) => {
      const verifier = randomBytes(32).toString("base64url")
      const url = new URL(`${server.url}/oauth/authorize`)
      url.search = new URLSearchParams({
        client_id: clientId,
        response_type: "code",
        redirect_uri: provider.redirectUrl,
        code_challenge: createHash("sha256").update(verifier).digest("base64url"),
        code_challenge_method: "S256",
        resource: mcpUrl,
        scope,
      }).toString()
      provider.lastPage = ""
      await provider.redirectToAuthorization(url)
      const response = await fetch(`${server.url}/oauth/token`, {
        method: "POST",
        headers: { "content-type": "application/x-www-form-urlencoded" },
        body: new URLSearchParams({ grant_type: "authorization_code", code: provider.authorizationCode ?? "", redirect_uri: provider.redirectUrl, client_id: clientId, code_verifier: verifier, resource: mcpUrl }),
      })
      expect(response.status).toBe(200)
      return String(decodeJwt(((await response.json()) as { access_token: string }).access_token)["scope"]).split(" ")
    }
    expect(await authorizeOnce("mcp")).toEqual(["mcp:read"])
    // the 403 challenge names `mcp`; the app asks for it: the consent page again, where the person now allows editing
    ;(provider as { script: PersonScript }).script = { ...ALICE, decision: "allow", access: "write" }
    const scope = await authorizeOnce("mcp")
    expect(provider.lastPage).toContain(">Allow</button>")
    expect(scope).toContain("mcp")
    expect(await listedAccess(clientId)).toBe("write")
  })
})

describe("a read-only agent's batch refused for its scope", () => {
  it("should log every call of the batch as an entry of its own, each with its request id", async () => {
    const flow = await authorize("Batch Read Agent", "mcp:read")
    const call = (id: number, name: string, args: Record<string, unknown>) => ({ jsonrpc: "2.0", id, method: "tools/call", params: { name, arguments: args } })
    const response = await fetch(mcpUrl, {
      method: "POST",
      headers: { authorization: `Bearer ${flow.token?.access_token ?? ""}`, "content-type": "application/json", accept: "application/json, text/event-stream" },
      body: JSON.stringify([
        call(1, "update_article", { article_id: "art_a1_1", title: "One" }),
        call(2, "update_article", { article_id: "art_a1_1", title: "Two" }),
        call(3, "get_article", { article_id: "art_a1_1" }),
        // a name no tool has, nor could by MCP's rule for names: logged as `tools/call`, never its 10 000 characters
        call(4, "x".repeat(10_000), {}),
      ]),
    })
    expect(response.status).toBe(403)
    const requestId = response.headers.get("x-request-id")
    const listed = await fetch(`${server.url}/api/v1/activity?channel=mcp&per_page=100`, { headers: { authorization: `Bearer ${ALICE.apiKey}` } })
    const entries = ((await listed.json()) as { data: Array<{ request_id: string; action: string; error_code: string | null; actor: { name: string } }> }).data
    // a batch of three calls is three entries (docs/mcp.md), refused ones included
    expect(
      entries
        .filter((e) => e.actor.name === "Batch Read Agent")
        .map((e) => [e.request_id, e.action, e.error_code])
        .sort(([a], [b]) => String(a).localeCompare(String(b))),
    ).toEqual([
      [`${requestId}.1`, "update_article", "insufficient_scope"],
      [`${requestId}.2`, "update_article", "insufficient_scope"],
      [`${requestId}.3`, "get_article", "insufficient_scope"],
      [`${requestId}.4`, "tools/call", "insufficient_scope"],
    ])
  })
})
