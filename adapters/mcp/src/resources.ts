/**
 * Articles as MCP resources: the template `content-site://articles/{article_id}`, `resources/list`
 * (the account's articles, a page of 50 a call, with a cursor), `resources/read` (the HTML body as
 * `text/html`, the article's other fields in `_meta.article`), and `completion/complete` for `article_id`
 * and `site_id` arguments (of the template and of the prompts) and a prompt's `period`.
 */
import { type Caller, completeArgument, getArticle, isId, listArticleResources, NotFound } from "@content-site/core"
import type { Server } from "@modelcontextprotocol/sdk/server/index.js"
import type { RequestHandlerExtra } from "@modelcontextprotocol/sdk/shared/protocol.js"
import {
  CompleteRequestSchema,
  ListResourcesRequestSchema,
  ListResourceTemplatesRequestSchema,
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

/**
 * The `_meta` key of a read article's fields (every field but its body, named as the API names
 * them): a key name MCP allows (letters, digits, `-`, `_`, `.`).
 */
const ARTICLE_META = "article"

/** The specification's code for a resource that does not exist. */
const RESOURCE_NOT_FOUND = -32002

/** The periods a prompt's `period` completes to (a month `YYYY-MM` works too). */
const PERIODS = ["this_month", "last_month", "last_30_days"]

type Extra = RequestHandlerExtra<ServerRequest, ServerNotification>

/** The article id of a resource URI, or undefined when the URI names no article this server could have. */
const articleIdOf = (uri: string): string | undefined => {
  const match = ARTICLE_URI.exec(uri)
  if (match === null) return undefined
  let id: string
  try {
    id = decodeURIComponent(match[1]!)
  } catch {
    return undefined
  }
  return isId(id) ? id : undefined
}

/** Registers the resource and completion handlers on the server (`unknownCursor`: the refusal of a cursor sent for the templates, which come whole). */
export const registerArticleResources = (server: Server, call: ProtocolCall, contextOf: (extra: Extra) => CallContext, unknownCursor: (extra: Extra) => Error) => {
  server.setRequestHandler(ListResourceTemplatesRequestSchema, (request, extra) => {
    if (request.params?.cursor !== undefined) throw unknownCursor(extra)
    return {
      resourceTemplates: [
        {
          uriTemplate: ARTICLE_TEMPLATE,
          name: "article",
          title: "Article",
          description: "One article of the connected account: its HTML body (text/html), its other fields (title, site, status, dates, keyword, word count, revision, protected links) in _meta.article.",
          mimeType: "text/html",
        },
      ],
    }
  })

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

  // Every read is a call (counted, logged), one of a URI that names no article too: it is not found.
  server.setRequestHandler(ReadResourceRequestSchema, (request, extra) => {
    const id = articleIdOf(request.params.uri)
    return call(
      contextOf(extra),
      "resources/read",
      { articleId: id ?? null },
      (caller) =>
        id === undefined
          ? Effect.fail(new NotFound({ resource: "resource", id: request.params.uri.slice(0, 200) }))
          : Effect.map(getArticle(caller, id), ({ body, ...fields }) => ({
              // under one key: `_meta`'s own key names allow no spaces, and the fields' names ("target keyword") have them
              contents: [{ uri: articleUri(id), mimeType: "text/html", text: body, _meta: { [ARTICLE_META]: fields } }],
            })),
      RESOURCE_NOT_FOUND,
    )
  })

  server.setRequestHandler(CompleteRequestSchema, (request, extra) => {
    const { ref, argument } = request.params
    const context = request.params.context?.arguments ?? {}
    const value = argument.value
    const known =
      (ref.type === "ref/resource" && ref.uri === ARTICLE_TEMPLATE && argument.name === "article_id") ||
      (ref.type === "ref/prompt" && ((ref.name === "monthly_report" && (argument.name === "site_id" || argument.name === "period")) || (ref.name === "refresh_article" && argument.name === "article_id")))
    const siteId = typeof context["site_id"] === "string" && isId(context["site_id"]) ? context["site_id"] : undefined
    // Every completion is a call (counted, logged), one of an argument nothing completes too.
    return call(contextOf(extra), "completion/complete", { siteId: siteId ?? null }, (caller) =>
      !known
        ? Effect.succeed({ completion: { values: [], hasMore: false } })
        : argument.name === "period"
          ? Effect.succeed({ completion: { values: PERIODS.filter((p) => p.startsWith(value)), hasMore: false } })
          : Effect.map(completeArgument(caller, argument.name as "article_id" | "site_id", value, siteId), ({ values, hasMore }) => ({
              completion: { values: [...values], hasMore },
            })),
    )
  })
}
