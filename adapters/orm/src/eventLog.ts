/**
 * Where the storage adapter reports its own events (migrations, journal shipping, an outage of the
 * database and its end, housekeeping): a structured log, fields first (pino's `Logger` is one).
 * Without one, events go to the console as plain lines (the admin command line, tests).
 */
export interface OrmEventLog {
  readonly info: (fields: object, msg: string) => void
  readonly warn: (fields: object, msg: string) => void
  readonly error: (fields: object, msg: string) => void
}

const line = (fields: object, msg: string) => (Object.keys(fields).length === 0 ? msg : `${msg} ${JSON.stringify(fields)}`)

/**
 * Events as plain lines on stderr: information (its message), warnings and errors (with their
 * fields). Never stdout, which is a command's answer (`KEY=$(npm run -s admin -- key create ...)`
 * must not catch "database: applied 2 migrations" after an upgrade).
 */
export const consoleEventLog: OrmEventLog = {
  info: (_fields, msg) => console.error(msg),
  warn: (fields, msg) => console.error(line(fields, msg)),
  error: (fields, msg) => console.error(line(fields, msg)),
}

/** The message of a thrown value, for a log field. */
export const messageOf = (e: unknown): string => (e instanceof Error ? e.message : String(e))
