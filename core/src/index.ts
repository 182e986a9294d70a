/**
 * The Content-Site domain core: schemas of every resource, the HTML edit policy, rules for
 * revisions, limits, periods and pagination, the ports the use cases need, and the use cases.
 * It imports only `effect`, unified/rehype/hast packages and web-standard APIs.
 */
export * from "./errors.ts"
export * from "./problem.ts"
export * from "./schema/common.ts"
export * from "./schema/resources.ts"
export * from "./schema/queries.ts"
export * from "./schema/writes.ts"
export * from "./schema/importFile.ts"
export * from "./schema/rewrite.ts"
export * from "./schema/research.ts"
export * from "./schema/decode.ts"
export * from "./html/index.ts"
export * from "./policy/pagination.ts"
export * from "./policy/time.ts"
export * from "./policy/revisions.ts"
export * from "./policy/textEdits.ts"
export * from "./policy/refusedCalls.ts"
export * from "./policy/search.ts"
export * from "./ports/records.ts"
export * from "./ports/Repositories.ts"
export * from "./ports/ArticleWriter.ts"
export * from "./ports/Platform.ts"
export * from "./ports/LimitStore.ts"
export * from "./ports/Media.ts"
export * from "./ports/OAuthStore.ts"
export * from "./ports/DataImporter.ts"
export * from "./ports/IdempotencyStore.ts"
export * from "./ports/RewriteLedger.ts"
export * from "./ports/HtmlAnalyzer.ts"
export * from "./usecases/Caller.ts"
export * from "./usecases/views.ts"
export * from "./usecases/guards.ts"
export * from "./usecases/editContext.ts"
export * from "./usecases/listSites.ts"
export * from "./usecases/listArticles.ts"
export * from "./usecases/searchArticles.ts"
export * from "./usecases/research.ts"
export * from "./usecases/articleResources.ts"
export * from "./usecases/getArticle.ts"
export * from "./usecases/listBacklinks.ts"
export * from "./usecases/getStats.ts"
export * from "./usecases/updateArticle.ts"
export * from "./usecases/editArticle.ts"
export * from "./usecases/diffRevisions.ts"
export * from "./usecases/idempotency.ts"
export * from "./usecases/replaceFeaturedImage.ts"
export * from "./usecases/listRevisions.ts"
export * from "./usecases/getRevision.ts"
export * from "./usecases/restoreRevision.ts"
export * from "./usecases/listActivity.ts"
export * from "./usecases/authenticate.ts"
export * from "./usecases/checkRequestLimit.ts"
export * from "./usecases/checkRegistrationLimit.ts"
export * from "./usecases/recordActivity.ts"
export * from "./usecases/apiKeys.ts"
export * from "./usecases/createAccount.ts"
export * from "./usecases/importData.ts"
export * from "./usecases/applyRewrites.ts"

import type { AccountRepository, ActivityLog, ApiKeyRepository, ArticleRepository, BacklinkRepository, RevisionRepository, SiteRepository } from "./ports/Repositories.ts"
import type { ArticleWriter } from "./ports/ArticleWriter.ts"
import type { Clock, Ids, Secrets, Settings } from "./ports/Platform.ts"
import type { LimitStore } from "./ports/LimitStore.ts"
import type { ImageFetcher, ImageInspector, MediaStore } from "./ports/Media.ts"
import type { OAuthStore } from "./ports/OAuthStore.ts"
import type { DataImporter } from "./ports/DataImporter.ts"
import type { IdempotencyStore } from "./ports/IdempotencyStore.ts"
import type { RewriteLedger } from "./ports/RewriteLedger.ts"
import type { HtmlAnalyzer } from "./ports/HtmlAnalyzer.ts"

/** The storage ports a persistence adapter provides. */
export type StorageServices =
  | AccountRepository
  | ApiKeyRepository
  | SiteRepository
  | ArticleRepository
  | BacklinkRepository
  | RevisionRepository
  | ActivityLog
  | ArticleWriter
  | LimitStore
  | OAuthStore
  | MediaStore
  | DataImporter
  | IdempotencyStore
  | RewriteLedger

/** Every service the use cases need: what a composition root provides. */
export type CoreServices = StorageServices | Clock | Ids | Secrets | Settings | ImageInspector | ImageFetcher | HtmlAnalyzer
