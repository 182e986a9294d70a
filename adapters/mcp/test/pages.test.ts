import { describe, expect, it } from "vitest"
import { consentPage, errorPage, signInPage } from "../src/pages.ts"

const client = { name: "Claude", redirectUri: "https://claude.ai/api/mcp/auth_callback", redirectHost: "claude.ai" }

describe("the agent sign-in pages", () => {
  const pages = {
    signIn: signInPage({ uid: "u1", csrf: "c1", client }),
    consent: consentPage({ uid: "u1", csrf: "c1", client, accountEmail: "a@example.com", fullAccessAsked: true }),
    error: errorPage("Expired", "Start again."),
  }

  it("should carry the service's header and brand mark on every page, in the web pages' colours", () => {
    for (const [name, page] of Object.entries(pages)) {
      expect(page.html, name).toContain('<header class="site-header"><div class="bar"><span class="brand"><span class="brand-mark" aria-hidden="true">CS</span> Content-Site</span></div></header>')
      expect(page.html, name).toContain("--accent:#1d4ed8")
      expect(page.html, name).toContain(".site-header{background:#111827")
    }
  })

  it("should open Connect Site from the consent page in a new tab, so the sign-in is not left", () => {
    expect(pages.consent.html).toContain('<a href="/connect" target="_blank" rel="noopener">Connect Site</a>')
  })
})
