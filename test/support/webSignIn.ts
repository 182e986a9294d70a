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
