/**
 * The child process that does the pixel work (`reencode.ts`) for the image inspector's pool
 * (`processPool.ts`): one job at a time, nothing kept between images. Its parent kills it when
 * an image outlives the time budget; it exits when its parent goes away.
 */
import { setPriority } from "node:os"
import sharp from "sharp"
import { READY, TAKEN } from "./processPool.ts"
import { type ImageType, reencode } from "./reencode.ts"

// Nothing is kept between images: memory goes back after each one.
sharp.cache(false)

// Below the server in the scheduler (nice 10): a decode that keeps every core busy for its whole
// budget (an AVIF bomb) then takes the time the server's event loop and other accounts' requests
// leave over, not theirs. Lowering one's own priority needs no privilege; where it is refused the
// process runs as before.
try {
  setPriority(10)
} catch {
  // not permitted here: the budget and the fair queue still hold
}

// The job is acknowledged before any work on it: a decoder crashing on the image is then always
// a crash under a job taken (its image refused), never a job to give to another process.
process.on("message", (job: { input: Uint8Array; type: ImageType; seconds: number }) => {
  process.send?.(TAKEN, () => void reencode(job.input, job.type, job.seconds).then((answer) => process.send?.(answer)))
})
process.on("disconnect", () => process.exit(0))
process.send?.(READY)
