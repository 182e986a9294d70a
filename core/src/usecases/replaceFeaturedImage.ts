import { Effect } from "effect"
import { DailyEditLimit } from "../errors.ts"
import { ArticleWriter } from "../ports/ArticleWriter.ts"
import { ImageFetcher, ImageInspector, MediaStore } from "../ports/Media.ts"
import { Settings } from "../ports/Platform.ts"
import { ArticleRepository } from "../ports/Repositories.ts"
import type { FeaturedImageResult } from "../schema/resources.ts"
import type { Caller } from "./Caller.ts"
import { editBudgetFor, editsRemaining, makeChange } from "./editContext.ts"
import { requireRevision, requireWriteScope } from "./guards.ts"
import { articleView, revisionSummaryView } from "./views.ts"
import { decodeInput } from "../schema/decode.ts"
import { Alt } from "../schema/writes.ts"

/** Where the new image comes from: uploaded bytes or a public https URL. */
export type ImageSource =
  | { readonly kind: "bytes"; readonly bytes: Uint8Array }
  | { readonly kind: "url"; readonly url: string }

/**
 * Replaces an article's featured image: the bytes (uploaded or fetched safely) are judged by
 * decoding, re-encoded, stored in the media store, and the change is a revision like any other.
 * Past the daily edit limit it is DailyEditLimit before anything is stored. With
 * `expectedRevisions` (If-Match, if_revision) an article at another revision is
 * PreconditionFailed, before the image is fetched and again when the change is made; so is, with
 * `unexpectedRevisions` (If-None-Match), an article at a revision named there.
 */
export const replaceFeaturedImage = (
  caller: Caller,
  articleId: string,
  source: ImageSource,
  alt: string | undefined,
  options: { readonly expectedRevisions?: ReadonlyArray<number> | undefined; readonly unexpectedRevisions?: ReadonlyArray<number> | "*" | undefined } = {},
) =>
  Effect.gen(function* () {
    yield* requireWriteScope(caller)
    if (alt !== undefined) yield* decodeInput(Alt, alt, "Featured image", "alt")
    // Another account's (or a missing) article is NotFound before any fetching, decoding or storing.
    const found = yield* (yield* ArticleRepository).get(caller.accountId, articleId)
    yield* requireRevision(options.expectedRevisions, found.revision, options.unexpectedRevisions)
    const { publicUrl } = yield* Settings
    const budget = yield* editBudgetFor(caller)
    // A change the writer would refuse for today's limit is refused before its image is fetched,
    // decoded or stored (an account at its limit can make the service do none of that), and
    // checked again before storing, since the fetch and the decoding take time: a refused upload
    // leaves no file behind (an account at its limit cannot fill the store).
    const refuseWithNoEditsLeft = Effect.gen(function* () {
      if (budget !== null && (yield* editsRemaining(caller)) <= 0) {
        return yield* new DailyEditLimit({ limit: budget.limit, retryAfterSeconds: budget.retryAfterSeconds })
      }
    })
    yield* refuseWithNoEditsLeft
    const raw = source.kind === "bytes" ? source.bytes : yield* (yield* ImageFetcher).fetch(source.url, caller.accountId)
    const image = yield* (yield* ImageInspector).inspect(raw, caller.accountId)
    yield* refuseWithNoEditsLeft
    const media = yield* MediaStore
    const key = yield* media.put(image.bytes, image.contentType, image.extension)
    const url = `${publicUrl}/media/${key}`
    const { current, committed } = yield* (yield* ArticleWriter)
      .change(caller.accountId, articleId, budget, (current) =>
        Effect.flatMap(requireRevision(options.expectedRevisions, current.revision, options.unexpectedRevisions), () =>
          makeChange(caller, current, {
            title: current.title,
            body: current.body,
            word_count: current.word_count,
            featured_image: { url, alt: alt ?? current.featured_image?.alt ?? "" },
            reason: null,
            restored_from: null,
          }),
        ),
      )
      .pipe(
        // A change refused after its image was stored (the day's last edit taken meanwhile, the
        // article deleted, an idempotency key applied by another call) leaves no file behind. Not
        // when the database was unavailable: the commit may have landed without its answer, and a
        // file no revision names is better than a revision that names no file.
        Effect.tapError((e) => (e._tag === "Unavailable" ? Effect.void : Effect.ignore(media.remove(key)))),
      )
    const result: FeaturedImageResult = committed
      ? { article: articleView(committed.article), revision: revisionSummaryView(committed.revision) }
      : { article: articleView(current), revision: null }
    return { result, editsRemaining: committed?.editsRemaining ?? (yield* editsRemaining(caller)) }
  })
