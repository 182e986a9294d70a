/**
 * Decompression bombs through the real image inspector (`npm run bench -- imageBombs`, minutes):
 * images within the limits (10 MiB, 8000 px a side) that decode to 64 million pixels, each next
 * to a small photo-sized baseline of the same format, one at a time, with the default budget
 * (20 s, two processes). Prints the answer, the wall time, the decoding process's peak memory
 * (VmHWM, read from /proc while it works) and the longest stall of this process's event loop.
 */
import { ImageInspector } from "@content-site/core"
import { makeSharpImageInspector } from "@content-site/images"
import { Effect, Exit } from "effect"
import { execFileSync } from "node:child_process"
import { readdirSync, readFileSync } from "node:fs"
import sharp from "sharp"

const SIDE = 8000

const noise = (side: number): Buffer => {
  const raw = Buffer.alloc(side * side * 3)
  for (let i = 0; i + 4 <= raw.length; i += 4) raw.writeUInt32LE((Math.random() * 2 ** 32) >>> 0, i)
  return raw
}

/** Peak resident memory (MB) of this process's children running imageProcess.ts, by /proc. */
const childPeaks = (): Map<number, number> => {
  const peaks = new Map<number, number>()
  for (const pid of readdirSync("/proc").filter((d) => /^\d+$/.test(d))) {
    try {
      const status = readFileSync(`/proc/${pid}/status`, "utf8")
      if (Number(/^PPid:\s+(\d+)/m.exec(status)?.[1]) !== process.pid) continue
      if (!readFileSync(`/proc/${pid}/cmdline`, "utf8").includes("imageProcess")) continue
      peaks.set(Number(pid), Math.round(Number(/^VmHWM:\s+(\d+)/m.exec(status)?.[1] ?? 0) / 1024))
    } catch {
      // the process ended meanwhile
    }
  }
  return peaks
}

const measure = async (name: string, bytes: Buffer) => {
  let peak = 0
  const poll = setInterval(() => {
    for (const mb of childPeaks().values()) peak = Math.max(peak, mb)
  }, 50)
  let stall = 0
  let last = performance.now()
  const loop = setInterval(() => {
    const now = performance.now()
    stall = Math.max(stall, now - last - 10)
    last = now
  }, 10)
  const started = performance.now()
  const exit = await Effect.runPromiseExit(ImageInspector.use((i) => i.inspect(new Uint8Array(bytes), "bench")).pipe(Effect.provide(makeSharpImageInspector())))
  const seconds = (performance.now() - started) / 1000
  clearInterval(poll)
  clearInterval(loop)
  const answer = Exit.isSuccess(exit) ? `stored ${(exit.value.bytes.byteLength / 1e6).toFixed(1)} MB` : Exit.isFailure(exit) ? `refused: ${JSON.stringify(exit.cause).includes("PayloadTooLarge") ? "413 over the time budget" : "other"}` : ""
  console.log(
    `${name.padEnd(52)} ${(bytes.byteLength / 1e6).toFixed(2).padStart(6)} MB  ${seconds.toFixed(1).padStart(5)} s  child peak ${String(peak).padStart(5)} MB  loop stall ${stall.toFixed(0).padStart(4)} ms  ${answer}`,
  )
}

export const run = async (): Promise<void> => {
  console.log(`${execFileSync("nproc").toString().trim()} cores; each image alone, default budget (20 s, killed 0.5 s later), 2 processes`)
  const photo = noise(1200)
  await measure("baseline: 1200×1200 noise JPEG q80", await sharp(photo, { raw: { width: 1200, height: 1200, channels: 3 } }).jpeg({ quality: 80 }).toBuffer())
  await measure("baseline: 1200×1200 noise AVIF", await sharp(photo, { raw: { width: 1200, height: 1200, channels: 3 } }).avif({ quality: 50, effort: 0 }).toBuffer())
  const solid = sharp({ create: { width: SIDE, height: SIDE, channels: 3, background: "#336699" } })
  await measure(`${SIDE}×${SIDE} PNG of one colour`, await solid.clone().png({ compressionLevel: 9 }).toBuffer())
  await measure(`${SIDE}×${SIDE} AVIF of one colour`, await solid.clone().avif({ quality: 50, effort: 0 }).toBuffer())
  const big = noise(SIDE)
  await measure(`${SIDE}×${SIDE} noise JPEG quality 5`, await sharp(big, { raw: { width: SIDE, height: SIDE, channels: 3 } }).jpeg({ quality: 5 }).toBuffer())
}
