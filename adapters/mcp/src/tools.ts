/**
 * Every MCP tool in one table: title, description written for a model, annotations, input and
 * output schemas from the core, the use case it runs and its text rendering. Longer than 300
 * lines on purpose: like the REST operation table, it is the connector's index, read as a whole.
 */
import {
  ArticlePage,
  Article,
  BacklinkPage,
  type Caller,
  DiffRevisionsArgs,
  diffRevisions,
  EditArticleArgs,
  editArticle,
  FeaturedImageResult,
  GetRevisionArgs,
  getRevision,
  getArticle,
  getStats,
  type ImageSource,
  ArticleId,
  SiteId,
  ListArticlesQuery,
  ListRevisionsQuery,
  listRevisions,
  ListBacklinksQuery,
  ListSitesQuery,
  listArticles,
  listBacklinks,
  listSites,
  PeriodSummary,
  perPageFacts,
  ReplaceFeaturedImageArgs,
  replaceFeaturedImage,
  RESEARCH_RESULTS,
  RestoreRevisionArgs,
  RestoreRevisionResult,
  restoreRevision,
  Revision,
  RevisionDiff,
  RevisionPage,
  StatsQuery,
  UpdateArticleArgs,
  UpdateArticleResult,
  updateArticle,
  WebsitePage,
} from "@content-site/core"
import { Effect, Schema } from "effect"
import type { ContentBlock, ToolAnnotations } from "@modelcontextprotocol/sdk/types.js"
import { pageLine, searchTools, withArticleLinks } from "./searchTools.ts"

/** A JSON Schema object as MCP tool definitions carry it. */
export type JsonSchemaObject = { readonly type: "object"; readonly [key: string]: unknown }

/** What a tool run reports besides its JSON: the ids it touched, for the activity entry. */
export interface ToolTarget {
  readonly siteId?: string | null
  readonly articleId?: string | null
}

/** One MCP tool: its public definition, the core schema its arguments decode with, and its run. */
export interface ToolSpec {
  readonly name: string
  readonly title: string
  readonly description: string
  readonly annotations: ToolAnnotations
  /** Decodes the arguments (typed view of the REST schemas: numbers are numbers). */
  readonly input: Schema.Codec<any, any, never, never>
  /** The schema of `structuredContent`: the REST response schema of the same call. */
  readonly output: Schema.Top
  /** What a call is about (its site, its article). Also read from the arguments as sent, before they decode: only property reads. */
  readonly target: (args: any) => ToolTarget
  readonly run: (caller: Caller, args: any) => Effect.Effect<unknown, any, any>
  readonly render: (result: any) => string
  /** The result's content when not `render`'s text alone (resource links, the research tools' JSON). */
  readonly content?: (result: any) => Array<ContentBlock>
  /** A write whose answer shows a committed change: its activity entry is already in the log. */
  readonly committed?: (result: any) => boolean
  /** A write that takes `idempotency_key`. */
  readonly idempotent?: boolean
  /** A write that takes `response: "minimal"` (its answer without the article's body). */
  readonly minimal?: boolean
}

const READ: ToolAnnotations = { readOnlyHint: true, openWorldHint: false }

/** `if_revision`, the one revision a write may apply to, as the use cases' list of acceptable revisions. */
const revisionsOf = (ifRevision: number | undefined): ReadonlyArray<number> | undefined => (ifRevision === undefined ? undefined : [ifRevision])

/**
 * Descriptions name the limits in force, not the defaults: they are written with these tokens,
 * and `toolDefinitionsFor` puts the configured numbers in their place.
 */
const PER_MINUTE = "{requests_per_minute}"
const PER_DAY = "{daily_edits}"
const MAX_PER_PAGE = "{max_per_page}"
const RESEARCH_RESULTS_TOKEN = "{research_results}"

/** The limits every read tool states. */
const READ_LIMITS = `Limits: ${PER_MINUTE} requests per minute per account (shared with the REST API).`
/** The limits every list tool states: the rate and the page size. */
const LIST_LIMITS = `Limits: ${PER_MINUTE} requests per minute per account (shared with the REST API), page size per_page 1 to ${MAX_PER_PAGE} (default 20, or ${MAX_PER_PAGE} if lower).`
/** The limits every write tool states. */
const WRITE_LIMITS = `Limits: ${PER_DAY} article changes per UTC day per account (daily_edit_limit) and ${PER_MINUTE} requests per minute, both shared with the REST API.`

// The tool inputs are the REST query schemas in their decoded (typed) form plus the path ids.
const ListSitesArgs = Schema.toType(ListSitesQuery)
const ListArticlesArgs = Schema.toType(Schema.Struct({ site_id: SiteId, ...ListArticlesQuery.fields }))
const GetArticleArgs = Schema.toType(Schema.Struct({ article_id: ArticleId }))
const ListBacklinksArgs = Schema.toType(Schema.Struct({ site_id: SiteId, ...ListBacklinksQuery.fields }))
const GetStatsArgs = Schema.toType(Schema.Struct({ site_id: SiteId, ...StatsQuery.fields }))
const ListRevisionsArgs = Schema.toType(Schema.Struct({ article_id: ArticleId, ...ListRevisionsQuery.fields }))

const IDEMPOTENCY =
  "Pass idempotency_key (a fresh UUID per intended change) so that retrying after a timeout or a lost answer is safe: the same key with the same arguments within 24 hours answers the first answer again and changes nothing."

/**
 * Where a write takes dry_run: the key names one request, and a dry run is another request than
 * the change it tries, so a dry run sent with the change's key would get that change refused.
 */
const DRY_RUN_KEY =
  "A dry run is a request of its own: send it without idempotency_key, never with the key of the change it tries (that change would then be refused with idempotency_key_reused)."

/** Tells a model how to keep a write's answer small. */
const MINIMAL =
  "response: \"minimal\" returns the article without its body (title, word count, revision, protected_links and the rest are kept); use it when you do not need to read the result back. The default, \"full\", returns the whole article."

const revisionLine = (r: { number: number; origin: string; created_at: string; reason: string | null; restored_from: number | null; actor: { name: string } }) =>
  `- revision ${r.number} (${r.origin}, ${r.created_at}, by ${r.actor.name})${r.restored_from !== null ? ` restored from ${r.restored_from}` : ""}${r.reason ? `: ${r.reason}` : ""}`

const protectedLine = (a: { protected_links: ReadonlyArray<{ type: string; href: string | null; text: string }> }) =>
  a.protected_links.length === 0
    ? "Protected links: none."
    : `Protected links (keep each exactly as it is): ${a.protected_links.map((l) => `${l.type} "${l.text}" -> ${l.href ?? "(no href)"}`).join("; ")}.`

const editOutcome = (r: typeof UpdateArticleResult.Type) =>
  [
    r.dry_run === true
      ? "Dry run: nothing was written; the edit passes every check (protected links intact) and would apply as shown."
      : r.revision === null
        ? // (true of an edit identical to the article and of one sent again on its base, found saved already)
          "Nothing changed: the article holds this edit already, so no new revision was made."
        : `Saved as revision ${r.revision.number}.`,
    ...(r.merge === undefined
      ? []
      : [
          `Merged: your edit was written against revision ${r.merge.base} and the article was at revision ${r.merge.theirs}; ${r.merge.merged_units} change(s) made since were kept alongside yours.`,
        ]),
    `Article ${r.article.id} "${r.article.title}" is at revision ${r.article.revision}, ${r.article["word count"]} words.`,
    r.sanitized.changed
      ? `The sanitiser removed: ${r.sanitized.removed.map((x) => `${x.what} x${x.count}`).join(", ")}.`
      : "The sanitiser removed nothing.",
  ].join("\n")

const imageText = (i: { url: string; alt: string } | null) => (i === null ? "(none)" : `${i.url} (alt: ${JSON.stringify(i.alt)})`)

const articleLine = (a: { id: string; title: string; status: string; published_at: string | null; "word count": number; url: string }) =>
  `- ${a.title} [id ${a.id}, ${a.status}${a.published_at ? `, published ${a.published_at}` : ""}, ${a["word count"]} words] ${a.url}`

const backlinkLine = (b: { id: string; date_acquired: string; source_url: string; target_url: string; anchor_text: string; category: string }) =>
  `- ${b.date_acquired} ${b.category}: ${b.source_url} -> ${b.target_url} ("${b.anchor_text}") [id ${b.id}]`

// image_base64 is standard base64 once decoded (its schema's check); Node's decoder skips its white space itself (no copy of the text without it).
const byteSource = (args: { url?: string; image_base64?: string }): ImageSource =>
  args.url !== undefined ? { kind: "url", url: args.url } : { kind: "bytes", bytes: new Uint8Array(Buffer.from(args.image_base64 ?? "", "base64")) }

/** The tools of the contract, in the order clients list them. */
export const tools: ReadonlyArray<ToolSpec> = [
  {
    name: "list_sites",
    title: "List websites",
    description: [
      "List the websites on the connected account, sorted by name, with how many articles and backlinks each has.",
      "Use it first: the other tools name a website by site_id or an article by article_id (search_articles and search can also search every website at once), and ids are opaque strings (for example 'site_1') that only this tool and the list tools reveal.",
      LIST_LIMITS,
    ].join(" "),
    annotations: READ,
    input: ListSitesArgs,
    output: WebsitePage,
    target: () => ({}),
    run: (caller, args) => listSites(caller, args),
    render: (r: typeof WebsitePage.Type) =>
      [
        ...r.data.map((s) => `- ${s.name} (${s.url}) [site_id ${s.id}]: ${s.article_count} articles, ${s.backlink_count} backlinks`),
        pageLine(r.pagination),
      ].join("\n"),
  },
  {
    name: "list_articles",
    title: "List a website's articles",
    description: [
      "List the articles of one website, newest published first, without their bodies (use get_article for the HTML).",
      "With q (search words, as search_articles takes them) only the matching articles, best match first.",
      "Filter with from/to (YYYY-MM-DD or an RFC 3339 date-time, both inclusive; a bare `to` date means the end of that UTC day) on the publication date, and with status (draft, scheduled, published, archived).",
      "site_id comes from list_sites. A site of another account is not_found.",
      LIST_LIMITS,
    ].join(" "),
    annotations: READ,
    input: ListArticlesArgs,
    output: ArticlePage,
    target: (a: { site_id: string }) => ({ siteId: a.site_id }),
    run: (caller, { site_id, ...query }) => listArticles(caller, site_id, query),
    render: (r: typeof ArticlePage.Type) => [...r.data.map(articleLine), pageLine(r.pagination)].join("\n"),
    content: withArticleLinks((r: typeof ArticlePage.Type) => [...r.data.map(articleLine), pageLine(r.pagination)].join("\n")),
  },
  {
    name: "get_article",
    title: "Get one article",
    description: [
      "Get one article with its full HTML body, its current revision number and protected_links: the links carrying data-service-protected (purchased backlinks, internal links), each of which every edit must keep exactly as it is (it may move within the body).",
      "Read it before edit_article or update_article: copy find texts from this body exactly, and pass the revision as if_revision so the edit is refused (precondition_failed) if somebody changed the article in between.",
      "article_id comes from list_articles or get_stats. An article of another account is not_found.",
      READ_LIMITS,
    ].join(" "),
    annotations: READ,
    input: GetArticleArgs,
    output: Article,
    target: (a: { article_id: string }) => ({ articleId: a.article_id }),
    run: (caller, args) => getArticle(caller, args.article_id),
    render: (a: typeof Article.Type) =>
      [
        `${a.title}`,
        `id ${a.id}, site ${a.site_id}, revision ${a.revision}, ${a.status}${a.published_at ? `, published ${a.published_at}` : ""}, ${a["word count"]} words`,
        `url ${a.url}; target keyword: ${a["target keyword"] || "(none)"}; featured image: ${a["featured image"] ? a["featured image"].url : "(none)"}`,
        protectedLine(a),
        "",
        a.body,
      ].join("\n"),
  },
  {
    name: "list_backlinks",
    title: "List a website's backlinks",
    description: [
      "List the backlinks acquired for one website, newest first: source domain and URL, target URL, anchor text and type, category (industry or local).",
      "Filter with from/to (YYYY-MM-DD or an RFC 3339 date-time, both inclusive) on the acquisition date. site_id comes from list_sites.",
      LIST_LIMITS,
    ].join(" "),
    annotations: READ,
    input: ListBacklinksArgs,
    output: BacklinkPage,
    target: (a: { site_id: string }) => ({ siteId: a.site_id }),
    run: (caller, { site_id, ...query }) => listBacklinks(caller, site_id, query),
    render: (r: typeof BacklinkPage.Type) => [...r.data.map(backlinkLine), pageLine(r.pagination)].join("\n"),
  },
  {
    name: "get_stats",
    title: "Summarise a period",
    description: [
      "Summarise one website over a period, for a monthly report: the published articles (count, total words, the list) and the backlinks acquired (count, industry, local, the list).",
      "period is this_month (default), last_month, last_30_days (today and the 29 days before) or a UTC month YYYY-MM. site_id comes from list_sites.",
      READ_LIMITS,
    ].join(" "),
    annotations: READ,
    input: GetStatsArgs,
    output: PeriodSummary,
    target: (a: { site_id: string }) => ({ siteId: a.site_id }),
    run: (caller, { site_id, ...query }) => getStats(caller, site_id, query),
    render: (r: typeof PeriodSummary.Type) =>
      [
        `Site ${r.site_id}, ${r.period.key}: ${r.period.from} to ${r.period.to}.`,
        `${r.articles.count} published articles, ${r.articles["word count"]} words${r.articles.items.length === 0 ? "." : ":"}`,
        ...r.articles.items.map(articleLine),
        `${r.backlinks.count} backlinks (${r.backlinks.industry} industry, ${r.backlinks.local} local)${r.backlinks.items.length === 0 ? "." : ":"}`,
        ...r.backlinks.items.map(backlinkLine),
      ].join("\n"),
  },
  {
    name: "update_article",
    title: "Edit an article's title or body",
    description: [
      "Replace an article's title and/or its WHOLE HTML body (give at least one; the url, status, keyword and backlinks cannot be changed here), with an optional reason kept on the revision.",
      "To change a sentence or a paragraph, prefer edit_article: it sends only the text to find and its replacement, and cannot lose the rest of the body.",
      "The body is sanitised like the editor does (scripts, iframes, event handlers, javascript: URLs are removed; the result says what was removed).",
      "Every element carrying data-service-protected in the current body must stay exactly as it is (moving it is allowed); removing, changing or adding one is refused with protected_link_changed, listing the blocks.",
      "Use dry_run: true to check an edit without writing anything.",
      "Pass base_revision (the revision you read with get_article): if somebody changed the article meanwhile, your edit is merged with theirs block by block (the result's merge says so) instead of erasing it; if you both changed the same paragraph or the title differently, the answer is edit_conflict with conflicts (base, theirs, mine for each) and nothing is written: get_article again and redo your change on the new text. Alternatively pass if_revision to refuse the edit with precondition_failed on any change since (not both).",
      "Each real change is a new revision; an edit identical to the current article writes nothing (revision null).",
      "Undo a change with restore_revision.",
      IDEMPOTENCY,
      DRY_RUN_KEY,
      MINIMAL,
      `${WRITE_LIMITS} The body may be at most 1 MiB, the title 1 to 300 characters.`,
    ].join(" "),
    annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: false },
    idempotent: true,
    minimal: true,
    input: UpdateArticleArgs,
    output: UpdateArticleResult,
    target: (a: { article_id: string }) => ({ articleId: a.article_id }),
    run: (caller, { article_id, dry_run, if_revision, idempotency_key: _key, response: _shape, ...body }) =>
      Effect.map(
        updateArticle(caller, article_id, body, { dryRun: dry_run === true, expectedRevisions: revisionsOf(if_revision) }),
        (outcome) => outcome.result,
      ),
    committed: (r: typeof UpdateArticleResult.Type) => r.revision !== null,
    render: editOutcome,
  },
  {
    name: "edit_article",
    title: "Edit part of an article (find and replace)",
    description: [
      "Change part of an article's body by find and replace, and/or its title: the preferred way to fix a sentence, a word or a paragraph, since only the changed text travels and the rest of the body cannot be lost.",
      "First read the article with get_article. Each find must be copied exactly from that body (the HTML as served, tags and entities included) and occur there exactly once; edits apply in order, each on the result of the one before. A find found 0 or 2+ times is refused with edit_not_applicable, naming the edit (edits/0/find) and the count (0, or 2 meaning 2 or more): add surrounding text to make it unique.",
      "Keep every link listed in protected_links exactly as it is (moving it is fine); removing or changing one is refused with protected_link_changed.",
      "Pass if_revision (from get_article) to be refused with precondition_failed if somebody changed the article since; without it the edits are made on the newest body. dry_run: true checks without writing.",
      "The result is sanitised like any edit and saved as a new revision; undo it with restore_revision (the previous number is the saved revision minus one).",
      IDEMPOTENCY,
      DRY_RUN_KEY,
      MINIMAL,
      `${WRITE_LIMITS} At most 100 edits a call.`,
    ].join(" "),
    annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: false },
    idempotent: true,
    minimal: true,
    input: EditArticleArgs,
    output: UpdateArticleResult,
    target: (a: { article_id: string }) => ({ articleId: a.article_id }),
    run: (caller, { article_id, dry_run, if_revision, idempotency_key: _key, response: _shape, ...body }) =>
      Effect.map(editArticle(caller, article_id, body, { dryRun: dry_run === true, expectedRevisions: revisionsOf(if_revision) }), (outcome) => outcome.result),
    committed: (r: typeof UpdateArticleResult.Type) => r.revision !== null,
    render: editOutcome,
  },
  {
    name: "list_revisions",
    title: "List an article's revisions",
    description: [
      "List the saved versions of one article, newest first, without bodies: number, origin (api, mcp, editor, rewrite), who, when, reason, and restored_from for restores.",
      "Use it to find the revision to compare (diff_revisions), read (get_revision) or bring back (restore_revision). article_id comes from list_articles.",
      LIST_LIMITS,
    ].join(" "),
    annotations: READ,
    input: ListRevisionsArgs,
    output: RevisionPage,
    target: (a: { article_id: string }) => ({ articleId: a.article_id }),
    run: (caller, { article_id, ...query }) => listRevisions(caller, article_id, query),
    render: (r: typeof RevisionPage.Type) => [...r.data.map(revisionLine), pageLine(r.pagination)].join("\n"),
  },
  {
    name: "get_revision",
    title: "Get one revision",
    description: [
      "Get one saved version of an article (article_id and its number from list_revisions), with its title, HTML body and featured image as they were then.",
      READ_LIMITS,
    ].join(" "),
    annotations: READ,
    input: GetRevisionArgs,
    output: Revision,
    target: (a: { article_id: string }) => ({ articleId: a.article_id }),
    run: (caller, args: typeof GetRevisionArgs.Type) => getRevision(caller, args.article_id, args.number),
    render: (r: typeof Revision.Type) =>
      [
        revisionLine(r),
        `Title: ${r.title}`,
        `Featured image: ${r["featured image"] ? `${r["featured image"].url} (alt: ${r["featured image"].alt})` : "(none)"}`,
        "",
        r.body,
      ].join("\n"),
  },
  {
    name: "diff_revisions",
    title: "Show what changed between two revisions",
    description: [
      "Compare two revisions of an article: a unified diff of the bodies with one block element (paragraph, heading, list item) a line, the number of words added and removed, and both titles and both featured images if they differ. body.granularity says how finely they were compared within the comparison's budget of work (word; block: words of changed lines counted whole; whole: the differing middle replaced whole), with a note when coarser than word.",
      "from is the older revision number, to the newer one (default: the current revision). Use it to check what an edit really changed, or what a restore would bring back.",
      READ_LIMITS,
    ].join(" "),
    annotations: READ,
    input: DiffRevisionsArgs,
    output: RevisionDiff,
    target: (a: { article_id: string }) => ({ articleId: a.article_id }),
    run: (caller, args: typeof DiffRevisionsArgs.Type) => diffRevisions(caller, args.article_id, args.from, args.to),
    render: (d: typeof RevisionDiff.Type) =>
      [
        `From revision ${d.from} to revision ${d.to}: ${d.body.added_words} ${d.body.added_words === 1 ? "word" : "words"} added, ${d.body.removed_words} removed.`,
        ...(d.body.note === null ? [] : [d.body.note]),
        d.title === null ? "Title unchanged." : `Title: "${d.title.from}" -> "${d.title.to}".`,
        d["featured image"] === null
          ? "Featured image unchanged."
          : `Featured image: ${imageText(d["featured image"].from)} -> ${imageText(d["featured image"].to)}.`,
        d.body.unified === "" ? "Body unchanged." : d.body.unified,
      ].join("\n"),
  },
  {
    name: "restore_revision",
    title: "Restore an earlier revision",
    description: [
      "Undo changes: make an earlier revision's title, body and featured image the article's again, saved as a new revision (restored_from set). Find the number with list_revisions and check what it brings back with diff_revisions first.",
      "Refused with protected_link_changed if it would remove or change a protected link of the current body (links the platform added after that revision must stay). Restoring the state the article is already in writes nothing (revision null).",
      "Pass if_revision (from get_article) to be refused with precondition_failed if the article changed since.",
      IDEMPOTENCY,
      MINIMAL,
      WRITE_LIMITS,
    ].join(" "),
    annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: false },
    idempotent: true,
    minimal: true,
    input: RestoreRevisionArgs,
    output: RestoreRevisionResult,
    target: (a: { article_id: string }) => ({ articleId: a.article_id }),
    run: (caller, args: typeof RestoreRevisionArgs.Type) =>
      Effect.map(restoreRevision(caller, args.article_id, args.number, args.reason, { expectedRevisions: revisionsOf(args.if_revision) }), (outcome) => outcome.result),
    committed: (r: typeof RestoreRevisionResult.Type) => r.revision !== null,
    render: (r: typeof RestoreRevisionResult.Type) =>
      [
        r.revision === null
          ? "Nothing changed: the article already is in that state."
          : `Restored revision ${r.revision.restored_from} as revision ${r.revision.number}.`,
        `Article ${r.article.id} "${r.article.title}" is at revision ${r.article.revision}, ${r.article["word count"]} words.`,
      ].join("\n"),
  },
  {
    name: "replace_featured_image",
    title: "Replace an article's featured image",
    description: [
      "Replace an article's featured image, from an https URL on a public host (url) or from the bytes themselves (image_base64 with mime_type); alt sets the alternative text (kept from the old image when omitted).",
      "Accepted: JPEG, PNG, WebP, GIF, AVIF, judged by decoding, at most 10 MiB and 8000 px a side; never SVG (unsupported_image, payload_too_large).",
      "URLs must be https and resolve to public addresses (unsafe_url); fetch failures are image_fetch_failed.",
      "Pass if_revision (from get_article) to be refused with precondition_failed if the article changed since.",
      `The image is stored by the service and the change is a new revision. ${WRITE_LIMITS}`,
      IDEMPOTENCY,
      MINIMAL,
    ].join(" "),
    annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: true },
    idempotent: true,
    minimal: true,
    input: ReplaceFeaturedImageArgs,
    output: FeaturedImageResult,
    target: (a: { article_id: string }) => ({ articleId: a.article_id }),
    run: (caller, args: typeof ReplaceFeaturedImageArgs.Type) =>
      Effect.map(replaceFeaturedImage(caller, args.article_id, byteSource(args), args.alt, { expectedRevisions: revisionsOf(args.if_revision) }), (outcome) => outcome.result),
    committed: (r: typeof FeaturedImageResult.Type) => r.revision !== null,
    render: (r: typeof FeaturedImageResult.Type) =>
      [
        r.revision === null ? "Nothing changed." : `Saved as revision ${r.revision.number}.`,
        `Article ${r.article.id} "${r.article.title}" now has the featured image ${r.article["featured image"]?.url ?? "(none)"} (alt: ${r.article["featured image"]?.alt ?? ""}).`,
      ].join("\n"),
  },
  ...searchTools,
]

const jsonSchemaOf = (schema: Schema.Top, closed: boolean): JsonSchemaObject => {
  // Tool arguments are decoded refusing unknown keys at every level (an edit's too); the schema says so too.
  const document = Schema.toJsonSchemaDocument(schema, closed ? { onExcessProperty: "error" } : {})
  const definitions = document.definitions as Record<string, unknown>
  const root = { ...(document.schema as Record<string, unknown>) }
  if (Object.keys(definitions).length > 0) root["$defs"] = definitions
  if (closed) root["additionalProperties"] = false
  return { ...root, type: "object" }
}

/** The limits a tool description states. */
export interface DescribedLimits {
  readonly requestsPerMinute: number
  readonly dailyEdits: number
  readonly maxPerPage: number
}

/** A description with the limits in force in place of its tokens. */
export const describeWith = (text: string, limits: DescribedLimits): string =>
  text
    .replaceAll(PER_MINUTE, String(limits.requestsPerMinute))
    .replaceAll(PER_DAY, String(limits.dailyEdits))
    .replaceAll(MAX_PER_PAGE, String(limits.maxPerPage))
    // `search` answers one page of this size (researchSearch): the operator's page size when lower
    .replaceAll(RESEARCH_RESULTS_TOKEN, String(Math.min(RESEARCH_RESULTS, limits.maxPerPage)))

// JSON Schemas generated once from the core's Effect schemas; only the descriptions vary.
const schemas = tools.map((tool) => ({ inputSchema: jsonSchemaOf(tool.input, true), outputSchema: jsonSchemaOf(tool.output, false) }))

/** An input schema whose `per_page` allows what the server allows: the operator's MAX_PER_PAGE, not the schema's ceiling. */
const withPageSize = (inputSchema: JsonSchemaObject, maxPerPage: number): JsonSchemaObject => {
  const properties = inputSchema["properties"] as Record<string, Record<string, unknown>> | undefined
  const perPage = properties?.["per_page"]
  if (properties === undefined || perPage === undefined) return inputSchema
  const facts = perPageFacts(maxPerPage)
  return { ...inputSchema, properties: { ...properties, per_page: { ...perPage, maximum: facts.maximum, default: facts.default, description: facts.description } } }
}

/** The MCP tool list, its descriptions and page sizes stating the limits in force. */
export const toolDefinitionsFor = (limits: DescribedLimits) =>
  tools.map((tool, i) => ({
    name: tool.name,
    title: tool.title,
    description: describeWith(tool.description, limits),
    inputSchema: withPageSize(schemas[i]!.inputSchema, limits.maxPerPage),
    outputSchema: schemas[i]!.outputSchema,
    annotations: { title: tool.title, ...tool.annotations },
  }))

/** A tool by name. */
export const toolNamed = (name: string): ToolSpec | undefined => tools.find((t) => t.name === name)
