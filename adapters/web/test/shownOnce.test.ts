import type { CoreServices } from "@content-site/core"
import type { WebSession } from "@content-site/http"
import { fixedClock, headerImageInspector, inlineHtmlAnalyzer, makeMemoryState, memoryStorage, settingsLayer, tableImageFetcher } from "@content-site/memory"
import { randomIds, webCryptoSecrets } from "@content-site/platform/web"
import { Layer, ManagedRuntime } from "effect"
import type { ParameterizedContext } from "koa"
import { describe, expect, it } from "vitest"
import { holdShownOnce, takeShownOnce } from "../src/shownOnce.ts"

describe("secrets shown once", () => {
  it("should hand a secret out once when two requests (at two instances) take it at the same moment", async () => {
    const clock = fixedClock(Date.parse("2026-11-22T12:00:00.000Z"))
    const runtime: ManagedRuntime.ManagedRuntime<CoreServices, never> = ManagedRuntime.make(
      Layer.mergeAll(
        memoryStorage(makeMemoryState(), clock.now),
        clock.layer,
        randomIds,
        webCryptoSecrets(1_000),
        settingsLayer("https://cs.test", {}),
        headerImageInspector,
        inlineHtmlAnalyzer,
        tableImageFetcher(new Map()),
      ),
    )
    try {
      const deps = { runtime, publicUrl: "https://cs.test", env: {} }
      const cookie = "c".repeat(43)
      const ctx = { cookies: { get: () => cookie } } as unknown as ParameterizedContext
      const session: WebSession = { key: "session-key", accountId: "acc_s", csrf: "csrf", createdAt: clock.now(), flash: null }
      const id = await holdShownOnce(ctx, deps, session, { key: "cs_secret" })
      const taken = await Promise.all([takeShownOnce(ctx, deps, session, id), takeShownOnce(ctx, deps, session, id)])
      expect(taken.filter((t) => t !== null)).toEqual([{ key: "cs_secret" }])
      expect(await takeShownOnce(ctx, deps, session, id)).toBeNull()
    } finally {
      await runtime.dispose()
    }
  })
})
