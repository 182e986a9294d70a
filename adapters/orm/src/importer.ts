/** DataImporter on MikroORM: the whole plan in one transaction; rows whose id exists are left alone. */
import { DataImporter, type ImportSummary } from "@content-site/core"
import type { EntityName } from "@mikro-orm/core"
import { Effect, Layer, Semaphore } from "effect"
import pg from "pg"
import { AccountEntity, ApiKeyEntity, ArticleEntity, BacklinkEntity, RevisionEntity, SiteEntity } from "./entities.ts"
import { attempt } from "./failures.ts"
import { accountRow, apiKeyRow, articleRow, backlinkRow, revisionRow, siteRow } from "./mapping.ts"
import type { Em, Orm } from "./orm.ts"
import { nativeSql } from "./sql.ts"

/** Inserts one row unless a row with its id (or another unique key) exists; true when inserted. */
const insertNew = async (em: Em, entity: EntityName<any>, row: object): Promise<boolean> => {
  const res = (await em.createQueryBuilder(entity).insert(row).onConflict().ignore().execute("run")) as { affectedRows?: number }
  return (res.affectedRows ?? 0) > 0
}

/** Where an import's lock is taken: PostgreSQL's URL (none for PGlite, one process already). */
export interface ImportLockConfig {
  readonly databaseUrl: string | undefined
  readonly connectTimeoutMs: number
}

/**
 * One import at a time on a database: a semaphore in this process, and on PostgreSQL an advisory
 * lock held by a session of its own (as `migrateExclusively` takes one) for the other processes.
 * The session's end releases the lock, whatever became of the import (a crashed process too).
 */
const importLock = (config: ImportLockConfig) => {
  const inProcess = Semaphore.makeUnsafe(1)
  return <A, E, R>(effect: Effect.Effect<A, E, R>) => {
    const { databaseUrl } = config
    if (databaseUrl === undefined) return inProcess.withPermit(effect)
    return inProcess.withPermit(
      Effect.acquireUseRelease(
        attempt(async () => {
          const client = new pg.Client({ connectionString: databaseUrl, application_name: "content-site import", connectionTimeoutMillis: config.connectTimeoutMs })
          client.on("error", () => {})
          try {
            await client.connect()
            // (waits as long as the import in hand takes)
            await client.query("select pg_advisory_lock(hashtext('content-site: import'))")
          } catch (e) {
            await client.end().catch(() => {})
            throw e
          }
          return client
        }),
        () => effect,
        (client) => Effect.promise(() => client.end().catch(() => {})),
      ),
    )
  }
}

export const ormDataImporter = (orm: Orm, lock: ImportLockConfig = { databaseUrl: undefined, connectTimeoutMs: 5_000 }) => {
  const sql = nativeSql(orm)
  return Layer.succeed(DataImporter, {
    exclusive: importLock(lock),
    apply: (plan) =>
      attempt(() =>
        (orm.em.fork() as Em).transactional(async (em) => {
          let skipped = 0
          const created = { accounts: 0, apiKeys: 0, sites: 0, articles: 0, backlinks: 0 }
          for (const a of plan.accounts) (await insertNew(em, AccountEntity, accountRow(a))) ? created.accounts++ : skipped++
          for (const k of plan.apiKeys) (await insertNew(em, ApiKeyEntity, apiKeyRow(k))) ? created.apiKeys++ : skipped++
          for (const s of plan.sites) (await insertNew(em, SiteEntity, siteRow(s))) ? created.sites++ : skipped++
          for (const { article, firstRevision } of plan.articles) {
            if (await insertNew(em, ArticleEntity, articleRow(article))) {
              await insertNew(em, RevisionEntity, revisionRow(firstRevision))
              created.articles++
            } else skipped++
          }
          for (const b of plan.backlinks) (await insertNew(em, BacklinkEntity, backlinkRow(b))) ? created.backlinks++ : skipped++
          const summary: ImportSummary = { created, skipped }
          return summary
        }),
      ),
    owners: (kind, ids) =>
      attempt(async () => {
        const out: Array<{ id: string; accountId: string }> = []
        // (a thousand ids a query keeps each statement small, whatever the file)
        for (let i = 0; i < ids.length; i += 1000) {
          const rows = await sql<{ id: string; account_id: string }>(`select id, account_id from ${TABLES[kind]} where id = any($1::text[])`, [ids.slice(i, i + 1000)])
          for (const r of rows) out.push({ id: r.id, accountId: r.account_id })
        }
        return out
      }),
  })
}

const TABLES = { apiKeys: "api_keys", sites: "sites", articles: "articles", backlinks: "backlinks" } as const
