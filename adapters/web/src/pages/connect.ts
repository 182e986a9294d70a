import type { ApiKeyView } from "@content-site/core"
import { displayName } from "@content-site/http"
import { type Html, html } from "../html.ts"
import { csrfInput } from "../layout.ts"
import { badge, when } from "../ui.ts"

/** A connected MCP client as the MCP adapter lists it. */
export interface ConnectedClientView {
  readonly clientId: string
  readonly name: string
  readonly redirectHost: string
  readonly connectedAt: string
  readonly lastUsedAt: string | null
  /** What the owner allowed (absent from an older MCP adapter: full access). */
  readonly access?: "write" | "read"
}

/** The "Connect Site" page (the specification's name): API keys and agent (MCP) clients. */
export const connectContent = (input: {
  publicUrl: string
  keys: ReadonlyArray<ApiKeyView>
  created: { key: string; view: ApiKeyView } | null
  /** The address named a new key that was shown already (a reload): it is not shown again. */
  shownBefore: boolean
  clients: ReadonlyArray<ConnectedClientView> | null
  csrf: string
  nameError: string | null
  /** A refused key form, offered back as it was sent (the name as typed, the access chosen). */
  keyForm?: { readonly name: string; readonly scope: "write" | "read-only" } | null
  /** Why a key form offered back made no key (its token or the session had expired). */
  keyNotice?: string | null
}): Html => {
  const base = input.publicUrl
  const mcpUrl = `${base}/mcp`
  const active = input.keys.filter((k) => k.revoked_at === null)
  const revoked = input.keys.filter((k) => k.revoked_at !== null)
  const curl = (key: string) => `curl -H "Authorization: Bearer ${key}" ${base}/api/v1/sites`
  return html`<div class="page-head"><div><h1>Connect Site</h1><p class="muted">API keys and AI agents: give your own programs an API key, or connect an AI agent (a chat assistant or code editor) over MCP.</p></div></div>
  ${
    input.shownBefore
      ? html`<div class="notice notice-info" role="status" id="new-key" tabindex="-1" autofocus><p>That new key was shown once and is not shown again. If you did not copy it, revoke it below and create another.</p></div>`
      : ""
  }
  ${
    input.created
      ? html`<section class="card notice-success" aria-labelledby="new-key-title" id="new-key" tabindex="-1" autofocus>
          <h2 id="new-key-title">Your new API key “<bdi>${displayName(input.created.view.name)}</bdi>”</h2>
          <p><strong>Copy it now: it is shown only once.</strong> Only a hash is stored, so nobody can show it to you again.</p>
          <div class="secret"><code id="new-key-value">${input.created.key}</code>
            <button type="button" class="button button-quiet" data-copy="new-key-value" hidden>Copy<span class="visually-hidden"> the key</span></button></div>
          <h3>Try it</h3>
          <pre class="example"><code id="curl-example">${curl(input.created.key)}</code></pre>
          <button type="button" class="button button-quiet button-small" data-copy="curl-example" hidden>Copy<span class="visually-hidden"> the example command</span></button>
        </section>`
      : ""
  }
  <div class="layout-2">
    <div>
      <section class="card" aria-labelledby="create-title">
        <h2 id="create-title">Create an API key</h2>
        ${input.keyNotice ? html`<div class="notice notice-error" role="alert" id="key-form-notice" tabindex="-1" autofocus><p>${input.keyNotice}</p></div>` : ""}
        <form method="post" action="/connect/keys" class="stack">
          ${csrfInput(input.csrf)}
          <div><label for="key-name">Name</label>
            <input type="text" id="key-name" name="name"${input.keyForm ? html` value="${input.keyForm.name}"` : ""} required maxlength="100" aria-describedby="key-name-hint${input.nameError ? " key-name-error" : ""}"${input.nameError ? html` aria-invalid="true" autofocus` : ""}>
            <p class="hint" id="key-name-hint">Where the key is used, e.g. “Reporting script”.</p>
            ${input.nameError ? html`<p class="notice notice-error" id="key-name-error" role="alert">${input.nameError}</p>` : ""}</div>
          <fieldset><legend>Access</legend>
            <label class="radio"><input type="radio" name="scope" value="read-only"${input.keyForm?.scope === "write" ? "" : html` checked`}> Read-only: list sites, articles, backlinks and stats</label>
            <label class="radio"><input type="radio" name="scope" value="write"${input.keyForm?.scope === "write" ? html` checked` : ""}> Write: also edit articles and featured images</label>
          </fieldset>
          <div><button type="submit" class="button">Create key</button></div>
        </form>
      </section>
      <section class="card" aria-labelledby="keys-title">
        <h2 id="keys-title">API keys</h2>
        ${
          active.length === 0
            ? html`<p class="empty">No active keys.</p>`
            : html`<div class="table-wrap"><table class="stacked">
                <caption class="visually-hidden">Active API keys</caption>
                <thead><tr><th scope="col">Name</th><th scope="col">Key id</th><th scope="col">Access</th><th scope="col">Created</th><th scope="col">Last used</th><th scope="col"><span class="visually-hidden">Actions</span></th></tr></thead>
                <tbody>${active.map(
                  (k) => html`<tr>
                    <td data-label="Name"><bdi>${displayName(k.name)}</bdi></td><td data-label="Key id"><code class="key-id">${k.id}</code></td>
                    <td data-label="Access">${badge(k.scope === "write" ? "Write" : "Read-only", k.scope === "write" ? "scheduled" : "neutral")}</td>
                    <td data-label="Created">${when(k.created_at)}</td><td data-label="Last used">${when(k.last_used_at)}</td>
                    <td><form method="post" action="/connect/keys/${encodeURIComponent(k.id)}/revoke" data-confirm="Revoke the key “${displayName(k.name)}”? Programs using it stop working at once.">
                      ${csrfInput(input.csrf)}<button type="submit" class="button button-danger button-small">Revoke<span class="visually-hidden"> key ${displayName(k.name)}</span></button></form></td>
                  </tr>`,
                )}</tbody></table></div>`
        }
        ${
          revoked.length > 0
            ? html`<details><summary>${revoked.length} revoked key${revoked.length === 1 ? "" : "s"}</summary>
                <ul>${revoked.map((k) => html`<li><bdi>${displayName(k.name)}</bdi> <code>${k.id}</code> · revoked ${when(k.revoked_at)}</li>`)}</ul></details>`
            : ""
        }
        <p class="hint">Send the key as <code>Authorization: Bearer &lt;key&gt;</code> or <code>X-API-Key: &lt;key&gt;</code> to <code>${base}/api/v1/…</code>. <a href="/api/docs">API reference</a></p>
      </section>
    </div>
    <div>
      <section class="card" aria-labelledby="mcp-title">
        <h2 id="mcp-title">Connect an AI agent (MCP)</h2>
        <p>Paste this address into your agent client (for example a chat assistant or code editor) as a remote MCP server. It opens a sign-in; sign in and click <strong>Allow</strong>. No API key is needed.</p>
        <div class="secret"><code id="mcp-url">${mcpUrl}</code><button type="button" class="button button-quiet" data-copy="mcp-url" hidden>Copy<span class="visually-hidden"> the MCP address</span></button></div>
      </section>
      <section class="card" aria-labelledby="clients-title">
        <h2 id="clients-title">Connected agents</h2>
        ${
          input.clients === null
            ? html`<p class="empty">Agent connections are not available on this server.</p>`
            : input.clients.length === 0
              ? html`<p class="empty">No agents connected yet.</p>`
              : html`<ul class="protected-list">${input.clients.map((c) => {
                  // Two registrations under one name are told apart by when each was first seen and by their client id.
                  const twins = input.clients!.filter((x) => x.name === c.name)
                  const which = twins.length > 1 ? html` <span class="muted">(${twins.indexOf(c) + 1} of ${twins.length} named so, client <code class="key-id">${c.clientId.slice(-8)}</code>)</span>` : ""
                  return html`<li>
                    <strong><bdi>${displayName(c.name)}</bdi></strong>${which} <span class="muted">(${c.redirectHost})</span> ${badge(c.access === "read" ? "Read-only" : "Read and edit", c.access === "read" ? "neutral" : "scheduled")}<br>
                    <span class="muted">First seen ${when(c.connectedAt)} · last used ${when(c.lastUsedAt)}</span>
                    <form method="post" action="/connect/clients/${encodeURIComponent(c.clientId)}/revoke" data-confirm="Disconnect ${displayName(c.name)}? Its access stops at once.">
                      ${csrfInput(input.csrf)}<button type="submit" class="button button-danger button-small">Disconnect<span class="visually-hidden"> ${displayName(c.name)}</span></button></form>
                  </li>`
                })}</ul>`
        }
      </section>
    </div>
  </div>`
}
