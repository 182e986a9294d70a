import { memoryStorage } from "@content-site/memory"
import { Effect } from "effect"
import { storageContract } from "./contract.ts"

storageContract("memory", async () => ({ layer: memoryStorage(), close: () => Effect.runPromise(Effect.void) }))
