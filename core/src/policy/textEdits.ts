import type { EditMismatch, FieldError } from "../errors.ts"
import { isStorableText, UNSTORABLE_TEXT_MESSAGE } from "../schema/common.ts"

/**
 * The texts of edits that a PUT's body would refuse (a NUL, an unpaired surrogate: see
 * `isStorableText`), as field errors naming them (`edits/<index>/find` or `/replace`). A `find`
 * counts too: matched in a stored body, an unpaired surrogate can only match half of a pair,
 * and replacing it would leave the other half unpaired.
 */
export const unstorableEditTexts = (
  edits: ReadonlyArray<{ readonly find: string; readonly replace: string }>,
): ReadonlyArray<FieldError> =>
  edits.flatMap((edit, index) =>
    (["find", "replace"] as const)
      .filter((field) => !isStorableText(edit[field]))
      .map((field) => ({ path: `edits/${index}/${field}`, message: UNSTORABLE_TEXT_MESSAGE })),
  )

/** How many times `find` occurs in `text`, overlapping occurrences included (`aa` is twice in `aaa`). */
export const occurrences = (text: string, find: string): number => {
  let count = 0
  for (let at = text.indexOf(find); at !== -1; at = text.indexOf(find, at + 1)) count++
  return count
}

/**
 * Applies find-and-replace edits in order, each on the result of the one before. Every `find`
 * must occur exactly once in the text it is applied to; an edit that does not is skipped and
 * reported (`edits/<index>/find` with its count), and the later edits are still checked, against
 * the text with the applicable earlier edits made. Answers the new text, or every mismatch.
 */
export const applyTextEdits = (
  text: string,
  edits: ReadonlyArray<{ readonly find: string; readonly replace: string }>,
): { readonly text: string } | { readonly mismatches: ReadonlyArray<EditMismatch> } => {
  let out = text
  const mismatches: Array<EditMismatch> = []
  edits.forEach((edit, index) => {
    const count = occurrences(out, edit.find)
    if (count !== 1) {
      mismatches.push({
        path: `edits/${index}/find`,
        message:
          count === 0
            ? "Not found in the body: copy the text exactly as the body is served (HTML, entities and whitespace included)."
            : `Found ${count} times in the body: include more of the surrounding text so that it occurs exactly once.`,
        count,
      })
      return
    }
    const at = out.indexOf(edit.find)
    out = out.slice(0, at) + edit.replace + out.slice(at + edit.find.length)
  })
  return mismatches.length > 0 ? { mismatches } : { text: out }
}
