import { describe, expect, it } from "vitest"
import type { ParameterizedContext } from "koa"
import {
  inOwnTurn,
  LARGE_BODY_BYTES,
  parseInTurn,
  TURN_RETRY_AFTER_SECONDS,
  TURNS_WAITING,
  TURNS_WAITING_PER_KEY,
  turnKeyOf,
  turnsWaiting,
} from "../src/ownTurn.ts"

/** A context as far as `turnKeyOf` reads it: the noted account and the socket's address. */
const ctxOf = (accountId: string | undefined, address = "203.0.113.7"): ParameterizedContext =>
  ({
    state: accountId === undefined ? {} : { notes: { accountId } },
    app: { proxy: false },
    req: { socket: { remoteAddress: address } },
  }) as unknown as ParameterizedContext

/** Settles every promise and resolves after `turns` more turns of the event loop. */
const turnsLater = (turns: number): Promise<void> =>
  new Promise((resolve) => {
    const step = (left: number) => (left === 0 ? resolve() : setImmediate(() => step(left - 1)))
    step(turns)
  })

describe("large bodies, one per turn of the event loop", () => {
  it("should run two parses queued together in two turns, in order, with other work between", async () => {
    const order: Array<string> = []
    // Work of the turn after the first parse's (scheduled in the first parse's turn, before it).
    setImmediate(() => setImmediate(() => order.push("other")))
    const first = inOwnTurn("a", () => order.push("first"))
    const second = inOwnTurn("a", () => order.push("second"))
    await first
    // Right after the first parse (its turn's microtasks): the second one waits for a later turn.
    expect(order).toEqual(["first"])
    await second
    expect(order).toEqual(["first", "other", "second"])
  })

  it("should go on after a parse that throws, and give its error to its caller alone", async () => {
    const failing = inOwnTurn("a", () => {
      throw new Error("bad JSON")
    })
    const next = inOwnTurn("a", () => "parsed")
    await expect(failing).rejects.toThrow("bad JSON")
    await expect(next).resolves.toBe("parsed")
  })

  it("should parse a small body at once and only a larger one in a turn of its own", async () => {
    const small = parseInTurn(ctxOf("acc_1"), LARGE_BODY_BYTES, () => "small")
    expect(small).toBe("small")
    const large = parseInTurn(ctxOf("acc_1"), LARGE_BODY_BYTES + 1, () => "large")
    expect(large).toBeInstanceOf(Promise)
    await expect(large).resolves.toBe("large")
  })
})

describe("turns shared fairly between accounts", () => {
  it("should serve another account's body in the second turn, however many the first one queued", async () => {
    const order: Array<string> = []
    const turns: Array<number> = []
    let turn = 0
    // Counts the turns of the event loop while the parses run (one tick per turn, in the check phase).
    const tick = () => {
      turn++
      if (order.length < TURNS_WAITING_PER_KEY + 1) setImmediate(tick)
    }
    setImmediate(tick)
    const parse = (key: string, name: string) =>
      inOwnTurn(key, () => {
        order.push(name)
        turns.push(turn)
      })
    const flood = Array.from({ length: TURNS_WAITING_PER_KEY }, (_, i) => parse("account greedy", `greedy ${i + 1}`))
    // The neighbour's one large body comes after all of them.
    const neighbour = parse("account neighbour", "neighbour")
    await Promise.all([...flood, neighbour])
    expect(order).toEqual(["greedy 1", "neighbour", "greedy 2", "greedy 3", "greedy 4"])
    // One parse a turn: five parses, five different turns.
    expect(new Set(turns).size).toBe(TURNS_WAITING_PER_KEY + 1)
  })

  it("should go round three accounts in the order they came, first come first served within one", async () => {
    const order: Array<string> = []
    const parse = (key: string, name: string) => inOwnTurn(key, () => order.push(name))
    await Promise.all([parse("a", "a1"), parse("a", "a2"), parse("a", "a3"), parse("b", "b1"), parse("c", "c1"), parse("c", "c2"), parse("b", "b2")])
    expect(order).toEqual(["a1", "b1", "c1", "a2", "b2", "c2", "a3"])
  })

  it("should refuse an account past TURNS_WAITING_PER_KEY bodies with RateLimited, and nobody else", async () => {
    const taken = Array.from({ length: TURNS_WAITING_PER_KEY }, (_, i) => inOwnTurn("account greedy", () => i))
    expect(turnsWaiting("account greedy")).toBe(TURNS_WAITING_PER_KEY)
    const refused = inOwnTurn("account greedy", () => "never")
    await expect(refused).rejects.toMatchObject({ _tag: "RateLimited", limit: TURNS_WAITING_PER_KEY, retryAfterSeconds: TURN_RETRY_AFTER_SECONDS })
    const other = inOwnTurn("account neighbour", () => "parsed")
    await expect(other).resolves.toBe("parsed")
    await expect(Promise.all(taken)).resolves.toEqual([0, 1, 2, 3])
    // Once its bodies are parsed, the account is taken again.
    expect(turnsWaiting()).toBe(0)
    await expect(inOwnTurn("account greedy", () => "again")).resolves.toBe("again")
  })

  it("should refuse a new body with Unavailable when TURNS_WAITING wait over every account", async () => {
    const accounts = TURNS_WAITING / TURNS_WAITING_PER_KEY
    const taken: Array<Promise<number>> = []
    for (let a = 0; a < accounts; a++) for (let i = 0; i < TURNS_WAITING_PER_KEY; i++) taken.push(inOwnTurn(`account ${a}`, () => a))
    expect(turnsWaiting()).toBe(TURNS_WAITING)
    await expect(inOwnTurn("account late", () => "never")).rejects.toMatchObject({ _tag: "Unavailable" })
    await Promise.all(taken)
    await turnsLater(1)
    await expect(inOwnTurn("account late", () => "parsed")).resolves.toBe("parsed")
  })

  it("should key a request's turn by its account once authenticated, else by its client address", async () => {
    expect(turnKeyOf(ctxOf("acc_1"))).toBe("account acc_1")
    expect(turnKeyOf(ctxOf(undefined, "198.51.100.4"))).toBe("address 198.51.100.4")
    // Two requests of one account from two addresses share one queue.
    const bodies = Array.from({ length: TURNS_WAITING_PER_KEY }, (_, i) => parseInTurn(ctxOf("acc_1", `198.51.100.${i}`), LARGE_BODY_BYTES + 1, () => i))
    await expect(parseInTurn(ctxOf("acc_1", "198.51.100.99"), LARGE_BODY_BYTES + 1, () => "never")).rejects.toMatchObject({ _tag: "RateLimited" })
    await Promise.all(bodies)
  })
})
