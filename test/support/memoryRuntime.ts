/**
 * The core's services on in-memory adapters, for a test that drives an adapter's code without a
 * server: memory storage at a fixed clock, web-crypto secrets, inline HTML analysis, no images.
 * Layers in `over` come last and replace what they provide (a store wrapped to race, say).
 */
import type { CoreServices } from "@content-site/core"
import { fixedClock, headerImageInspector, inlineHtmlAnalyzer, makeMemoryState, memoryStorage, settingsLayer, tableImageFetcher } from "@content-site/memory"
import { randomIds, webCryptoSecrets } from "@content-site/platform/web"
import { Layer, ManagedRuntime } from "effect"

/** The public URL the runtime's settings name. */
export const MEMORY_PUBLIC_URL = "https://cs.test"

type Storage = ReturnType<typeof memoryStorage>

export const memoryRuntime = (
  // (`over` is given the storage, for a layer built on it)
  options: { readonly at?: string; readonly over?: (storage: Storage) => ReadonlyArray<Layer.Layer<any>> } = {},
) => {
  const clock = fixedClock(Date.parse(options.at ?? "2026-11-22T12:00:00.000Z"))
  const storage = memoryStorage(makeMemoryState(), clock.now)
  const runtime: ManagedRuntime.ManagedRuntime<CoreServices, never> = ManagedRuntime.make(
    Layer.mergeAll(
      storage,
      clock.layer,
      randomIds,
      webCryptoSecrets(1_000),
      settingsLayer(MEMORY_PUBLIC_URL, {}),
      headerImageInspector,
      inlineHtmlAnalyzer,
      tableImageFetcher(new Map()),
      ...(options.over?.(storage) ?? []),
    ) as Layer.Layer<CoreServices>,
  )
  return { runtime, clock, deps: { runtime, publicUrl: MEMORY_PUBLIC_URL, env: {} } }
}
