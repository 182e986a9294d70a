/**
 * Bidirectional controls: the embeddings and overrides (U+202A–U+202E), the isolates
 * (U+2066–U+2069) and the marks (LRM U+200E, RLM U+200F, ALM U+061C), which move the neutral
 * characters around them (brackets, punctuation).
 */
const BIDI_CONTROLS = /[\u061C\u200E\u200F\u202A-\u202E\u2066-\u2069]/g

/**
 * A name someone else chose (an agent's client name, a key's or a person's name) as the pages
 * show it: without bidirectional controls (overrides, isolates, marks), which could make it read as
 * another name or reorder the text around it ("Trojan Source"). Escaping stays the template's.
 */
export const displayName = (name: string): string => name.replace(BIDI_CONTROLS, "")
