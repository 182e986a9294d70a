// Minimal typings for @koa/multer 4 (ships none): only what the REST adapter uses.
declare module "@koa/multer" {
  import type { Middleware } from "koa"
  export interface MulterFile {
    readonly fieldname: string
    readonly originalname: string
    readonly mimetype: string
    readonly size: number
    readonly buffer: Buffer
  }
  export interface MulterLimits {
    readonly fieldNameSize?: number
    readonly fieldSize?: number
    readonly fields?: number
    readonly fileSize?: number
    readonly files?: number
    readonly parts?: number
    readonly headerPairs?: number
  }
  export interface MulterInstance {
    single(field: string): Middleware
  }
  interface MulterFactory {
    (options: { storage: unknown; limits?: MulterLimits }): MulterInstance
    memoryStorage(): unknown
  }
  const multer: MulterFactory
  export default multer
}
