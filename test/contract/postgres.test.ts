import { openDatabase } from "@content-site/orm"
import { createTestDatabase } from "../support/databases.ts"
import { storageContract } from "./contract.ts"

storageContract("PostgreSQL", async () => {
  const database = await createTestDatabase()
  const db = await openDatabase({ databaseUrl: database.url })
  return {
    layer: db.layer,
    close: async () => {
      await db.close()
      await database.drop()
    },
  }
})
