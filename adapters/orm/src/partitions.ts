/**
 * The activity log's monthly partitions. `activity` is partitioned by range of `at` (UTC months),
 * one table per month named `activity_pYYYYMM`, and `activity_default` for rows of a month that
 * has none (history inserted by hand, a clock far off). Housekeeping creates the current month and
 * the next `MONTHS_AHEAD` ahead of time, so entries land in their month; the journal's insert
 * creates a missing month if the default partition is gone; `activity prune` drops whole months.
 *
 * A month cannot be created while the default partition holds rows of it (PostgreSQL refuses):
 * such a month is reported and left to the default partition, which is correct, only not split.
 *
 * Names, not catalog bounds, say which month a partition holds: only tables named like ours are
 * ever created or dropped here.
 */
import { consoleEventLog, type OrmEventLog } from "./eventLog.ts"
import type { Sql } from "./sql.ts"

/** Months created ahead of the current one. */
export const MONTHS_AHEAD = 2

const NAME = /^activity_p(\d{4})(\d{2})$/

/** The first instant of `at`'s UTC month. */
export const monthOf = (at: Date): Date => new Date(Date.UTC(at.getUTCFullYear(), at.getUTCMonth(), 1))
const nextMonth = (month: Date): Date => new Date(Date.UTC(month.getUTCFullYear(), month.getUTCMonth() + 1, 1))
/** `activity_pYYYYMM` of a month's first instant. */
export const partitionName = (month: Date): string =>
  `activity_p${month.getUTCFullYear()}${String(month.getUTCMonth() + 1).padStart(2, "0")}`

/** The month partitions that exist, oldest first. */
export const listPartitions = async (sql: Sql): Promise<Array<{ name: string; from: Date; to: Date }>> => {
  const rows = await sql<{ name: string }>(
    `select c.relname as name from pg_inherits i join pg_class c on c.oid = i.inhrelid
      where i.inhparent = 'activity'::regclass order by c.relname`,
    [],
  )
  return rows.flatMap(({ name }) => {
    const m = NAME.exec(name)
    if (m === null) return []
    const from = new Date(Date.UTC(Number(m[1]), Number(m[2]) - 1, 1))
    return [{ name, from, to: nextMonth(from) }]
  })
}

/**
 * Creates the month partitions of `from` .. `to` (both months included) that do not exist yet;
 * answers the names created. Two instances creating the same month at once: one wins, the other
 * finds it made.
 */
export const ensurePartitions = async (sql: Sql, from: Date, to: Date, log: OrmEventLog = consoleEventLog): Promise<Array<string>> => {
  const existing = new Set((await listPartitions(sql)).map((p) => p.name))
  const created: Array<string> = []
  for (let month = monthOf(from); month <= to; month = nextMonth(month)) {
    const name = partitionName(month)
    if (existing.has(name)) continue
    try {
      await sql(
        `create table if not exists "${name}" partition of activity for values from ('${month.toISOString()}') to ('${nextMonth(month).toISOString()}')`,
        [],
      )
      created.push(name)
    } catch (e) {
      // made by another instance meanwhile
      if ((await listPartitions(sql)).some((p) => p.name === name)) continue
      // rows of this month are in the default partition already: they stay there
      if (/default partition/i.test(String((e as { message?: unknown }).message ?? ""))) {
        log.warn({ partition: name }, `activity: the month ${name} stays in activity_default, which holds rows of it already`)
        continue
      }
      throw e
    }
  }
  return created
}

/** The current month and the ones ahead exist (housekeeping, and every start). */
export const ensurePartitionsAhead = (sql: Sql, now: Date = new Date(), log: OrmEventLog = consoleEventLog): Promise<Array<string>> => {
  let last = monthOf(now)
  for (let i = 0; i < MONTHS_AHEAD; i++) last = nextMonth(last)
  return ensurePartitions(sql, now, last, log)
}

/** Whether the database refused a row because no partition holds its time. */
export const isMissingPartition = (error: unknown): boolean => {
  for (let e: unknown = error, i = 0; i < 4 && e !== null && typeof e === "object"; i++) {
    if (/no partition of relation/i.test(String((e as { message?: unknown }).message ?? ""))) return true
    e = (e as { cause?: unknown }).cause
  }
  return false
}
