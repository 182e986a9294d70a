import { type ActivityEntry, problemKinds } from "@content-site/core"
import { displayName } from "@content-site/http"

/**
 * What a logged action did, in words, what it tried to do when it was refused or failed (nothing
 * happened then: "Tried to create an API key"), and whether it changes something (an article, a
 * key, an agent).
 */
interface ActionWords {
  readonly verb: string
  readonly tried: string
  readonly change: boolean
}

/**
 * Every action the log holds, by its logged name: REST route templates, MCP tool names and the web
 * pages' own actions. An action missing here is shown by its name.
 */
const FAILED_SIGN_IN_ACTION = "POST / (sign in, wrong password)"
/** The action of a sign-in with an account's email and a wrong password, shown to the account's owner. */
export const FAILED_SIGN_IN = FAILED_SIGN_IN_ACTION
/** The same on the sign-in page an app opens to connect an agent (the MCP adapter logs it). */
const FAILED_AGENT_SIGN_IN_ACTION = "POST /oauth/interaction/{uid}/login (sign in, wrong password)"
const FAILED_SIGN_INS: ReadonlySet<string> = new Set([FAILED_SIGN_IN_ACTION, FAILED_AGENT_SIGN_IN_ACTION])

const ACTIONS: Readonly<Record<string, ActionWords>> = {
  "GET /api/v1/sites": { verb: "Listed sites", tried: "Tried to list sites", change: false },
  "GET /api/v1/sites/{id}/articles": { verb: "Listed articles", tried: "Tried to list articles", change: false },
  "GET /api/v1/articles/{id}": { verb: "Viewed", tried: "Tried to view", change: false },
  "PUT /api/v1/articles/{id}": { verb: "Edited", tried: "Tried to edit", change: true },
  "POST /api/v1/articles/{id}/featured-image": { verb: "Replaced the featured image", tried: "Tried to replace the featured image", change: true },
  "GET /api/v1/articles/{id}/revisions": { verb: "Listed revisions", tried: "Tried to list revisions", change: false },
  "GET /api/v1/articles/{id}/revisions/{number}": { verb: "Viewed a revision", tried: "Tried to view a revision", change: false },
  "GET /api/v1/sites/{id}/backlinks": { verb: "Listed backlinks", tried: "Tried to list backlinks", change: false },
  "GET /api/v1/sites/{id}/stats": { verb: "Read the summary", tried: "Tried to read the summary", change: false },
  "GET /api/v1/activity": { verb: "Read the activity log", tried: "Tried to read the activity log", change: false },
  "GET /api/v1/search": { verb: "Searched articles", tried: "Tried to search articles", change: false },
  "PATCH /api/v1/articles/{id}": { verb: "Edited", tried: "Tried to edit", change: true },
  "GET /api/v1/articles/{id}/diff": { verb: "Compared revisions", tried: "Tried to compare revisions", change: false },
  "POST /api/v1/articles/{id}/revisions/{number}/restore": { verb: "Restored a revision", tried: "Tried to restore a revision", change: true },
  rewrite: { verb: "Rewritten by the platform", tried: "The platform tried to rewrite it", change: true },
  // the platform's administrator (the admin command line's `key create` and `key revoke`)
  "key create": { verb: "Created an API key", tried: "Tried to create an API key", change: true },
  "key revoke": { verb: "Revoked an API key", tried: "Tried to revoke an API key", change: true },
  edit_article: { verb: "Edited", tried: "Tried to edit", change: true },
  list_revisions: { verb: "Listed revisions", tried: "Tried to list revisions", change: false },
  get_revision: { verb: "Viewed a revision", tried: "Tried to view a revision", change: false },
  diff_revisions: { verb: "Compared revisions", tried: "Tried to compare revisions", change: false },
  restore_revision: { verb: "Restored a revision", tried: "Tried to restore a revision", change: true },
  list_sites: { verb: "Listed sites", tried: "Tried to list sites", change: false },
  list_articles: { verb: "Listed articles", tried: "Tried to list articles", change: false },
  get_article: { verb: "Viewed", tried: "Tried to view", change: false },
  list_backlinks: { verb: "Listed backlinks", tried: "Tried to list backlinks", change: false },
  get_stats: { verb: "Read the summary", tried: "Tried to read the summary", change: false },
  update_article: { verb: "Edited", tried: "Tried to edit", change: true },
  replace_featured_image: { verb: "Replaced the featured image", tried: "Tried to replace the featured image", change: true },
  search_articles: { verb: "Searched articles", tried: "Tried to search articles", change: false },
  search: { verb: "Searched articles", tried: "Tried to search articles", change: false },
  fetch: { verb: "Viewed", tried: "Tried to view", change: false },
  // the MCP protocol's own calls that are logged one by one (the MCP adapter's `calls.ts`)
  "resources/list": { verb: "Listed articles", tried: "Tried to list articles", change: false },
  "resources/read": { verb: "Viewed", tried: "Tried to view", change: false },
  "completion/complete": { verb: "Looked up sites or articles to complete a name", tried: "Tried to look up sites or articles to complete a name", change: false },
  "prompts/get": { verb: "Opened a prompt", tried: "Tried to open a prompt", change: false },
  "POST / (sign in)": { verb: "Signed in", tried: "Tried to sign in", change: false },
  [FAILED_SIGN_IN_ACTION]: { verb: "Sign-in with your email and a wrong password", tried: "Sign-in with your email and a wrong password", change: false },
  "POST /articles/{id}/edit": { verb: "Edited", tried: "Tried to edit", change: true },
  "POST /articles/{id}/image": { verb: "Replaced the featured image", tried: "Tried to replace the featured image", change: true },
  "POST /articles/{id}/merge": { verb: "Saved after settling a conflict", tried: "Tried to save after settling a conflict", change: true },
  "POST /articles/{id}/revisions/{number}/restore": { verb: "Restored a revision", tried: "Tried to restore a revision", change: true },
  "POST /connect/keys": { verb: "Created an API key", tried: "Tried to create an API key", change: true },
  "POST /connect/keys/{id}/revoke": { verb: "Revoked an API key", tried: "Tried to revoke an API key", change: true },
  "POST /connect/clients/{id}/revoke": { verb: "Disconnected an agent", tried: "Tried to disconnect an agent", change: true },
  // the agent sign-in and consent pages (the MCP adapter's `interactions.ts`)
  "POST /oauth/interaction/{uid}/login (sign in)": { verb: "Signed in to connect an agent", tried: "Tried to sign in to connect an agent", change: false },
  [FAILED_AGENT_SIGN_IN_ACTION]: { verb: "Sign-in to connect an agent with your email and a wrong password", tried: "Sign-in to connect an agent with your email and a wrong password", change: false },
  "POST /oauth/interaction/{uid}/confirm (allow mcp)": { verb: "Connected an agent (read and edit)", tried: "Tried to connect an agent (read and edit)", change: true },
  "POST /oauth/interaction/{uid}/confirm (allow mcp:read)": { verb: "Connected an agent (read only)", tried: "Tried to connect an agent (read only)", change: true },
}

/** The logged actions that change something: the "changes only" filter. */
export const CHANGE_ACTIONS: ReadonlyArray<string> = Object.entries(ACTIONS)
  .filter(([, w]) => w.change)
  .map(([action]) => action)

const NAMED = /^(.*) “([^”]*)”$/

/**
 * An action no table row names (an API address or method the service does not have, a tool that
 * does not exist), in words: the raw call stays in the entry's details, never as its headline.
 */
const unknownWords = (action: string): string =>
  /^[A-Z]+ \/api\//.test(action) ? "Called an API address or method the service does not offer" : "Called something the service does not offer"

const wordsOf = (action: string): ActionWords | undefined => ACTIONS[action] ?? ACTIONS[action.replace(/^HEAD /, "GET ")]

/** An action's words, done or only tried, with the name of the key or agent it concerned when the action carries one. */
const wordsFor = (action: string, done: boolean): string => {
  const named = NAMED.exec(action)
  // a HEAD is the GET of the same path without its body: the same words
  const words = wordsOf(named === null ? action : named[1]!)
  const phrase = words === undefined ? undefined : done ? words.verb : words.tried
  // (an unknown call was made, refused or not: its words say only that it was called)
  if (named === null) return phrase ?? unknownWords(action)
  return `${phrase ?? named[1]!}: “${displayName(named[2]!)}”`
}

/**
 * What an entry's call did, in words ("Edited", "Viewed", ...), with the name of the key or agent
 * it concerned when the action carries one ("Revoked an API key: “Reporting script”").
 */
export const actionWords = (action: string): string => wordsFor(action, true)

/** Whether an entry's call failed: an error code, a 4xx/5xx status, or `error` (MCP). */
export const failed = (e: ActivityEntry): boolean =>
  e.error_code !== null || (typeof e.status === "number" ? e.status >= 400 : e.status === "error")

const CODE_WORDS: Readonly<Record<string, string>> = Object.fromEntries(
  Object.values(problemKinds).map((k) => [k.code, k.title.toLowerCase()]),
)

/** The outcome in words: "Done", "Refused: protected link changed", "Failed: service unavailable". */
export const outcomeWords = (e: ActivityEntry): string => {
  if (!failed(e)) return "Done"
  const code = e.error_code ?? ""
  if (FAILED_SIGN_INS.has(e.action)) return "Refused: wrong password"
  // A scope refusal says what it means for the caller: the key or the agent may only read.
  if (code === "insufficient_scope") {
    return `Refused: ${e.actor?.type === "oauth_client" ? "the agent was allowed to read only" : e.actor?.type === "api_key" ? "the key is read-only" : "read-only access"}`
  }
  const what = CODE_WORDS[code] ?? (code === "" ? "error" : code.replace(/_/g, " "))
  const status = typeof e.status === "number" ? e.status : 400
  return status >= 500 || code === "internal" || code === "unavailable" ? `Failed: ${what}` : `Refused: ${what}`
}

/**
 * What an entry's call did, in words: what happened when it was done, what was tried and its
 * outcome when it was refused or failed ("Tried to create an API key (refused: too many requests)"),
 * never words that say a refused call happened.
 */
export const entryWords = (e: ActivityEntry): string => {
  if (!failed(e)) return actionWords(e.action)
  const words = wordsFor(e.action, false)
  // (a wrong password's words say already that it was refused, and why)
  if (FAILED_SIGN_INS.has(e.action)) return words
  const outcome = outcomeWords(e)
  return `${words} (${outcome[0]!.toLowerCase()}${outcome.slice(1)})`
}

/** Who made the call, in words: a key's name, an agent's name, or the person. */
export const whoWords = (e: ActivityEntry): string => {
  const actor = e.actor
  if (actor === null) return FAILED_SIGN_INS.has(e.action) ? "Someone on the sign-in page" : "Unknown caller"
  switch (actor.type) {
    case "api_key":
      return `API key “${displayName(actor.name)}”`
    case "oauth_client":
      return `Agent “${displayName(actor.name)}”`
    default:
      return displayName(actor.name)
  }
}

/** The channel in words. */
export const CHANNEL_WORDS: Readonly<Record<ActivityEntry["channel"], string>> = { api: "API", mcp: "Agent (MCP)", web: "Web", platform: "Platform (rewrite job, administrator)" }
