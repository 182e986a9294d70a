/**
 * In-memory Layers of every core port, for tests and embedders. They honour the same atomicity
 * and concurrency rules as the database adapters.
 */
import { Settings, defaultLimits, type LimitSettings } from "@content-site/core"
import { Layer } from "effect"
import { memoryArticleWriter } from "./MemoryArticleWriter.ts"
import {
  memoryDataImporter,
  memoryLimitStore,
  memoryMediaStore,
  memoryOAuthStore,
} from "./MemoryInfrastructure.ts"
import { randomIds, systemClock, webCryptoSecrets } from "@content-site/platform/web"
import { memoryIdempotencyStore } from "./MemoryIdempotencyStore.ts"
import { inlineHtmlAnalyzer } from "./inlineHtmlAnalyzer.ts"
import { type MemoryState, makeMemoryState } from "./MemoryState.ts"
import { memoryRepositories } from "./repositories.ts"

export * from "./MemoryState.ts"
export * from "./MemoryArticleWriter.ts"
export * from "./MemoryInfrastructure.ts"
export * from "./repositories.ts"
export * from "./MemoryImages.ts"
export * from "./MemoryIdempotencyStore.ts"
export * from "./inlineHtmlAnalyzer.ts"

/** A Settings layer. */
export const settingsLayer = (publicUrl: string, limits: Partial<LimitSettings> = {}) =>
  Layer.succeed(Settings, { publicUrl: publicUrl.replace(/\/+$/, ""), limits: { ...defaultLimits, ...limits } })

/** Every storage port in memory over one state (repositories, writer, limits, OAuth, media, import, idempotency keys). */
export const memoryStorage = (state: MemoryState = makeMemoryState(), now: () => number = Date.now) =>
  Layer.mergeAll(
    memoryRepositories(state),
    memoryArticleWriter(state),
    memoryLimitStore(state, now),
    memoryOAuthStore(state, now),
    memoryMediaStore(state),
    memoryDataImporter(state),
    memoryIdempotencyStore(state),
  )

/** Storage plus the web-standard platform (clock, ids, Web Crypto secrets) and the HTML policy in the calling thread: everything but images and settings. */
export const memoryPlatform = (state: MemoryState = makeMemoryState()) =>
  Layer.mergeAll(memoryStorage(state), systemClock, randomIds, webCryptoSecrets(), inlineHtmlAnalyzer)
