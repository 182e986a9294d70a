import { type CoreServices, OAuthStore, type StoredPayload } from "@content-site/core"
import { fixedClock, headerImageInspector, inlineHtmlAnalyzer, makeMemoryState, memoryStorage, settingsLayer, tableImageFetcher } from "@content-site/memory"
import { randomIds, webCryptoSecrets } from "@content-site/platform/web"
import { Effect, Layer, ManagedRuntime, Option } from "effect"
import { describe, expect, it } from "vitest"
import { SESSION_MODEL, saveSession, type WebSession } from "../src/session.ts"

describe("web sessions", () => {
  it("should not bring back a session signed out (at another instance) between a request's read of it and its write", async () => {
    const clock = fixedClock(Date.parse("2026-11-22T12:00:00.000Z"))
    const storage = memoryStorage(makeMemoryState(), clock.now)
    let signOutAfterCall = false
    // The store as the request sees it: once armed, the request's first call on a session is
    // followed at once by that session's sign-out (at another instance), before its next call.
    const racedStore = Layer.effect(
      OAuthStore,
      OAuthStore.use((inner) => {
        const signOut = (model: string, id: string) => {
          if (!signOutAfterCall || model !== SESSION_MODEL) return Effect.void
          signOutAfterCall = false
          return inner.destroy(model, id)
        }
        return Effect.succeed({
          ...inner,
          find: (model: string, id: string) => Effect.tap(inner.find(model, id), () => signOut(model, id)),
          replace: (model: string, id: string, payload: StoredPayload, expiresInSeconds: number | undefined) =>
            Effect.tap(inner.replace(model, id, payload, expiresInSeconds), () => signOut(model, id)),
        })
      }),
    ).pipe(Layer.provide(storage))
    const runtime: ManagedRuntime.ManagedRuntime<CoreServices, never> = ManagedRuntime.make(
      Layer.mergeAll(
        storage,
        racedStore,
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
      const session: WebSession = { key: "session-key", accountId: "acc_s", csrf: "csrf", createdAt: Date.now(), flash: null }
      await runtime.runPromise(OAuthStore.use((s) => s.upsert(SESSION_MODEL, session.key, { accountId: "acc_s", csrf: "csrf", createdAt: session.createdAt, flash: null }, 3600)))
      signOutAfterCall = true
      await saveSession(deps, { ...session, flash: { kind: "success", message: "Saved." } })
      expect(signOutAfterCall).toBe(false)
      expect(Option.isNone(await runtime.runPromise(OAuthStore.use((s) => s.find(SESSION_MODEL, session.key))))).toBe(true)
    } finally {
      await runtime.dispose()
    }
  })
})
