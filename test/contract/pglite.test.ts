import { openDatabase } from "@content-site/orm"
import { createTempDir } from "../support/databases.ts"
import { storageContract } from "./contract.ts"

storageContract("PGlite", async () => {
  const temp = createTempDir()
  const db = await openDatabase({ dataDir: temp.dir })
  return {
    layer: db.layer,
    close: async () => {
      await db.close()
      temp.remove()
    },
  }
})
