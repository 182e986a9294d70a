/**
 * The Chromium the browser tests drive: the one `npm ci` installs (`@sparticuz/chromium`, unpacked
 * on first use), or the binary `CHROMIUM_PATH` names. Nothing installed on the machine by hand.
 */
import { readFileSync } from "node:fs"
import { createRequire } from "node:module"
import Chromium from "@sparticuz/chromium"
import { type Browser, type BrowserContext, chromium, type Page } from "playwright-core"

/**
 * The launch flags: headless, no sandbox (tests run as root), no GPU, no background traffic to
 * hosts this machine cannot reach. `@sparticuz/chromium`'s own defaults are not used: they include
 * `--single-process` (closing a context would end the whole browser) and `--disable-web-security`,
 * which would hide the very CSP and same-origin behaviour some tests check.
 */
export const CHROMIUM_ARGS: ReadonlyArray<string> = [
  "--no-sandbox",
  "--no-zygote",
  "--disable-gpu",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
  "--no-first-run",
  "--no-default-browser-check",
  "--disable-dev-shm-usage",
]

/** The path of the Chromium executable: `CHROMIUM_PATH`, else the npm package's (unpacked once). */
export const chromiumPath = async (): Promise<string> => {
  const configured = process.env["CHROMIUM_PATH"]
  if (configured !== undefined && configured !== "") return configured
  return await Chromium.executablePath()
}

/** Starts a headless Chromium for a test file. */
export const launchChromium = async (): Promise<Browser> =>
  await chromium.launch({ executablePath: await chromiumPath(), args: [...CHROMIUM_ARGS], headless: true })

interface AxeViolation {
  readonly id: string
  readonly impact: string | null
  readonly help: string
  readonly nodes: ReadonlyArray<{ readonly target: ReadonlyArray<string> }>
}

let axeSource: string | undefined

/**
 * axe-core's serious and critical findings on the page, one line each. Evaluated through the
 * DevTools protocol, so the page's strict CSP (no inline script) stays on.
 */
export const seriousViolations = async (page: Page): Promise<ReadonlyArray<string>> => {
  axeSource ??= readFileSync(createRequire(import.meta.url).resolve("axe-core/axe.min.js"), "utf8")
  await page.evaluate(axeSource)
  const violations = (await page.evaluate(`axe.run(document, { resultTypes: ["violations"] }).then((r) => r.violations)`)) as ReadonlyArray<AxeViolation>
  return violations
    .filter((v) => v.impact === "serious" || v.impact === "critical")
    .map((v) => `${v.id} (${v.impact}): ${v.help} at ${v.nodes.map((n) => n.target.join(" ")).join(", ")}`)
}

/**
 * A new browser context of the given size (JavaScript on unless said), signed in on the sign-in
 * page as a person would: the page is left on `/sites`.
 */
export const signedInContext = async (
  browser: Browser,
  baseUrl: string,
  person: { readonly email: string; readonly password: string },
  view: { readonly width: number; readonly height: number; readonly javaScript?: boolean },
): Promise<{ context: BrowserContext; page: Page }> => {
  const context = await browser.newContext({ viewport: { width: view.width, height: view.height }, javaScriptEnabled: view.javaScript ?? true })
  const page = await context.newPage()
  await page.goto(`${baseUrl}/`)
  await page.fill("#email", person.email)
  await page.fill("#password", person.password)
  await Promise.all([page.waitForURL(`${baseUrl}/sites`), page.click("button[type=submit]")])
  return { context, page }
}

/**
 * Registers a public client named `clientName` (its redirect URI a closed loopback port) and
 * answers the address of its authorization request for `scope`: the agent's sign-in page, then
 * its consent page, as a person opening an MCP app's connection sees them.
 */
export const agentAuthorizeUrl = async (url: string, clientName: string, scope: string): Promise<string> => {
  const redirect = "http://127.0.0.1:9/callback"
  const register = await fetch(`${url}/oauth/register`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ client_name: clientName, redirect_uris: [redirect], token_endpoint_auth_method: "none" }),
  })
  const { client_id } = (await register.json()) as { client_id: string }
  const authorize = new URL(`${url}/oauth/authorize`)
  authorize.search = new URLSearchParams({
    client_id,
    response_type: "code",
    redirect_uri: redirect,
    code_challenge: "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM",
    code_challenge_method: "S256",
    scope,
    resource: `${url}/mcp`,
  }).toString()
  return authorize.toString()
}
