/** Bidirectional override and isolate controls (U+202A–U+202E, U+2066–U+2069). */
const BIDI_CONTROLS = /[\u202A-\u202E\u2066-\u2069]/g

/**
 * A name someone else chose (an agent's client name, a key's or a person's name) as the pages
 * show it: without bidirectional override or isolate controls, which could make it read as
 * another name or reorder the text around it ("Trojan Source"). Escaping stays the template's.
 */
export const displayName = (name: string): string => name.replace(BIDI_CONTROLS, "")
