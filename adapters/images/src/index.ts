/** Image adapters: the sharp-based inspector and the SSRF-safe fetcher. */
export { concurrentDecodes, decodesPerAccount, decodesWaiting, imageWorkSeconds, type ImageBudget, makeSharpImageInspector, maxImageBytes, maxImageSide, sharpImageInspector } from "./sharpImageInspector.ts"
export { FETCHES_PER_ACCOUNT, safeImageFetcher, type SafeImageFetcherOptions } from "./safeImageFetcher.ts"
export { deniedIPv4Ranges, deniedIPv6Ranges, isIpLiteral, isPublicAddress, urlRefusal } from "./addressPolicy.ts"
export { publicDocumentFetch, type PublicDocumentFetchOptions } from "./publicDocumentFetch.ts"
