// Progressive enhancement only: every page works without this file.
"use strict"
document.addEventListener("click", async (event) => {
  const button = event.target instanceof Element ? event.target.closest("[data-copy]") : null
  if (!button) return
  const source = document.getElementById(button.getAttribute("data-copy") || "")
  if (!source) return
  const text = source.textContent || ""
  const label = button.innerHTML
  // The button's own words change too, but a screen reader does not read out a change to the
  // focused button's name: the status message below is what it reads.
  const say = (words) => {
    const status = document.getElementById("copy-status")
    if (!status) return
    status.textContent = ""
    setTimeout(() => { status.textContent = words }, 50)
  }
  try {
    await navigator.clipboard.writeText(text)
    button.textContent = "Copied"
    say("Copied to the clipboard.")
  } catch {
    const range = document.createRange()
    range.selectNodeContents(source)
    const selection = window.getSelection()
    selection?.removeAllRanges()
    selection?.addRange(range)
    // (the copy keys of the reader's own system: Command on Apple's)
    const keys = [navigator.userAgentData?.platform, navigator.platform].some((p) => /mac|iphone|ipad/i.test(p || "")) ? "Command+C" : "Ctrl+C"
    button.textContent = `Selected: press ${keys}`
    say(`Not copied: the text is selected. Press ${keys} to copy it.`)
  }
  setTimeout(() => { button.innerHTML = label }, 2500)
})
document.addEventListener("DOMContentLoaded", () => {
  for (const b of document.querySelectorAll("[data-copy]")) b.hidden = false
  // A live region must be on the page before what it says changes: made once, empty, if there is anything to copy.
  if (document.querySelector("[data-copy]") && !document.getElementById("copy-status")) {
    const status = document.createElement("p")
    status.id = "copy-status"
    status.className = "visually-hidden"
    status.setAttribute("role", "status")
    document.body.append(status)
  }
  // Risky actions ask first; confirmed, the form says so (without script, the server asks instead).
  for (const f of document.querySelectorAll("form[data-confirm]")) {
    f.addEventListener("submit", (e) => {
      if (!window.confirm(f.getAttribute("data-confirm") || "Are you sure?")) {
        e.preventDefault()
        return
      }
      if (!f.querySelector("input[name=confirmed]")) {
        const input = document.createElement("input")
        input.type = "hidden"
        input.name = "confirmed"
        input.value = "yes"
        f.append(input)
      }
    })
  }
  // Leaving an editor with unsaved changes asks first; saving does not.
  for (const f of document.querySelectorAll("form[data-unsaved-warning]")) {
    let dirty = f.getAttribute("data-unsaved-warning") === "draft"
    let submitting = false
    f.addEventListener("input", () => { dirty = true })
    f.addEventListener("submit", (e) => {
      submitting = true
      // A submit another script stopped (the editor's preview first) leaves the page: still unsaved.
      setTimeout(() => { if (e.defaultPrevented) submitting = false }, 0)
    })
    window.addEventListener("beforeunload", (e) => {
      if (dirty && !submitting) {
        e.preventDefault()
        e.returnValue = ""
      }
    })
  }
  // A refused save, a new key: the message the page opened for has the focus (and is in view).
  const target = document.querySelector("[autofocus]")
  if (target instanceof HTMLElement && document.activeElement !== target) target.focus()
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
