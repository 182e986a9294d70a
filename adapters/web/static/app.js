// Progressive enhancement only: every page works without this file.
"use strict"
document.addEventListener("click", async (event) => {
  const button = event.target instanceof Element ? event.target.closest("[data-copy]") : null
  if (!button) return
  const source = document.getElementById(button.getAttribute("data-copy") || "")
  if (!source) return
  const text = source.textContent || ""
  try {
    await navigator.clipboard.writeText(text)
    button.textContent = "Copied"
  } catch {
    const range = document.createRange()
    range.selectNodeContents(source)
    const selection = window.getSelection()
    selection?.removeAllRanges()
    selection?.addRange(range)
    button.textContent = "Selected: press Ctrl+C"
  }
  setTimeout(() => { button.textContent = "Copy" }, 2500)
})
document.addEventListener("DOMContentLoaded", () => {
  for (const b of document.querySelectorAll("[data-copy]")) b.hidden = false
  for (const f of document.querySelectorAll("form[data-confirm]")) {
    f.addEventListener("submit", (e) => { if (!window.confirm(f.getAttribute("data-confirm") || "Are you sure?")) e.preventDefault() })
  }
})
// A featured image that cannot be loaded shows a clear placeholder instead of a broken-image icon.
const showMissing = (img) => {
  const missing = img.parentElement && img.parentElement.querySelector(".featured-missing")
  if (!missing) return
  img.hidden = true
  missing.hidden = false
}
document.addEventListener("error", (e) => {
  if (e.target instanceof HTMLImageElement && e.target.classList.contains("featured")) showMissing(e.target)
}, true)
document.addEventListener("DOMContentLoaded", () => {
  for (const img of document.querySelectorAll("img.featured")) if (img.complete && img.naturalWidth === 0) showMissing(img)
})
