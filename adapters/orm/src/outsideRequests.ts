import { AsyncResource } from "node:async_hooks"

/**
 * Runs `work` in the async context this module was loaded in, which is no request's. Background
 * work that a request happens to arm (the activity journal's timers and shipping, which serve
 * every request's entries; an idempotency statement tried again after an outage, long after its
 * request was answered) must not run as that request's: a timer keeps the context it was set in,
 * and its statements would be that request's calls in its trace.
 */
export const outsideRequests: <A>(work: () => A) => A = AsyncResource.bind(<A>(work: () => A): A => work())
