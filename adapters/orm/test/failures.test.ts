import { Cause, Effect, Exit, Option } from "effect"
import { describe, expect, it } from "vitest"
import { attempt, editFailureOf, isUnavailable } from "../src/failures.ts"

/** An error as `pg` raises it: the SQLSTATE in `code`. */
const pgError = (code: string, message = `error ${code}`) => Object.assign(new Error(message), { code })
/** The same wrapped as MikroORM raises it: the SQLSTATE in `sqlState`, the driver's error in `previous`. */
const wrapped = (code: string) => Object.assign(new Error("wrapped"), { sqlState: code, previous: pgError(code) })

const unavailable = [
  pgError("08006"), // connection_failure
  pgError("08001"), // sqlclient_unable_to_establish_sqlconnection
  pgError("53300"), // too_many_connections
  pgError("53100"), // disk_full
  pgError("57P01"), // admin_shutdown
  pgError("57P03"), // cannot_connect_now
  pgError("57014"), // query_canceled (statement_timeout)
  pgError("58030"), // io_error
  pgError("3D000"), // invalid_catalog_name (the database was dropped)
  pgError("28P01"), // invalid_password
  pgError("25006"), // read_only_sql_transaction (a standby during failover)
  pgError("40001"), // serialization_failure: a lost race, a retry runs alone
  wrapped("57P01"),
  Object.assign(new Error("connect ECONNREFUSED 127.0.0.1:5432"), { code: "ECONNREFUSED" }),
  new Error("Connection terminated unexpectedly"),
  new Error("timeout exceeded when trying to connect"),
]
const defects = [
  pgError("22008", 'date/time field value out of range: "0000-01-01T00:00:00.000Z"'), // datetime_field_overflow
  pgError("22021"), // character_not_in_repertoire (a NUL)
  pgError("22P02"), // invalid_text_representation
  pgError("08P01", "invalid message format"), // protocol_violation: what pg gets for a NUL in a text parameter
  pgError("23502"), // not_null_violation
  pgError("42601"), // syntax_error
  pgError("42703"), // undefined_column
  pgError("XX000"), // internal_error
  wrapped("22008"),
  new TypeError("Cannot read properties of undefined (reading 'rows')"),
]

describe("database failures", () => {
  it("should call Unavailable only what means the database cannot serve now", () => {
    for (const error of unavailable) expect(isUnavailable(error), `${(error as { code?: string }).code} ${error.message}`).toBe(true)
  })

  it("should not call Unavailable a statement the database refuses for what it says, nor a fault of the code", () => {
    for (const error of defects) expect(isUnavailable(error), `${(error as { code?: string }).code} ${error.message}`).toBe(false)
  })

  it("should run a call failing for an unavailable database as Unavailable, and any other failure as a defect with its cause", async () => {
    for (const error of unavailable) {
      const exit = await Effect.runPromiseExit(attempt(() => Promise.reject(error)))
      expect(Exit.isFailure(exit) && Option.getOrUndefined(Cause.findErrorOption(exit.cause))).toMatchObject({ _tag: "Unavailable" })
    }
    for (const error of defects) {
      const exit = await Effect.runPromiseExit(attempt(() => Promise.reject(error)))
      expect(Exit.isFailure(exit) && Option.isNone(Cause.findErrorOption(exit.cause))).toBe(true)
      expect(Exit.isFailure(exit) && Cause.pretty(exit.cause)).toContain(error.message)
    }
    expect(await Effect.runPromise(attempt(() => Promise.resolve(7)))).toBe(7)
  })

  it("should make a lost race of an edit an EditConflict, an outage Unavailable and a data exception nothing (a defect)", () => {
    for (const code of ["55P03", "40001", "40P01", "23505"]) expect(editFailureOf(pgError(code))?._tag, code).toBe("EditConflict")
    expect(editFailureOf(pgError("08006"))?._tag).toBe("Unavailable")
    expect(editFailureOf(new Error("Connection terminated unexpectedly"))?._tag).toBe("Unavailable")
    expect(editFailureOf(pgError("22021"))).toBeUndefined()
  })
})
