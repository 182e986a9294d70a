import { MediaStore, type StoredMedia, Unavailable } from "@content-site/core"
import { Effect, Layer, Option } from "effect"
import { randomBytes } from "node:crypto"
import * as nodeFs from "node:fs/promises"
import { readFile } from "node:fs/promises"
import { dirname, resolve, sep } from "node:path"

/** The content type of each extension the store keeps: the type is derived from the key, never stored apart. */
export const mediaTypes = {
  jpg: "image/jpeg",
  jpeg: "image/jpeg",
  png: "image/png",
  webp: "image/webp",
  gif: "image/gif",
  avif: "image/avif",
} as const satisfies Record<string, string>

type Extension = keyof typeof mediaTypes

const isExtension = (ext: string): ext is Extension => Object.hasOwn(mediaTypes, ext)

/** `YYYY/MM/<random>.<ext>`: nothing else is a key, so no key can climb out of the folder. */
const KEY = /^(\d{4})\/(0[1-9]|1[0-2])\/([A-Za-z0-9_-]{16,64})\.([a-z]{3,4})$/

/** Whether a string is a well-formed media key of a known type. */
export const isMediaKey = (key: string): boolean => {
  const m = KEY.exec(key)
  return m !== null && isExtension(m[4] ?? "")
}

/** The content type a media key is served with, if it is a well-formed key. */
export const contentTypeOfKey = (key: string): string | undefined => {
  const m = KEY.exec(key)
  const ext = m?.[4] ?? ""
  return m !== null && isExtension(ext) ? mediaTypes[ext] : undefined
}

const newKey = (extension: Extension, now: Date): string => {
  const month = String(now.getUTCMonth() + 1).padStart(2, "0")
  return `${now.getUTCFullYear()}/${month}/${randomBytes(16).toString("base64url")}.${extension}`
}

const codeOf = (e: unknown): string | undefined =>
  typeof e === "object" && e !== null && typeof (e as { code?: unknown }).code === "string" ? (e as { code: string }).code : undefined

/** The file-system operations a put makes (`node:fs/promises` by default; a test may watch or fail them). */
export type MediaFileSystem = Pick<typeof nodeFs, "mkdir" | "open" | "rename" | "unlink">

/**
 * The media store on a local folder: keys `YYYY/MM/<random>.<ext>` (the UTC month of `now`,
 * default the system clock), each file written to a temporary name and renamed into place, so a
 * reader never sees half an image. A put answers only once the file and its name are on disk
 * (the file fsynced before the rename, its folder after, and a new month's folders in theirs):
 * a revision committed after it names a whole image even after a crash of the machine.
 */
export const localMediaStore = (dir: string, now: () => number = Date.now, fs: MediaFileSystem = nodeFs): Layer.Layer<MediaStore> => {
  const root = resolve(dir)
  // Windows cannot open a folder to fsync it (EISDIR/EPERM), and NTFS keeps a rename in its
  // journal: that one step is skipped there; the file itself is still fsynced before its rename.
  // A file system that cannot fsync a folder at all (EINVAL, ENOTSUP: some network and FUSE file
  // systems) is taken as PostgreSQL takes it for its own folders: the step is skipped, not the upload.
  const syncDir = async (path: string): Promise<void> => {
    if (process.platform === "win32") return
    const handle = await fs.open(path, "r")
    try {
      await handle.sync()
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code
      if (code !== "EINVAL" && code !== "ENOTSUP" && code !== "EOPNOTSUPP") throw error
    } finally {
      await handle.close()
    }
  }
  // A month's folder is made durable in its parents once per process, whether this process made it
  // or found it (a process that died between making it and syncing it left it maybe not on disk);
  // concurrent puts of a month wait for the same sync, and a failed one is tried again next time.
  const monthFolders = new Map<string, Promise<void>>()
  const monthFolder = (folder: string): Promise<void> => {
    let ready = monthFolders.get(folder)
    if (ready === undefined) {
      ready = (async () => {
        await fs.mkdir(folder, { recursive: true })
        for (let parent = dirname(folder); parent.length >= root.length; parent = dirname(parent)) await syncDir(parent)
      })()
      ready.catch(() => monthFolders.delete(folder))
      monthFolders.set(folder, ready)
    }
    return ready
  }
  const pathOf = (key: string): string | undefined => {
    if (!isMediaKey(key)) return undefined
    const path = resolve(root, ...key.split("/"))
    // Belt and braces: the pattern already rules out `..`, separators and absolute paths.
    return path.startsWith(root + sep) ? path : undefined
  }

  const put = (bytes: Uint8Array, _contentType: string, extension: string) => {
    const ext = extension.toLowerCase().replace(/^\./, "")
    if (!isExtension(ext)) return Effect.die(new Error(`The media store does not keep '.${extension}' files.`))
    const key = newKey(ext, new Date(now()))
    const path = pathOf(key)
    if (path === undefined) return Effect.die(new Error(`Generated an invalid media key: ${key}`))
    const temporary = `${path}.${randomBytes(6).toString("hex")}.tmp`
    return Effect.tryPromise({
      try: async () => {
        const folder = dirname(path)
        await monthFolder(folder)
        try {
          const file = await fs.open(temporary, "wx")
          try {
            await file.writeFile(bytes)
            await file.sync()
          } finally {
            await file.close()
          }
          await fs.rename(temporary, path)
        } catch (e) {
          await fs.unlink(temporary).catch(() => undefined)
          throw e
        }
        try {
          await syncDir(folder)
        } catch (e) {
          // Not known to be on disk: the put fails, and its file leaves its name (no revision will name it).
          await fs.unlink(path).catch(() => undefined)
          throw e
        }
        return key
      },
      catch: (e) => new Unavailable({ detail: `The media store cannot write (${codeOf(e) ?? "error"}).` }),
    })
  }

  const get = (key: string) => {
    const path = pathOf(key)
    const type = contentTypeOfKey(key)
    if (path === undefined || type === undefined) return Effect.succeed(Option.none<StoredMedia>())
    return Effect.tryPromise({
      try: async () => {
        try {
          const data = await readFile(path)
          return Option.some<StoredMedia>({ bytes: new Uint8Array(data.buffer, data.byteOffset, data.byteLength), contentType: type })
        } catch (e) {
          const code = codeOf(e)
          if (code === "ENOENT" || code === "ENOTDIR" || code === "EISDIR") return Option.none<StoredMedia>()
          throw e
        }
      },
      catch: (e) => new Unavailable({ detail: `The media store cannot read (${codeOf(e) ?? "error"}).` }),
    })
  }

  const remove = (key: string) => {
    const path = pathOf(key)
    if (path === undefined) return Effect.void
    return Effect.tryPromise({
      try: () => fs.unlink(path).catch((e: unknown) => {
        if (codeOf(e) !== "ENOENT" && codeOf(e) !== "ENOTDIR") throw e
      }),
      catch: (e) => new Unavailable({ detail: `The media store cannot remove (${codeOf(e) ?? "error"}).` }),
    })
  }

  return Layer.succeed(MediaStore, { put, get, remove })
}
