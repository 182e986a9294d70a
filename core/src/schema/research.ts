import { Schema } from "effect"
import { ArticleStatus, HttpUrl, Id, SiteId, Timestamp } from "./common.ts"

/**
 * One result of the research connectors' `search`: what chat assistants' research and
 * company-knowledge connectors expect (`id` for `fetch`, `title`, `url` for citations).
 */
export const ResearchResult = Schema.Struct({
  id: Id.annotate({ description: "The article's id: pass it to fetch." }),
  title: Schema.String,
  url: HttpUrl.annotate({ description: "The article's public address, for citations." }),
}).annotate({ title: "ResearchResult" })

/** The answer of the research connectors' `search`: `{ results: [{ id, title, url }] }`. */
export const ResearchResults = Schema.Struct({ results: Schema.Array(ResearchResult) }).annotate({ title: "ResearchResults" })
/** The answer of the research connectors' `search`. */
export type ResearchResults = typeof ResearchResults.Type

/** What `fetch` tells of an article besides its text. */
export const ResearchMetadata = Schema.Struct({
  site_id: SiteId,
  status: ArticleStatus,
  published_at: Schema.NullOr(Timestamp),
  updated_at: Timestamp,
  "target keyword": Schema.String,
  "word count": Schema.Int,
  revision: Schema.Int,
}).annotate({ title: "ResearchMetadata" })

/** The answer of the research connectors' `fetch`: the article's text as prose, its address and facts. */
export const ResearchDocument = Schema.Struct({
  id: Id,
  title: Schema.String,
  text: Schema.String.annotate({ description: "The article's body as prose: paragraphs, headings and list items on lines of their own, no markup." }),
  url: HttpUrl,
  metadata: ResearchMetadata,
}).annotate({ title: "ResearchDocument" })
/** The answer of the research connectors' `fetch`. */
export type ResearchDocument = typeof ResearchDocument.Type
