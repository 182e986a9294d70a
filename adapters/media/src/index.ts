/** Media adapters: the local-folder media store and the Koa middleware serving `/media/<key>`. */
export { contentTypeOfKey, isMediaKey, localMediaStore, type MediaFileSystem, mediaTypes } from "./localMediaStore.ts"
export { mediaMiddleware, type MediaMiddlewareOptions } from "./mediaMiddleware.ts"
