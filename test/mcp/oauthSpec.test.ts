/**
 * The authorization server and the resource server held to the MCP authorization specification
 * and the RFCs it cites, as a demanding client (and an attacker) would hold them: what the
 * metadata promises is what the endpoints do, and a token is usable only as it was issued.
 */
import { OAuthStore } from "@content-site/core"
import { Option } from "effect"
import { importJWK, type JWK, SignJWT } from "jose"
import { createHash, generateKeyPairSync, randomBytes, sign } from "node:crypto"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { ALICE, registerAndAuthorize, ScriptedOAuthProvider, type SeededServer, startSeeded } from "./support.ts"

let server: SeededServer
let mcpUrl: string

beforeAll(async () => {
  server = await startSeeded({ OAUTH_REGISTRATION_LIMIT_PER_HOUR: "1000", RATE_LIMIT_PER_MINUTE: "100000" })
  mcpUrl = `${server.url}/mcp`
}, 60_000)

afterAll(async () => {
  await server?.close()
})

const decodeJwt = (token: string) => JSON.parse(Buffer.from(token.split(".")[1] ?? "", "base64url").toString()) as Record<string, unknown>

const postForm = (url: string, body: Record<string, string>, headers: Record<string, string> = {}) =>
  fetch(url, { method: "POST", headers: { "content-type": "application/x-www-form-urlencoded", ...headers }, body: new URLSearchParams(body) })

const toolsList = (authorization: string, headers: Record<string, string> = {}) =>
  fetch(mcpUrl, {
    method: "POST",
    headers: { authorization, "content-type": "application/json", accept: "application/json, text/event-stream", ...headers },
    body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list" }),
  })

interface Flow {
  readonly provider: ScriptedOAuthProvider
  readonly clientId: string
  readonly verifier: string
}

/** Registers a client and runs the authorization request through sign-in and Allow (`extra` overrides the request's parameters). */
const authorize = async (extra: Record<string, string> = {}): Promise<Flow> => {
  const provider = new ScriptedOAuthProvider({ ...ALICE, decision: "allow" }, "Spec Client")
  const { clientId, verifier } = await registerAndAuthorize(server.url, provider, { scope: "mcp offline_access", ...extra })
  return { provider, clientId, verifier }
}

/** The code of a flow exchanged at the token endpoint. */
const exchange = (flow: Flow, headers: Record<string, string> = {}) =>
  postForm(
    `${server.url}/oauth/token`,
    { grant_type: "authorization_code", code: flow.provider.authorizationCode ?? "", redirect_uri: flow.provider.redirectUrl, client_id: flow.clientId, code_verifier: flow.verifier, resource: mcpUrl },
    headers,
  )

const metadata = async () => (await (await fetch(`${server.url}/.well-known/oauth-authorization-server`)).json()) as Record<string, unknown>

const signingKey = async (): Promise<JWK> => {
  const stored = await server.runtime.runPromise(OAuthStore.use((s) => s.find("Jwks", "signing")))
  return ((Option.getOrThrow(stored) as { keys: Array<JWK> }).keys)[0] as JWK
}

/** A DPoP proof (RFC 9449) for a POST to `htu`, signed by a fresh key. */
const dpopProof = (htu: string): string => {
  const { publicKey, privateKey } = generateKeyPairSync("ec", { namedCurve: "P-256" })
  const header = Buffer.from(JSON.stringify({ typ: "dpop+jwt", alg: "ES256", jwk: publicKey.export({ format: "jwk" }) })).toString("base64url")
  const payload = Buffer.from(JSON.stringify({ jti: randomBytes(12).toString("base64url"), htm: "POST", htu, iat: Math.floor(Date.now() / 1000) })).toString("base64url")
  const signature = sign("sha256", Buffer.from(`${header}.${payload}`), { key: privateKey, dsaEncoding: "ieee-p1363" }).toString("base64url")
  return `${header}.${payload}.${signature}`
}

describe("sender-constrained tokens (RFC 9449 DPoP)", () => {
  it("should neither advertise DPoP nor bind a token to a proof the resource server never checks", async () => {
    // /mcp takes `Authorization: Bearer` only and cannot check a proof: the authorization server
    // must not offer DPoP, nor hand out tokens typed DPoP that /mcp would take as bearer tokens.
    expect(await metadata()).not.toHaveProperty("dpop_signing_alg_values_supported")
    const flow = await authorize()
    const response = await exchange(flow, { dpop: dpopProof(`${server.url}/oauth/token`) })
    expect(response.status).toBe(200)
    const body = (await response.json()) as { token_type: string; access_token: string; refresh_token: string }
    expect(body.token_type.toLowerCase()).toBe("bearer")
    expect(decodeJwt(body.access_token)).not.toHaveProperty("cnf")
    expect((await toolsList(`Bearer ${body.access_token}`)).status).toBe(200)
    // its refresh token is not bound to the proof's key either
    const refreshed = await postForm(`${server.url}/oauth/token`, { grant_type: "refresh_token", refresh_token: body.refresh_token, client_id: flow.clientId })
    expect(refreshed.status).toBe(200)
  })

  it("should refuse a token bound to a key (cnf) presented as a bearer token", async () => {
    const flow = await authorize()
    const { access_token: token } = (await (await exchange(flow)).json()) as { access_token: string }
    const jwk = await signingKey()
    const bound = await new SignJWT({ ...decodeJwt(token), cnf: { jkt: "0ZcOCORZNYy-DWpqq30jZyJGHTN0d2HglBV3uiguA4I" } })
      .setProtectedHeader({ alg: "ES256", typ: "at+jwt", kid: jwk.kid ?? "" })
      .sign(await importJWK(jwk, "ES256"))
    const response = await toolsList(`Bearer ${bound}`)
    expect(response.status).toBe(401)
    expect(response.headers.get("www-authenticate")).toContain('error="invalid_token"')
  })
})

describe("authorization server metadata (RFC 8414)", () => {
  it("should say that a public client may revoke its tokens, as it may (the default when unsaid is client_secret_basic only)", async () => {
    const document = await metadata()
    const methods = document["revocation_endpoint_auth_methods_supported"] as Array<string> | undefined
    expect(methods).toBeDefined()
    expect(methods).toContain("none")
    // every method the token endpoint takes, the revocation endpoint takes too (one client authentication)
    expect([...(methods ?? [])].sort()).toEqual([...(document["token_endpoint_auth_methods_supported"] as Array<string>)].sort())
    const flow = await authorize()
    const { access_token: accessToken, refresh_token: refreshToken } = (await (await exchange(flow)).json()) as { access_token: string; refresh_token: string }
    const revoked = await postForm(`${server.url}/oauth/revoke`, { token: refreshToken, token_type_hint: "refresh_token", client_id: flow.clientId })
    expect(revoked.status).toBe(200)
    expect((await toolsList(`Bearer ${accessToken}`)).status).toBe(401)
  })
})

describe("token revocation (RFC 7009)", () => {
  const revoke = (token: string, clientId: string, hint = "access_token") =>
    postForm(`${server.url}/oauth/revoke`, { token, token_type_hint: hint, client_id: clientId })
  const refresh = (refreshToken: string, clientId: string) =>
    postForm(`${server.url}/oauth/token`, { grant_type: "refresh_token", refresh_token: refreshToken, client_id: clientId })

  it("should revoke a JWT access token by revoking its grant: 200, and the token, its refresh token and its grant stop working at once", async () => {
    const flow = await authorize()
    const { access_token: accessToken, refresh_token: refreshToken } = (await (await exchange(flow)).json()) as { access_token: string; refresh_token: string }
    expect((await toolsList(`Bearer ${accessToken}`)).status).toBe(200)
    const revoked = await revoke(accessToken, flow.clientId)
    expect(revoked.status).toBe(200)
    expect(await revoked.text()).toBe("")
    expect((await toolsList(`Bearer ${accessToken}`)).status).toBe(401)
    expect((await refresh(refreshToken, flow.clientId)).status).toBe(400)
    const grantId = decodeJwt(accessToken)["gid"] as string
    expect(Option.isNone(await server.runtime.runPromise(OAuthStore.use((s) => s.find("Grant", grantId))))).toBe(true)
    // revoked again (or without a hint): still 200, nothing more to do
    expect((await postForm(`${server.url}/oauth/revoke`, { token: accessToken, client_id: flow.clientId })).status).toBe(200)
  })

  it("should answer 200 and change nothing when another client revokes the token, or the token is not one this server signed", async () => {
    const flow = await authorize()
    const other = await authorize()
    const { access_token: accessToken, refresh_token: refreshToken } = (await (await exchange(flow)).json()) as { access_token: string; refresh_token: string }
    expect((await revoke(accessToken, other.clientId)).status).toBe(200)
    expect((await toolsList(`Bearer ${accessToken}`)).status).toBe(200)
    // a token of the same shape signed by a key of someone else's, naming the client and its grant
    const { privateKey } = generateKeyPairSync("ec", { namedCurve: "P-256" })
    const forged = await new SignJWT(decodeJwt(accessToken)).setProtectedHeader({ alg: "ES256", typ: "at+jwt", kid: "forged" }).sign(privateKey)
    expect((await revoke(forged, flow.clientId)).status).toBe(200)
    expect((await toolsList(`Bearer ${accessToken}`)).status).toBe(200)
    expect((await refresh(refreshToken, flow.clientId)).status).toBe(200)
  })
})

describe("refresh token scope (RFC 6749 section 6)", () => {
  const refresh = (refreshToken: string, clientId: string, scope?: string) =>
    postForm(`${server.url}/oauth/token`, { grant_type: "refresh_token", refresh_token: refreshToken, client_id: clientId, ...(scope !== undefined ? { scope } : {}) })

  it("should refuse a refresh asking for full access that the person did not grant, with invalid_scope, and keep the refresh token usable", async () => {
    const provider = new ScriptedOAuthProvider({ ...ALICE, decision: "allow", access: "read" }, "Read Only Client")
    const { clientId, verifier } = await registerAndAuthorize(server.url, provider, { scope: "mcp offline_access" })
    const tokens = (await (await exchange({ provider, clientId, verifier })).json()) as { refresh_token: string; scope: string }
    expect(tokens.scope).toBe("mcp:read")
    const widened = await refresh(tokens.refresh_token, clientId, "mcp")
    expect(widened.status).toBe(400)
    expect(widened.headers.get("cache-control")).toBe("no-store")
    expect(((await widened.json()) as { error: string }).error).toBe("invalid_scope")
    // refused before it was used up: the same refresh token still gives what was granted
    const narrowed = await refresh(tokens.refresh_token, clientId, "mcp:read")
    expect(narrowed.status).toBe(200)
    expect(((await narrowed.json()) as { scope: string }).scope).toBe("mcp:read")
  })

  it("should still refresh a full-access grant with its scopes asked again, or with none asked", async () => {
    const flow = await authorize()
    const tokens = (await (await exchange(flow)).json()) as { refresh_token: string }
    const asked = await refresh(tokens.refresh_token, flow.clientId, "mcp mcp:read")
    expect(asked.status).toBe(200)
    const again = (await asked.json()) as { refresh_token: string; scope: string }
    expect(again.scope.split(" ")).toContain("mcp")
    expect((await refresh(again.refresh_token, flow.clientId)).status).toBe(200)
  })
})

describe("refresh token scope narrowed (RFC 6749 sections 3.3 and 6)", () => {
  const refresh = (refreshToken: string, clientId: string, scope?: string) =>
    postForm(`${server.url}/oauth/token`, { grant_type: "refresh_token", refresh_token: refreshToken, client_id: clientId, ...(scope !== undefined ? { scope } : {}) })

  it("should narrow a full-access grant to mcp:read when a refresh asks for it, and say so in scope and in the token", async () => {
    const flow = await authorize()
    const tokens = (await (await exchange(flow)).json()) as { refresh_token: string; scope: string }
    expect(tokens.scope.split(" ")).toContain("mcp")
    const narrowed = await refresh(tokens.refresh_token, flow.clientId, "mcp:read")
    expect(narrowed.status).toBe(200)
    const body = (await narrowed.json()) as { access_token: string; refresh_token: string; scope: string }
    expect(body.scope).toBe("mcp:read")
    expect(decodeJwt(body.access_token)["scope"]).toBe("mcp:read")
    // the narrowing is the refreshed token's own: the grant still gives full access on the next refresh
    const full = (await (await refresh(body.refresh_token, flow.clientId, "mcp")).json()) as { scope: string }
    expect(full.scope.split(" ")).toContain("mcp")
  })

  it("should tell a client registering for mcp that it may ask for mcp:read too (RFC 7591 section 3.2.1), and one registering for mcp:read nothing more", async () => {
    const register = async (scope: string) => {
      const metadata = { ...new ScriptedOAuthProvider({ ...ALICE, decision: "allow" }, "Registering Client").clientMetadata, scope }
      const response = await fetch(`${server.url}/oauth/register`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(metadata) })
      expect(response.status).toBe(201)
      return ((await response.json()) as { scope: string }).scope.split(" ").sort()
    }
    expect(await register("mcp offline_access")).toEqual(["mcp", "mcp:read", "offline_access"])
    expect(await register("mcp:read")).toEqual(["mcp:read"])
  })

  it("should let a client registered for mcp ask for mcp:read alone, and refresh it as mcp:read but never as mcp", async () => {
    const provider = new ScriptedOAuthProvider({ ...ALICE, decision: "allow" }, "Registered Full Reader", { registeredScope: "mcp offline_access" })
    const { clientId, verifier } = await registerAndAuthorize(server.url, provider, { scope: "mcp:read offline_access" })
    expect(provider.authorizationError).toBeUndefined()
    const tokens = (await (await exchange({ provider, clientId, verifier })).json()) as { access_token: string; refresh_token: string; scope: string }
    expect(tokens.scope).toBe("mcp:read")
    expect(decodeJwt(tokens.access_token)["scope"]).toBe("mcp:read")
    const widened = await refresh(tokens.refresh_token, clientId, "mcp")
    expect(widened.status).toBe(400)
    expect(((await widened.json()) as { error: string }).error).toBe("invalid_scope")
    const again = await refresh(tokens.refresh_token, clientId, "mcp:read")
    expect(again.status).toBe(200)
    expect(((await again.json()) as { scope: string }).scope).toBe("mcp:read")
  })
})

describe("token requests naming another resource (RFC 8707 section 2.2)", () => {
  const token = (body: Record<string, string>) => postForm(`${server.url}/oauth/token`, body)

  it("should refuse a refresh for another resource with invalid_target and keep the refresh token and its grant usable", async () => {
    const flow = await authorize()
    const tokens = (await (await exchange(flow)).json()) as { access_token: string; refresh_token: string }
    for (const resource of ["https://elsewhere.example/mcp", `${mcpUrl}/`]) {
      const refused = await token({ grant_type: "refresh_token", refresh_token: tokens.refresh_token, client_id: flow.clientId, resource })
      expect(refused.status, resource).toBe(400)
      expect(((await refused.json()) as { error: string }).error, resource).toBe("invalid_target")
    }
    // refused before it was used up: not taken for a stolen refresh token presented again
    expect((await toolsList(`Bearer ${tokens.access_token}`)).status).toBe(200)
    const refreshed = await token({ grant_type: "refresh_token", refresh_token: tokens.refresh_token, client_id: flow.clientId, resource: mcpUrl })
    expect(refreshed.status).toBe(200)
    expect(decodeJwt(((await refreshed.json()) as { access_token: string }).access_token)["aud"]).toBe(mcpUrl)
  })

  it("should refuse a code exchanged for another resource with invalid_target and still exchange it for {mcp_url}", async () => {
    const flow = await authorize()
    const body = { grant_type: "authorization_code", code: flow.provider.authorizationCode ?? "", redirect_uri: flow.provider.redirectUrl, client_id: flow.clientId, code_verifier: flow.verifier }
    const refused = await token({ ...body, resource: "https://elsewhere.example/mcp" })
    expect(refused.status).toBe(400)
    expect(((await refused.json()) as { error: string }).error).toBe("invalid_target")
    const exchanged = await token({ ...body, resource: mcpUrl })
    expect(exchanged.status).toBe(200)
    const tokens = (await exchanged.json()) as { access_token: string }
    expect((await toolsList(`Bearer ${tokens.access_token}`)).status).toBe(200)
  })
})

describe("OAuth error responses (RFC 6749 section 5.2, RFC 7009 section 2.2.1)", () => {
  it("should answer every refusal of the token and revocation endpoints as JSON that no cache keeps", async () => {
    const refusals = [
      await postForm(`${server.url}/oauth/token`, { grant_type: "authorization_code", code: "unknown", client_id: "unknown", code_verifier: "a".repeat(43) }),
      await postForm(`${server.url}/oauth/revoke`, { token: "unknown" }),
      await postForm(`${server.url}/oauth/revoke`, { token: "unknown", client_id: "unknown" }),
      await postForm(`${server.url}/oauth/revoke`, { client_id: (await authorize()).clientId }),
    ]
    for (const res of refusals) {
      expect(res.status).toBeGreaterThanOrEqual(400)
      expect(res.headers.get("content-type")).toMatch(/^application\/json/)
      expect(typeof ((await res.json()) as { error?: unknown }).error).toBe("string")
      expect(res.headers.get("cache-control"), res.url).toBe("no-store")
    }
  })
})

describe("no open redirector (RFC 9700 section 4.11.2)", () => {
  const httpsApp = "https://app.example/oauth/callback"
  /** A client registered with `redirect` (anyone may register one) and the authorization URL it would send a person to. */
  const client = async (redirect: string, decision: "allow" | "deny" = "allow") => {
    const provider = new ScriptedOAuthProvider({ ...ALICE, decision }, "Redirecting App", { asked: redirect })
    const registered = await fetch(`${server.url}/oauth/register`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(provider.clientMetadata) })
    expect(registered.status).toBe(201)
    const clientId = ((await registered.json()) as { client_id: string }).client_id
    const urlFor = (extra: Record<string, string>) => {
      const url = new URL(`${server.url}/oauth/authorize`)
      url.search = new URLSearchParams({
        client_id: clientId,
        response_type: "code",
        redirect_uri: redirect,
        code_challenge: createHash("sha256").update(randomBytes(32).toString("base64url")).digest("base64url"),
        code_challenge_method: "S256",
        resource: mcpUrl,
        state: "st",
        scope: "mcp",
        ...extra,
      }).toString()
      return url
    }
    return { provider, clientId, urlFor }
  }

  it("should not send a person who has not allowed the app straight on to its https redirect URI with an error: a page tells them, with a link", async () => {
    const app = await client(httpsApp)
    const erroneous: ReadonlyArray<Record<string, string>> = [{ resource: "https://elsewhere.example/mcp" }, { code_challenge_method: "plain" }, { prompt: "none" }]
    for (const extra of erroneous) {
      const response = await fetch(app.urlFor(extra), { redirect: "manual" })
      expect(response.headers.get("location"), JSON.stringify(extra)).toBeNull()
      const html = await response.text()
      expect(response.status, `${JSON.stringify(extra)} ${html}`).toBe(400)
      const link = /<a href="([^"]+)"[^>]*>Return to the app at app\.example<\/a>/.exec(html)?.[1]?.replace(/&amp;/g, "&")
      expect(link, html).toBeDefined()
      const back = new URL(link ?? "")
      expect(back.origin + back.pathname).toBe(httpsApp)
      expect(back.searchParams.get("state")).toBe("st")
      expect(back.searchParams.get("iss")).toBe(server.url)
      expect(back.searchParams.get("error")).toMatch(/^(invalid_target|invalid_request|login_required)$/)
    }
  })

  it("should still send errors straight to a loopback redirect URI, and to an app after its sign-in and consent pages", async () => {
    const native = await client("http://127.0.0.1:4567/callback")
    const refused = await fetch(native.urlFor({ resource: "https://elsewhere.example/mcp" }), { redirect: "manual" })
    expect(new URL(refused.headers.get("location") ?? "").searchParams.get("error")).toBe("invalid_target")
    // Deny on the consent page, which named the app and its host: back to it
    const denied = await client(httpsApp, "deny")
    await denied.provider.redirectToAuthorization(denied.urlFor({}))
    expect(denied.provider.authorizationError).toBe("access_denied")
    expect(denied.provider.authorizationResponse?.origin).toBe("https://app.example")
  })

  it("should send errors straight back to an app the person allowed before in this browser", async () => {
    const app = await client(httpsApp)
    await app.provider.redirectToAuthorization(app.urlFor({}))
    expect(app.provider.authorizationCode).toBeDefined()
    app.provider.authorizationCode = undefined
    await app.provider.redirectToAuthorization(app.urlFor({ resource: "https://elsewhere.example/mcp" }))
    expect(app.provider.authorizationError).toBe("invalid_target")
  })
})

describe("what a client's URLs make the service read", () => {
  it("should read at most 64 KB of a client's jwks_uri (a registration anyone may make), as it reads 5 KB of a metadata document", async () => {
    const { publicKey, privateKey } = generateKeyPairSync("ec", { namedCurve: "P-256" })
    const jwk = { ...publicKey.export({ format: "jwk" }), kid: "k1", use: "sig", alg: "ES256" }
    const documents: Record<string, string> = {
      "https://keys.example/small.json": JSON.stringify({ keys: [jwk] }),
      // a key set of 2 MB: a 2.5 s download, kept whole in memory, at every token request that asks for it
      "https://keys.example/big.json": JSON.stringify({ keys: [jwk, ...Array.from({ length: 2000 }, (_, i) => ({ ...jwk, kid: `pad${i}`, x5u: "x".repeat(1000) }))] }),
    }
    const keysServer = await startSeeded(
      { OAUTH_REGISTRATION_LIMIT_PER_HOUR: "1000" },
      { reuse: server, clientMetadataFetch: async (url) => new Response(documents[url] ?? "", { status: documents[url] === undefined ? 404 : 200, headers: { "content-type": "application/json" } }) },
    )
    try {
      const tokenRequest = async (jwksUri: string) => {
        const registered = await fetch(`${keysServer.url}/oauth/register`, {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: JSON.stringify({ client_name: "Keyed", redirect_uris: ["https://app.example/cb"], token_endpoint_auth_method: "private_key_jwt", jwks_uri: jwksUri }),
        })
        expect(registered.status).toBe(201)
        const clientId = ((await registered.json()) as { client_id: string }).client_id
        const now = Math.floor(Date.now() / 1000)
        const assertion = await new SignJWT({ jti: randomBytes(12).toString("base64url") })
          .setProtectedHeader({ alg: "ES256", kid: "k1" })
          .setIssuer(clientId)
          .setSubject(clientId)
          .setAudience(keysServer.url)
          .setIssuedAt(now)
          .setExpirationTime(now + 60)
          .sign(privateKey)
        const response = await postForm(`${keysServer.url}/oauth/token`, {
          grant_type: "refresh_token",
          refresh_token: "not-a-refresh-token",
          client_id: clientId,
          client_assertion_type: "urn:ietf:params:oauth:client-assertion-type:jwt-bearer",
          client_assertion: assertion,
        })
        return ((await response.json()) as { error: string }).error
      }
      // the client authenticated with a key of a small set (the refresh token is what is wrong)
      expect(await tokenRequest("https://keys.example/small.json")).toBe("invalid_grant")
      // a set too large is not read: the client cannot authenticate
      expect(await tokenRequest("https://keys.example/big.json")).toBe("invalid_client")
    } finally {
      await keysServer.close()
    }
  })
})

describe("response modes (response_modes_supported)", () => {
  it("should let the form_post page post the code: its CSP allows its one script and the redirect URI's origin as form target", async () => {
    expect(await metadata()).toHaveProperty("response_modes_supported", expect.arrayContaining(["form_post"]))
    const provider = new ScriptedOAuthProvider({ ...ALICE, decision: "allow" }, "Form Post Client", { asked: "http://127.0.0.1:4321/callback" })
    const registered = await fetch(`${server.url}/oauth/register`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(provider.clientMetadata) })
    const clientId = ((await registered.json()) as { client_id: string }).client_id
    const url = new URL(`${server.url}/oauth/authorize`)
    url.search = new URLSearchParams({
      client_id: clientId,
      response_type: "code",
      redirect_uri: provider.redirectUrl,
      code_challenge: createHash("sha256").update(randomBytes(32).toString("base64url")).digest("base64url"),
      code_challenge_method: "S256",
      resource: mcpUrl,
      state: "st",
      response_mode: "form_post",
    }).toString()
    let last: Response | undefined
    const request = provider.browser.request.bind(provider.browser)
    provider.browser.request = async (...args) => (last = await request(...args))
    await provider.redirectToAuthorization(url)
    // the last page: the form that posts the code
    expect(provider.lastPage).toContain(`action="${provider.redirectUrl}"`)
    expect(provider.lastPage).toMatch(/name="code" value="[^"]+"/)
    const csp = Object.fromEntries(
      (last?.headers.get("content-security-policy") ?? "").split(";").map((d) => d.trim().split(/\s+/)).map(([name, ...values]) => [name, values]),
    ) as Record<string, Array<string> | undefined>
    const script = /<script>([\s\S]*?)<\/script>/.exec(provider.lastPage)?.[1] ?? ""
    expect(csp["script-src"]).toContain(`'sha256-${createHash("sha256").update(script).digest("base64")}'`)
    expect(csp["form-action"]).toContain("http://127.0.0.1:4321")
    expect(csp["frame-ancestors"]).toEqual(["'none'"])
  })
})
