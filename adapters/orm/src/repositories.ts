/** The read-side repositories on MikroORM: one forked EntityManager per call. */
import {
  AccountRepository,
  ActivityLog,
  ApiKeyRepository,
  ArticleRepository,
  BacklinkRepository,
  NotFound,
  RevisionRepository,
  SiteRepository,
  type Website,
} from "@content-site/core"
import { QueryOrder, type FilterQuery, type InferEntity } from "@mikro-orm/core"
import { Effect, Layer, Option } from "effect"
import {
  AccountEntity,
  ActivityEntity,
  ApiKeyEntity,
  ArticleEntity,
  BacklinkEntity,
  RevisionEntity,
  SiteEntity,
} from "./entities.ts"
import { attempt, isUniqueViolation, toUnavailable } from "./failures.ts"
import {
  accountOf,
  accountRow,
  activityOf,
  activityRow,
  apiKeyOf,
  apiKeyRow,
  articleOf,
  backlinkOf,
  revisionOf,
  type ActivityRow,
} from "./mapping.ts"
import type { Em, Orm } from "./orm.ts"

const pageOf = (slice: { offset: number; limit: number } | undefined) =>
  slice === undefined ? {} : { offset: slice.offset, limit: slice.limit }

/** Counts of articles and backlinks per site, for the given sites. */
const countsBySite = async (em: Em, siteIds: ReadonlyArray<string>) => {
  const articles = new Map<string, number>()
  const backlinks = new Map<string, number>()
  if (siteIds.length === 0) return { articles, backlinks }
  const marks = siteIds.map(() => "?").join(", ")
  const [a, b] = await Promise.all([
    em.execute<Array<{ site_id: string; n: string | number }>>(
      `select site_id, count(*) as n from articles where site_id in (${marks}) group by site_id`,
      [...siteIds],
    ),
    em.execute<Array<{ site_id: string; n: string | number }>>(
      `select site_id, count(*) as n from backlinks where site_id in (${marks}) group by site_id`,
      [...siteIds],
    ),
  ])
  for (const r of a) articles.set(r.site_id, Number(r.n))
  for (const r of b) backlinks.set(r.site_id, Number(r.n))
  return { articles, backlinks }
}

/** Repository Layers over one ORM. */
export const ormRepositories = (orm: Orm) => {
  const fork = (): Em => orm.em.fork() as Em
  const run = <A>(f: (em: Em) => Promise<A>) => attempt(() => f(fork()))

  return Layer.mergeAll(
    Layer.succeed(AccountRepository, {
      findByEmail: (email) =>
        run(async (em) => Option.map(Option.fromNullishOr(await em.findOne(AccountEntity, { email })), accountOf)),
      get: (id) =>
        Effect.flatMap(
          run((em) => em.findOne(AccountEntity, { id })),
          (row) => (row ? Effect.succeed(accountOf(row)) : Effect.fail(new NotFound({ resource: "account", id }))),
        ),
      insert: (account) =>
        run(async (em) => {
          em.create(AccountEntity, accountRow(account))
          await em.flush()
        }),
    }),
    Layer.succeed(ApiKeyRepository, {
      findByHash: (hash) =>
        run(async (em) => Option.map(Option.fromNullishOr(await em.findOne(ApiKeyEntity, { keyHash: hash })), apiKeyOf)),
      list: (accountId) =>
        run(async (em) =>
          (await em.find(ApiKeyEntity, { accountId }, { orderBy: { createdAt: QueryOrder.DESC, id: QueryOrder.ASC } })).map(apiKeyOf),
        ),
      insert: (key) =>
        run(async (em) => {
          em.create(ApiKeyEntity, apiKeyRow(key))
          await em.flush()
        }),
      revoke: (accountId, keyId, at) =>
        Effect.flatMap(
          run((em) =>
            em.transactional(async (tx) => {
              const row = await tx.findOne(ApiKeyEntity, { id: keyId, accountId })
              if (!row) return false
              if (!row.revokedAt) row.revokedAt = new Date(at)
              return true
            }),
          ),
          (found) => (found ? Effect.void : Effect.fail(new NotFound({ resource: "API key", id: keyId }))),
        ),
      touch: (keyId, at) => run((em) => em.nativeUpdate(ApiKeyEntity, { id: keyId }, { lastUsedAt: new Date(at) })).pipe(Effect.asVoid),
    }),
    Layer.succeed(SiteRepository, {
      list: (accountId, slice) =>
        run(async (em) => {
          const [rows, total] = await em.findAndCount(
            SiteEntity,
            { accountId },
            { orderBy: { name: QueryOrder.ASC, id: QueryOrder.ASC }, ...pageOf(slice) },
          )
          const counts = await countsBySite(em, rows.map((r) => r.id))
          const items: Array<Website> = rows.map((s) => ({
            id: s.id,
            name: s.name,
            url: s.url,
            created_at: s.createdAt.toISOString(),
            article_count: counts.articles.get(s.id) ?? 0,
            backlink_count: counts.backlinks.get(s.id) ?? 0,
          }))
          return { items, total }
        }),
      get: (accountId, siteId) =>
        Effect.flatMap(
          run(async (em) => {
            const s = await em.findOne(SiteEntity, { id: siteId, accountId })
            if (!s) return null
            const counts = await countsBySite(em, [s.id])
            const site: Website = {
              id: s.id,
              name: s.name,
              url: s.url,
              created_at: s.createdAt.toISOString(),
              article_count: counts.articles.get(s.id) ?? 0,
              backlink_count: counts.backlinks.get(s.id) ?? 0,
            }
            return site
          }),
          (site) => (site ? Effect.succeed(site) : Effect.fail(new NotFound({ resource: "site", id: siteId }))),
        ),
    }),
    Layer.succeed(ArticleRepository, {
      list: (accountId, filter, slice) =>
        run(async (em) => {
          const where: FilterQuery<InferEntity<typeof ArticleEntity>> & Record<string, unknown> = { accountId, siteId: filter.siteId }
          if (filter.status !== undefined) where.status = filter.status
          if (filter.from !== undefined || filter.to !== undefined) {
            where.publishedAt = {
              $ne: null,
              ...(filter.from !== undefined ? { $gte: new Date(filter.from) } : {}),
              ...(filter.to !== undefined ? { $lte: new Date(filter.to) } : {}),
            }
          }
          const [rows, total] = await em.findAndCount(ArticleEntity, where, {
            orderBy: { publishedAt: QueryOrder.DESC_NULLS_LAST, id: QueryOrder.ASC },
            ...pageOf(slice),
          })
          return { items: rows.map(articleOf), total }
        }),
      get: (accountId, articleId) =>
        Effect.flatMap(
          run((em) => em.findOne(ArticleEntity, { id: articleId, accountId })),
          (row) => (row ? Effect.succeed(articleOf(row)) : Effect.fail(new NotFound({ resource: "article", id: articleId }))),
        ),
    }),
    Layer.succeed(BacklinkRepository, {
      list: (accountId, filter, slice) =>
        run(async (em) => {
          const where: FilterQuery<InferEntity<typeof BacklinkEntity>> & Record<string, unknown> = { accountId, siteId: filter.siteId }
          if (filter.fromDate !== undefined || filter.toDate !== undefined) {
            where.dateAcquired = {
              ...(filter.fromDate !== undefined ? { $gte: filter.fromDate } : {}),
              ...(filter.toDate !== undefined ? { $lte: filter.toDate } : {}),
            }
          }
          const [rows, total] = await em.findAndCount(BacklinkEntity, where, {
            orderBy: { dateAcquired: QueryOrder.DESC, id: QueryOrder.ASC },
            ...pageOf(slice),
          })
          return { items: rows.map(backlinkOf), total }
        }),
    }),
    Layer.succeed(RevisionRepository, {
      list: (accountId, articleId, slice) =>
        run(async (em) => {
          const [rows, total] = await em.findAndCount(
            RevisionEntity,
            { accountId, articleId },
            { orderBy: { number: QueryOrder.DESC }, ...pageOf(slice) },
          )
          return { items: rows.map(revisionOf), total }
        }),
      get: (accountId, articleId, number) =>
        Effect.flatMap(
          run((em) => em.findOne(RevisionEntity, { accountId, articleId, number })),
          (row) =>
            row
              ? Effect.succeed(revisionOf(row))
              : Effect.fail(new NotFound({ resource: "revision", id: `${articleId}/${number}` })),
        ),
    }),
    Layer.succeed(ActivityLog, {
      record: (entry) =>
        Effect.tryPromise({
          try: () => insertActivity(fork(), activityRow(entry)),
          catch: (e) => e,
        }).pipe(
          // a second write of the same request (channel + request_id) is a no-op
          Effect.catch((e) => (isUniqueViolation(e) ? Effect.void : Effect.fail(toUnavailable(e)))),
        ),
      list: (accountId, filter, slice) =>
        run(async (em) => {
          const where: FilterQuery<InferEntity<typeof ActivityEntity>> & Record<string, unknown> = { accountId }
          if (filter.channel !== undefined) where.channel = filter.channel
          if (filter.articleId !== undefined) where.articleId = filter.articleId
          if (filter.outcome !== undefined) where.errorCode = filter.outcome === "error" ? { $ne: null } : null
          if (filter.from !== undefined || filter.to !== undefined) {
            where.at = {
              ...(filter.from !== undefined ? { $gte: new Date(filter.from) } : {}),
              ...(filter.to !== undefined ? { $lte: new Date(filter.to) } : {}),
            }
          }
          const [rows, total] = await em.findAndCount(ActivityEntity, where, {
            orderBy: { at: QueryOrder.DESC, id: QueryOrder.DESC },
            ...pageOf(slice),
          })
          return { items: rows.map(activityOf), total }
        }),
    }),
  )
}

/** Inserts an activity row unless its (channel, request_id) exists already. */
export const insertActivity = async (em: Em, row: ActivityRow): Promise<void> => {
  await em
    .createQueryBuilder(ActivityEntity)
    .insert(row)
    .onConflict(["channel", "requestId"])
    .ignore()
    .execute()
}
