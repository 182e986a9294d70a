/**
 * Signs in on the web pages' sign-in form as a person would (its pre-session cookie and CSRF
 * token first), for tests that drive the pages with `fetch`: answers the `Cookie` header of the
 * signed-in session (the pre-session cookie with the session's).
 */
export const signInCookie = async (baseUrl: string, email: string, password: string): Promise<string> => {
  const first = await fetch(`${baseUrl}/`)
  const pre = first.headers.getSetCookie().map((c) => c.split(";")[0]!)
  const csrf = /name="_csrf" value="([^"]+)"/.exec(await first.text())?.[1]
  if (csrf === undefined) throw new Error("the sign-in page has no CSRF token")
  const signedIn = await fetch(`${baseUrl}/`, {
    method: "POST",
    redirect: "manual",
    headers: { Cookie: pre.join("; "), "Content-Type": "application/x-www-form-urlencoded" },
    body: new URLSearchParams({ _csrf: csrf, email, password, next: "/sites" }).toString(),
  })
  if (signedIn.status !== 303) throw new Error(`signing in as ${email} answered ${signedIn.status}, not 303`)
  return [...pre, ...signedIn.headers.getSetCookie().map((c) => c.split(";")[0]!)].join("; ")
}

/**
 * A client of the web pages that keeps their cookies (a cookie answered with `Max-Age=0` is
 * dropped) and follows no redirect; `form` sends fields as a posted form. `baseUrl` is read at
 * each request (a test file's server starts after the client is made).
 */
export const cookieClient = (baseUrl: () => string) => {
  const jar = new Map<string, string>()
  const request = async (path: string, init: RequestInit & { form?: Record<string, string> } = {}) => {
    const headers = new Headers(init.headers)
    if (jar.size > 0) headers.set("Cookie", [...jar].map(([k, v]) => `${k}=${v}`).join("; "))
    let body = init.body
    if (init.form) {
      headers.set("Content-Type", "application/x-www-form-urlencoded")
      body = new URLSearchParams(init.form).toString()
    }
    const res = await fetch(`${baseUrl()}${path}`, { ...init, headers, body: body ?? null, redirect: "manual" })
    for (const c of res.headers.getSetCookie()) {
      const [pair] = c.split(";")
      const [name, value] = pair!.split("=") as [string, string]
      if (/Max-Age=0/.test(c)) jar.delete(name)
      else jar.set(name, value)
    }
    return res
  }
  /** The CSRF token of the form on the page at `path`, or "" when it has none. */
  const csrfOf = async (path: string) => /name="_csrf" value="([^"]+)"/.exec(await (await request(path)).text())?.[1] ?? ""
  return { jar, request, csrfOf }
}
