import { ArticleWriter } from "@content-site/core"
import { Effect, Layer } from "effect"

/**
 * The storage layer with its `ArticleWriter` told about every committed change (its revision's
 * origin), for the metrics; everything else as it was. Counted after the commit, so a change
 * refused or rolled back is not counted.
 */
export const countingArticleChanges = <A, E>(storage: Layer.Layer<A | ArticleWriter, E>, changed: (origin: string) => void): Layer.Layer<A | ArticleWriter, E> =>
  Layer.merge(
    storage,
    Layer.effect(
      ArticleWriter,
      Effect.gen(function* () {
        const writer = yield* ArticleWriter
        const change: typeof writer.change = (accountId, articleId, budget, plan) =>
          Effect.tap(writer.change(accountId, articleId, budget, plan), (outcome) =>
            Effect.sync(() => {
              if (outcome.committed !== null) changed(outcome.committed.revision.origin)
            }),
          )
        return { ...writer, change }
      }),
    ).pipe(Layer.provide(storage)),
  )
