/**
 * One SDK `Server` for every stateless MCP request. The SDK's HTTP transport is single-use in
 * stateless mode, so the usual pattern builds a `Server` and a transport per request and runs
 * every message through web `Request`/`Response` objects: about 100 µs a call before any tool
 * runs. This transport is an SDK `Transport` connected once: each HTTP request hands it the
 * messages of its body and gets back the answers to its requests. The `Server` (its protocol
 * handling, request validation and handlers) is the SDK's, unchanged; a request enters it where
 * the SDK's own `onmessage` would send it once it knew the message's kind (`handRequestsTo`).
 *
 * Requests from different clients may carry the same JSON-RPC id, so each is given an id of its
 * own on the way in and its client's id back on the way out. Client notifications that name a
 * request by id (`notifications/cancelled`, `notifications/progress`) cannot name one of another
 * HTTP request on a stateless server, and could name someone else's under the shared ids, so they
 * are not passed on.
 */
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js"
import type { JSONRPCMessage, RequestId } from "@modelcontextprotocol/sdk/types.js"

// The messages here are valid JSON-RPC already (the endpoint parsed them with the SDK's schema;
// the server writes its own), so their kind is told by their keys, without a schema parse each.
const isRequest = (m: JSONRPCMessage): m is JSONRPCMessage & { id: RequestId; method: string } => "method" in m && "id" in m
const isNotification = (m: JSONRPCMessage): m is JSONRPCMessage & { method: string } => "method" in m && !("id" in m)
const isAnswer = (m: JSONRPCMessage): m is JSONRPCMessage & { id: RequestId } => ("result" in m || "error" in m) && "id" in m

/** Notifications that refer to a request by its id. */
const REQUEST_BOUND_NOTIFICATIONS = new Set(["notifications/cancelled", "notifications/progress"])

interface Pending<C> {
  readonly clientId: RequestId
  readonly context: C
  /** The 1-based position of the request's message in its exchange's messages. */
  readonly position: number
  readonly answer: (message: JSONRPCMessage) => void
}

/** The SDK protocol's own entry for one request, as its `onmessage` calls it once it knows the kind. */
type RequestEntry = (request: JSONRPCMessage, extra: undefined) => void

/** The transport, and what an HTTP request does with it. */
export interface ExchangeTransport<C> extends Transport {
  /**
   * Hands requests straight to the protocol's own entry for requests, after `connect`. The SDK's
   * `onmessage` tells every message's kind by parsing it with up to three zod schemas, two of
   * them failing for a request (the costly kind: about 4 µs in process, 15 µs of CPU per call
   * under load); here the endpoint parsed each message with the SDK's `JSONRPCMessageSchema`
   * already and a request is told by its keys, so the protocol's answer is known. Everything
   * else still goes through `onmessage`, and so does every message if the SDK's `Protocol` has
   * no such entry. Answers whether the entry was found.
   */
  readonly handRequestsTo: (protocol: object) => boolean
  /**
   * Passes the messages of one HTTP request to the server and resolves with the answers to its
   * requests, in the order of the requests (none when it held only notifications). `context` is
   * what the handlers of these requests see through `contextOf`.
   */
  readonly exchange: (messages: ReadonlyArray<JSONRPCMessage>, context: C) => Promise<Array<JSONRPCMessage>>
  /** The context of the exchange a request being handled belongs to (by the id the server saw). */
  readonly contextOf: (requestId: RequestId) => C | undefined
  /**
   * The 1-based position of a request being handled among the messages of its exchange (by the
   * id the server saw), so that each request of a batch can be told from the others.
   */
  readonly positionOf: (requestId: RequestId) => number | undefined
}

/** A transport for one `Server` shared by every request; contexts of type `C`. */
export const exchangeTransport = <C>(): ExchangeTransport<C> => {
  let next = 0
  const pending = new Map<number, Pending<C>>()
  let requestEntry: RequestEntry | undefined
  const transport: ExchangeTransport<C> = {
    start: async () => {},
    close: async () => {
      transport.onclose?.()
    },
    send: async (message) => {
      // Only answers go back (this server sends no requests or notifications of its own).
      if (!isAnswer(message)) return
      const waiting = typeof message.id === "number" ? pending.get(message.id) : undefined
      if (waiting === undefined) return
      pending.delete(message.id as number)
      waiting.answer({ ...message, id: waiting.clientId })
    },
    exchange: (messages, context) => {
      const answers: Array<Promise<JSONRPCMessage>> = []
      for (let index = 0; index < messages.length; index++) {
        const message = messages[index]!
        if (isRequest(message)) {
          const id = ++next
          answers.push(
            new Promise<JSONRPCMessage>((answer) => {
              pending.set(id, { clientId: message.id, context, position: index + 1, answer })
            }),
          )
          if (requestEntry !== undefined) requestEntry({ ...message, id }, undefined)
          else transport.onmessage?.({ ...message, id })
        } else if (isNotification(message) && !REQUEST_BOUND_NOTIFICATIONS.has(message.method)) {
          transport.onmessage?.(message)
        }
        // A response from the client answers no request of this server: dropped.
      }
      return Promise.all(answers)
    },
    handRequestsTo: (protocol) => {
      // `_onrequest` is the SDK's (its `Protocol` class, 1.x): what its `onmessage` calls for a request
      const entry = (protocol as { _onrequest?: unknown })._onrequest
      requestEntry = typeof entry === "function" ? (entry.bind(protocol) as RequestEntry) : undefined
      return requestEntry !== undefined
    },
    contextOf: (requestId) => (typeof requestId === "number" ? pending.get(requestId)?.context : undefined),
    positionOf: (requestId) => (typeof requestId === "number" ? pending.get(requestId)?.position : undefined),
  }
  return transport
}
