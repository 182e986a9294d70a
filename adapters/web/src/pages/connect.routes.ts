/** Routes: Connect Site (`/connect`): keys shown once, revoking keys and agent connections (confirmed first). */
import type Router from "@koa/router"
import { characterCount, createApiKey, listApiKeys, MAX_KEY_NAME_LENGTH, revokeApiKey, type ApiKeyView } from "@content-site/core"
import { noteCommitted, noteOutcome, noteSubject, runCoreOrThrow, webCallOf } from "../call.ts"
import { confirmContent } from "./confirm.ts"
import { holdShownOnce, takeShownOnce } from "../shownOnce.ts"
import { connectContent, type ConnectedClientView } from "./connect.ts"
import { displayName, setFlash, takeFlash } from "@content-site/http"
import { type FormFields, readForm } from "../forms.ts"
import { type Ctx, CSRF_REFUSED, type Signed, isId, loadMcp, notFound, queryOf, redirect, type PageKit } from "../pageKit.ts"

/** Said by the key form sent with a token of another session or an expired one. */
const FORM_EXPIRED_KEY = "This form was opened in another session or has expired, so no key was created. The name you typed is kept below: create the key again."
/**
 * Said by the key form offered back after signing in again. Any link can fill the form (the name
 * travels in the address), so it says only what is true either way: no key was made, and why
 * when the form had been sent.
 */
const SESSION_EXPIRED_KEY = "No key has been created yet. If you had just sent this form, your session had expired before it arrived: the name you typed is kept below. Check it, then create the key."

/** A sent key form as it is offered back: the name as typed, the access chosen. */
const keyFormOf = (fields: FormFields): { readonly name: string; readonly scope: "write" | "read-only" } => ({
  name: (fields["name"] ?? "").slice(0, 1000),
  scope: fields["scope"] === "write" ? "write" : "read-only",
})

/** The call a key change writes its activity entry for (answered by a redirect, 303), when this request logs. */
const loggedAs = (ctx: Ctx) => {
  const caller = webCallOf(ctx)
  return caller === undefined ? undefined : { caller, httpStatus: 303 }
}

export const mountConnectRoutes = (router: Router, kit: PageKit): void => {
  const { deps, render, signedIn, postedForm, postedFormOrOfferBack } = kit
  const connectedClients = async (accountId: string): Promise<ReadonlyArray<ConnectedClientView> | null> => {
    const mcp = await loadMcp()
    return mcp?.listConnectedClients === undefined ? null : await mcp.listConnectedClients(deps, accountId)
  }

  const showConnect = async (
    ctx: Ctx,
    s: Signed,
    status: number,
    created: { key: string; view: ApiKeyView } | null,
    shownBefore: boolean,
    nameError: string | null,
    keyForm: { readonly name: string; readonly scope: "write" | "read-only" } | null = null,
    keyNotice: string | null = null,
  ) => {
    const [keys, clients] = await Promise.all([runCoreOrThrow(deps, listApiKeys(s.account.id)), connectedClients(s.account.id)])
    render(
      ctx,
      status,
      s,
      "connect",
      nameError === null && keyNotice === null ? "Connect Site" : "Error: Connect Site",
      connectContent({ publicUrl: deps.publicUrl, keys, created, shownBefore, clients, csrf: s.session.csrf, nameError, keyForm, keyNotice }),
      await takeFlash(deps, s.session),
      true,
    )
  }

  router.get(
    "/connect",
    signedIn("GET /connect", async (ctx, s) => {
      const query = queryOf(ctx, ["created", "name", "scope"])
      const createdId = query["created"]
      const held = createdId === undefined ? null : await takeShownOnce(ctx, deps, s.session, createdId)
      const keys = held === null ? [] : await runCoreOrThrow(deps, listApiKeys(s.account.id))
      const view = held === null ? undefined : keys.find((k) => k.id === held["id"])
      const created = view !== undefined && typeof held?.["key"] === "string" ? { key: held["key"], view } : null
      // A key form sent after the session had expired comes back here once signed in: its name
      // and access offered back (never a key: none was made).
      const kept = query["name"] === undefined ? null : { name: query["name"].slice(0, 1000), scope: query["scope"] === "write" ? ("write" as const) : ("read-only" as const) }
      await showConnect(ctx, s, 200, created, createdId !== undefined && created === null, null, kept, kept === null ? null : SESSION_EXPIRED_KEY)
    }),
  )

  router.post(
    "/connect/keys",
    signedIn("POST /connect/keys", async (ctx, s) => {
      // A form opened in another session or before the last sign-in: the page again, with the
      // name typed and the access chosen offered back under a fresh token (never a key).
      const fields = await postedFormOrOfferBack(ctx, s.session, (sent) => showConnect(ctx, s, CSRF_REFUSED.status, null, false, null, keyFormOf(sent), FORM_EXPIRED_KEY))
      if (fields === undefined) return
      const name = (fields["name"] ?? "").trim()
      const scope = fields["scope"] === "write" ? "write" : "read-only"
      // (characters are code points, as the key's schema counts them: 100 emoji fit). A name with
      // nothing to see (only format characters such as zero-width spaces and bidi controls, or
      // spaces) would be a blank row in the list: refused like an empty one.
      if (!/[^\p{Cf}\p{Z}\s]/u.test(name) || characterCount(name) > MAX_KEY_NAME_LENGTH) {
        noteOutcome(ctx, 400, "invalid_request")
        // Offered back as sent: the name as typed, and the access chosen (never reset to read-only unseen).
        return showConnect(ctx, s, 400, null, false, "Give the key a name of 1 to 100 characters, such as “Reporting script”.", { name: (fields["name"] ?? "").slice(0, 1000), scope })
      }
      noteSubject(ctx, { name })
      // The entry (the redirect's 303) is written with the key, in its transaction: no key without its entry.
      const created = await runCoreOrThrow(deps, createApiKey(s.account.id, { name, scope }, loggedAs(ctx)))
      noteCommitted(ctx)
      // Post/redirect/get: the key waits, encrypted, for the one page that shows it; a reload of
      // that page shows it no more, and never makes a second key.
      const heldId = await holdShownOnce(ctx, deps, s.session, { id: created.view.id, key: created.key })
      redirect(ctx, `/connect?created=${heldId}#new-key`)
    }, async (ctx) => {
      // Sent after the session had expired: back to the Connect page with the name and access
      // offered back, in the address the sign-in page returns to (a name is no secret; a key never
      // travels so, none was made).
      const sent = keyFormOf(await readForm(ctx))
      if (!/[^\p{Cf}\p{Z}\s]/u.test(sent.name)) return undefined
      return `/connect?${new URLSearchParams({ name: sent.name.slice(0, 400), scope: sent.scope }).toString().replace(/[^A-Za-z0-9_.\-=&%+]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase().padStart(2, "0")}`)}#create-title`
    }),
  )

  /** A key revoked already (the form sent twice, another tab): said so, and no entry in the activity log. */
  const revokedAlready = async (ctx: Ctx, s: Signed, name: string): Promise<void> => {
    ;(ctx.state as { webCall?: unknown }).webCall = undefined
    await setFlash(deps, s.session, { kind: "info", message: `The key “${displayName(name)}” was revoked already. It no longer works.` })
    redirect(ctx, "/connect")
  }

  router.post(
    "/connect/keys/:keyId/revoke",
    signedIn("POST /connect/keys/{id}/revoke", async (ctx, s) => {
      const keyId = ctx.params["keyId"]
      if (!isId(keyId)) throw notFound("API key", String(keyId))
      const fields = await postedForm(ctx, s.session)
      const keys = await runCoreOrThrow(deps, listApiKeys(s.account.id))
      const key = keys.find((k) => k.id === keyId)
      if (key === undefined) throw notFound("API key", keyId)
      // (a form sent again, another tab: nothing to do, and no second entry in the activity log)
      if (key.revoked_at !== null) return revokedAlready(ctx, s, key.name)
      if (fields["confirmed"] !== "yes") {
        ;(ctx.state as { webCall?: unknown }).webCall = undefined
        return render(ctx, 200, s, "connect", "Revoke the key?", confirmContent({
          title: `Revoke the key “${displayName(key.name)}”?`,
          message: "Programs using it stop working at once. This cannot be undone; you can create a new key.",
          action: `/connect/keys/${encodeURIComponent(keyId)}/revoke`,
          button: "Revoke the key",
          csrf: s.session.csrf,
          fields: {},
          cancel: "/connect",
        }))
      }
      noteSubject(ctx, { name: key.name })
      // (revoked by a twin of this form at the same moment, the read above too early to see it: said so, no second entry)
      // (the entry written with the revocation, in its transaction, when this call revoked it)
      const revoked = await runCoreOrThrow(deps, revokeApiKey(s.account.id, keyId, loggedAs(ctx)))
      if (revoked.already) return revokedAlready(ctx, s, key.name)
      noteCommitted(ctx)
      await setFlash(deps, s.session, { kind: "success", message: `Revoked the key “${displayName(key.name)}”. It no longer works.` })
      redirect(ctx, "/connect")
    }),
  )

  router.post(
    "/connect/clients/:clientId/revoke",
    signedIn("POST /connect/clients/{id}/revoke", async (ctx, s) => {
      const clientId = ctx.params["clientId"] ?? ""
      const fields = await postedForm(ctx, s.session)
      const mcp = await loadMcp()
      if (fields["confirmed"] !== "yes") {
        const client = (await connectedClients(s.account.id))?.find((c) => c.clientId === clientId)
        if (client === undefined) throw notFound("connected agent", clientId)
        ;(ctx.state as { webCall?: unknown }).webCall = undefined
        return render(ctx, 200, s, "connect", "Disconnect the agent?", confirmContent({
          title: `Disconnect ${displayName(client.name)}?`,
          message: "Its access stops at once. It can connect again only if you allow it again.",
          action: `/connect/clients/${encodeURIComponent(clientId)}/revoke`,
          button: "Disconnect",
          csrf: s.session.csrf,
          fields: {},
          cancel: "/connect",
        }))
      }
      const named = (await connectedClients(s.account.id))?.find((c) => c.clientId === clientId)
      if (named !== undefined) noteSubject(ctx, { name: named.name })
      // (the grants, what they issued and the entry: one transaction, all or nothing)
      const done = mcp?.revokeConnectedClient === undefined ? false : await mcp.revokeConnectedClient(deps, s.account.id, clientId, loggedAs(ctx))
      // An unknown client (or another account's) is logged as a revoked key's would be: not found.
      if (!done) noteOutcome(ctx, 404, "not_found")
      else noteCommitted(ctx)
      await setFlash(deps, s.session, done ? { kind: "success", message: "The agent is disconnected; its access stopped." } : { kind: "error", message: "No such connected agent." })
      redirect(ctx, "/connect")
    }),
  )
}
