const nonSpace = /\P{White_Space}+/gu
const whiteSpace = /\p{White_Space}/u

/** Counts words across consecutive text chunks: a word may continue from one chunk into the next. */
export interface WordCounter {
  /** Feeds the next chunk of text. */
  readonly add: (text: string) => void
  /** The number of words fed so far. */
  readonly count: () => number
}

/** A word counter that splits on Unicode whitespace (`White_Space`), as `word_count` does. */
export const makeWordCounter = (): WordCounter => {
  let words = 0
  let inWord = false
  return {
    add: (text) => {
      if (text.length === 0) return
      const matches = text.match(nonSpace)
      if (matches !== null) {
        words += matches.length
        // A chunk that starts inside a word continues the previous chunk's last word.
        if (inWord && !whiteSpace.test(text.charAt(0))) words -= 1
      }
      // White_Space characters are all in the BMP, so testing one UTF-16 unit is exact.
      inWord = !whiteSpace.test(text.charAt(text.length - 1))
    },
    count: () => words,
  }
}
