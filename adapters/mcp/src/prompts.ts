/**
 * The prompts: `monthly_report` (site_id, period) and `refresh_article` (article_id, optional
 * focus). Each reads what it names as the connection's account (another account's is not_found)
 * and tells the model which tools to use and what to keep.
 */
import { decodeInput, getArticle, Id, InvalidRequest, isMaxCharacters, PeriodParam, SiteRepository, storableText } from "@content-site/core"
import type { Server } from "@modelcontextprotocol/sdk/server/index.js"
import type { RequestHandlerExtra } from "@modelcontextprotocol/sdk/shared/protocol.js"
import { GetPromptRequestSchema, ListPromptsRequestSchema, type ServerNotification, type ServerRequest } from "@modelcontextprotocol/sdk/types.js"
import { Effect, Schema } from "effect"
import type { CallContext, ProtocolCall } from "./calls.ts"
import { articleUri } from "./searchTools.ts"

type Extra = RequestHandlerExtra<ServerRequest, ServerNotification>

const MonthlyReportArgs = Schema.Struct({ site_id: Id, period: Schema.optionalKey(PeriodParam) })
const RefreshArticleArgs = Schema.Struct({
  article_id: Id,
  // (500 characters counted as code points, without NUL or unpaired surrogates, as every other text argument)
  focus: Schema.optionalKey(Schema.String.pipe(Schema.check(isMaxCharacters(500), storableText))),
})

/**
 * A prompt's arguments without its optional ones sent blank: clients with a form for a prompt's
 * arguments (MCP Inspector, editors) send a field left empty as `""`, which means "not given", not
 * an empty period or focus. Required arguments are left as sent (a blank one is refused by name).
 */
const withoutBlankOptional = (raw: Readonly<Record<string, string>>, optional: ReadonlyArray<string>): Record<string, string> => {
  const args = { ...raw }
  for (const name of optional) if (typeof args[name] === "string" && args[name].trim() === "") delete args[name]
  return args
}

/** The prompts as `prompts/list` shows them. */
export const promptDefinitions = [
  {
    name: "monthly_report",
    title: "Monthly report of a website",
    description: "Write a client-ready report of one website's month: articles published and backlinks acquired, from get_stats.",
    arguments: [
      { name: "site_id", description: "The website (list_sites shows the ids; completion offers them).", required: true },
      { name: "period", description: "this_month (default), last_month, last_30_days or a month YYYY-MM.", required: false },
    ],
  },
  {
    name: "refresh_article",
    title: "Refresh an article",
    description: "Update one article's content safely: read it, keep its protected links, edit with find and replace, check the diff.",
    arguments: [
      { name: "article_id", description: "The article (search_articles finds it; completion offers ids and titles).", required: true },
      { name: "focus", description: "What to improve (for example: update the 2025 figures, tighten the intro).", required: false },
    ],
  },
]

/** Registers the prompt handlers on the server (`unknownCursor`: the refusal of a cursor sent for the prompts, which come whole). */
export const registerPrompts = (server: Server, call: ProtocolCall, contextOf: (extra: Extra) => CallContext, unknownCursor: (extra: Extra) => Error) => {
  server.setRequestHandler(ListPromptsRequestSchema, (request, extra) => {
    if (request.params?.cursor !== undefined) throw unknownCursor(extra)
    return { prompts: promptDefinitions }
  })

  server.setRequestHandler(GetPromptRequestSchema, (request, extra) => {
    const { name } = request.params
    const sent = request.params.arguments ?? {}
    if (name === "monthly_report") {
      const raw = withoutBlankOptional(sent, ["period"])
      return call(contextOf(extra), "prompts/get monthly_report", { siteId: typeof raw["site_id"] === "string" ? raw["site_id"] : null }, (caller) =>
        Effect.flatMap(decodeInput(MonthlyReportArgs, raw, "Arguments of monthly_report"), (args) =>
          Effect.map(SiteRepository.use((sites) => sites.get(caller.accountId, args.site_id)), (site) => {
            const period = args.period ?? "this_month"
            return {
              description: `Monthly report of ${site.name}, ${period}`,
              messages: [
                {
                  role: "user" as const,
                  content: {
                    type: "text" as const,
                    text: [
                      `Write the monthly report of the website "${site.name}" (${site.url}, site_id ${site.id}) for the period ${period}.`,
                      `1. Call get_stats with site_id "${site.id}" and period "${period}": it gives the articles published in the period (count, total words, the list) and the backlinks acquired (count, industry, local, the list).`,
                      // list_articles filters on the publication date alone: a draft or an archived article dated in the period is no article of the summary
                      `2. If you need more than the summary shows, call list_articles (with status "published": the summary counts published articles only) or list_backlinks with the same site_id and the period's from/to dates (get_stats answers them).`,
                      "3. Write the report: the numbers first (articles, words, backlinks by category), then the articles (title, date, link) and the notable backlinks (source domain, anchor).",
                      "This is a report only: change nothing (no update_article, edit_article or other write tool).",
                    ].join("\n"),
                  },
                },
              ],
            }
          }),
        ),
      )
    }
    if (name === "refresh_article") {
      const raw = withoutBlankOptional(sent, ["focus"])
      return call(contextOf(extra), "prompts/get refresh_article", { articleId: typeof raw["article_id"] === "string" ? raw["article_id"] : null }, (caller) =>
        Effect.flatMap(decodeInput(RefreshArticleArgs, raw, "Arguments of refresh_article"), (args) =>
          Effect.map(getArticle(caller, args.article_id), (article) => {
            const keep =
              article.protected_links.length === 0
                ? "It has no protected links."
                : `Keep each of its ${article.protected_links.length} protected links exactly as it is (text, href, attributes; moving one is allowed): ${article.protected_links
                    .map((l) => `${l.type} "${l.text}" -> ${l.href ?? "(no href)"}`)
                    .join("; ")}.`
            return {
              description: `Refresh "${article.title}"`,
              messages: [
                {
                  role: "user" as const,
                  content: {
                    type: "text" as const,
                    text: [
                      `Refresh the article "${article.title}" (article_id ${article.id}, revision ${article.revision}, target keyword "${article["target keyword"]}").`,
                      args.focus !== undefined ? `Focus: ${args.focus}` : "Focus: make it current, accurate and clear, keeping its target keyword and length roughly as they are.",
                      `1. Read it with get_article (article_id "${article.id}"): copy every find text from that HTML exactly.`,
                      `2. ${keep} A change to one is refused with protected_link_changed.`,
                      // the dry run without the key: a key names one request, and the dry run's would refuse the change
                      `3. Try the changes with edit_article (find and replace, if_revision ${article.revision}) and dry_run: true and no idempotency_key. Then make them with the same edits without dry_run, passing if_revision ${article.revision}, a fresh idempotency_key (the same one if you retry), response "minimal" and a reason that says what you changed.`,
                      "4. Check the result with diff_revisions; undo with restore_revision if it is not what was meant.",
                    ].join("\n"),
                  },
                },
                {
                  role: "user" as const,
                  content: { type: "resource_link" as const, uri: articleUri(article.id), name: article.id, title: article.title, mimeType: "text/html" },
                },
              ],
            }
          }),
        ),
      )
    }
    return call(contextOf(extra), "prompts/get", {}, () =>
      Effect.fail(
        new InvalidRequest({
          detail: `There is no prompt ${JSON.stringify(name.slice(0, 100))}: the prompts are monthly_report and refresh_article.`,
          errors: [{ path: "name", message: "Unknown prompt" }],
        }),
      ),
    )
  })
}
