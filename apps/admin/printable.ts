/**
 * Text from a file, the database or the command line as the admin command prints it: every
 * control character (C0, DEL, C1: a terminal escape, a carriage return or a newline that could
 * forge a result line), every bidirectional control and the line and paragraph separators are
 * written as `\uXXXX`, and a backslash as `\\`, so that what is printed can be told from what
 * the command itself writes. Only the command's own text may start a line.
 */
const UNPRINTABLE = /[\\\u0000-\u001f\u007f-\u009f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g

/** One value escaped for a terminal (see the module's note). */
export const printable = (text: string): string =>
  text.replace(UNPRINTABLE, (c) => (c === "\\" ? "\\\\" : `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`))
