/**
 * The child process that does the pixel work (`reencode.ts`) for the image inspector's pool
 * (`processPool.ts`): one job at a time, nothing kept between images. Its parent kills it when
 * an image outlives the time budget; it exits when its parent goes away.
 */
import sharp from "sharp"
import { READY } from "./processPool.ts"
import { type ImageType, reencode } from "./reencode.ts"

// Nothing is kept between images: memory goes back after each one.
sharp.cache(false)

process.on("message", (job: { input: Uint8Array; type: ImageType; seconds: number }) => {
  void reencode(job.input, job.type, job.seconds).then((answer) => process.send?.(answer))
})
process.on("disconnect", () => process.exit(0))
process.send?.(READY)
