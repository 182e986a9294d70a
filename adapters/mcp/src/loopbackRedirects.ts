/**
 * Redirect URIs on this machine's loopback interface (RFC 8252 §7.3, OAuth 2.1): a native client
 * (an agent in a code editor, a command-line client) listens on a port the operating system gives
 * it when it asks for a code, so the port of its `redirect_uri` cannot be known at registration.
 * The authorization server must then take any port there. Claude Code, for one, registers
 * `http://localhost/callback` and asks with `http://localhost:<port>/callback`; VS Code registers
 * one port and falls back to another when it is taken.
 *
 * Only the port may differ: the scheme is plain `http` on both, the host is the same loopback
 * literal (`127.0.0.1`, `[::1]` or `localhost`; `localhost` does not stand for `127.0.0.1`), and
 * everything after the authority (path, query) is the same text. A code sent to another program
 * listening on another port of the same machine is useless to it without the verifier, which
 * PKCE asks of every client here.
 */

/** The hosts a plain-http redirect URI may name: this machine only. */
export const LOOPBACK_HOSTS: ReadonlySet<string> = new Set(["127.0.0.1", "[::1]", "localhost"])

/**
 * The URI as written, without the port of its authority, when it is plain http to a loopback host
 * and names no user; else undefined (no leniency for it). One pass over the URI's text.
 */
export const withoutLoopbackPort = (uri: string): string | undefined => {
  const parsed = URL.parse(uri)
  if (parsed === null || parsed.protocol !== "http:" || !LOOPBACK_HOSTS.has(parsed.hostname) || parsed.username !== "" || parsed.password !== "") return undefined
  // the authority as written: after "http://" up to the first "/", "?" or "#"
  const start = uri.indexOf("://") + 3
  const rest = uri.slice(start)
  const end = rest.search(/[/?#]/)
  const authority = end === -1 ? rest : rest.slice(0, end)
  // a port is the digits after the last ":", at the end ("[::1]:8080", "127.0.0.1:8080"; "[::1]" has none)
  const port = /:\d*$/.exec(authority)
  const host = port !== null ? authority.slice(0, port.index) : authority
  return `${uri.slice(0, start)}${host.toLowerCase()}${end === -1 ? "" : rest.slice(end)}`
}

/**
 * Whether `requested` is one of `registered` but for the port of a loopback URI (RFC 8252 §7.3).
 * Exact matches are the provider's own check; this is the only leniency added to it.
 */
export const loopbackRedirectAllowed = (requested: string, registered: ReadonlyArray<string>): boolean => {
  const bare = withoutLoopbackPort(requested)
  return bare !== undefined && registered.some((uri) => withoutLoopbackPort(uri) === bare)
}
