import { OAuthStore, type StoredPayload } from "@content-site/core"
import { Effect, Layer, Option } from "effect"
import { memoryRuntime } from "../../../test/support/memoryRuntime.ts"
import { describe, expect, it } from "vitest"
import { SESSION_MODEL, saveSession, type WebSession } from "../src/session.ts"

describe("web sessions", () => {
  it("should not bring back a session signed out (at another instance) between a request's read of it and its write", async () => {
    let signOutAfterCall = false
    // The store as the request sees it: once armed, the request's first call on a session is
    // followed at once by that session's sign-out (at another instance), before its next call.
    const racedStore = (storage: Layer.Layer<any>) =>
      Layer.effect(
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
    const { runtime, deps } = memoryRuntime({ over: (storage) => [racedStore(storage)] })
    try {
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
