/**
 * Articles as MCP resources: the template `content-site://articles/{article_id}`, `resources/list`
 * (the account's articles, a page of 50 a call, with a cursor), `resources/read` (the HTML body as
 * `text/html`, the article's other fields in `_meta`), and `completion/complete` for `article_id`
 * and `site_id` arguments (of the template and of the prompts) and a prompt's `period`.
 */
import { type Caller, completeArgument, getArticle, isId, listArticleResources } from "@content-site/core"
import type { Server } from "@modelcontextprotocol/sdk/server/index.js"
import type { RequestHandlerExtra } from "@modelcontextprotocol/sdk/shared/protocol.js"
import {
  CompleteRequestSchema,
  ListResourcesRequestSchema,
  ListResourceTemplatesRequestSchema,
  McpError,
  ReadResourceRequestSchema,
  type ServerNotification,
  type ServerRequest,
} from "@modelcontextprotocol/sdk/types.js"
import { Effect } from "effect"
import type { CallContext, ProtocolCall } from "./calls.ts"
import { articleUri } from "./searchTools.ts"

/** The resource template of an article. */
export const ARTICLE_TEMPLATE = "content-site://articles/{article_id}"
const ARTICLE_URI = /^content-site:\/\/articles\/([^/?#]+)$/

/** The specification's code for a resource that does not exist. */
const RESOURCE_NOT_FOUND = -32002

/** The periods a prompt's `period` completes to (a month `YYYY-MM` works too). */
const PERIODS = ["this_month", "last_month", "last_30_days"]

type Extra = RequestHandlerExtra<ServerRequest, ServerNotification>

/** The article id of a resource URI, or an invalid_request problem (as a JSON-RPC error). */
const articleIdOf = (uri: string): string => {
  const match = ARTICLE_URI.exec(uri)
  const id = match === null ? undefined : decodeURIComponent(match[1]!)
  if (id === undefined || !isId(id)) throw new McpError(RESOURCE_NOT_FOUND, `not_found: No resource ${uri.slice(0, 200)}: articles are ${ARTICLE_TEMPLATE}.`)
  return id
}

/** Registers the resource and completion handlers on the server. */
export const registerArticleResources = (server: Server, call: ProtocolCall, contextOf: (extra: Extra) => CallContext) => {
  server.setRequestHandler(ListResourceTemplatesRequestSchema, () => ({
    resourceTemplates: [
      {
        uriTemplate: ARTICLE_TEMPLATE,
        name: "article",
        title: "Article",
        description: "One article of the connected account: its HTML body (text/html), its other fields (title, site, status, dates, keyword, word count, revision, protected links) in _meta.",
        mimeType: "text/html",
      },
    ],
  }))

  server.setRequestHandler(ListResourcesRequestSchema, (request, extra) =>
    call(contextOf(extra), "resources/list", {}, (caller: Caller) =>
      Effect.map(listArticleResources(caller, request.params?.cursor), (page) => ({
        resources: page.items.map((a) => ({
          uri: articleUri(a.id),
          name: a.id,
          title: a.title,
          mimeType: "text/html",
          description: `${a.status}${a.published_at ? `, published ${a.published_at}` : ""}, site ${a.site_id}, ${a.url}`,
        })),
        ...(page.next !== undefined ? { nextCursor: page.next } : {}),
      })),
    ),
  )

  server.setRequestHandler(ReadResourceRequestSchema, (request, extra) => {
    const id = articleIdOf(request.params.uri)
    return call(
      contextOf(extra),
      "resources/read",
      { articleId: id },
      (caller) =>
        Effect.map(getArticle(caller, id), ({ body, ...fields }) => ({
          contents: [{ uri: articleUri(id), mimeType: "text/html", text: body, _meta: fields }],
        })),
      RESOURCE_NOT_FOUND,
    )
  })

  server.setRequestHandler(CompleteRequestSchema, (request, extra) => {
    const { ref, argument } = request.params
    const context = request.params.context?.arguments ?? {}
    const value = argument.value.slice(0, 200)
    const known =
      (ref.type === "ref/resource" && ref.uri === ARTICLE_TEMPLATE && argument.name === "article_id") ||
      (ref.type === "ref/prompt" && ((ref.name === "monthly_report" && (argument.name === "site_id" || argument.name === "period")) || (ref.name === "refresh_article" && argument.name === "article_id")))
    if (!known) return { completion: { values: [], hasMore: false } }
    if (argument.name === "period") {
      return { completion: { values: PERIODS.filter((p) => p.startsWith(value)), hasMore: false } }
    }
    const siteId = typeof context["site_id"] === "string" && isId(context["site_id"]) ? context["site_id"] : undefined
    return call(contextOf(extra), "completion/complete", { siteId: siteId ?? null }, (caller) =>
      Effect.map(completeArgument(caller, argument.name as "article_id" | "site_id", value, siteId), (values) => ({
        completion: { values: [...values], hasMore: false },
      })),
    )
  })
}
