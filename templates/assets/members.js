// Your case's membership tests (answer.py's _collection, _member): whether a printed value
// is in the code's own collection or in one the message prints. Loaded by case.js only on
// a page whose tests have one (#case-members); tests.js asks it.

import { fmt, text } from "./tests.js";
import { MAX_SHOWN, number } from "./try.js";

const WORDS = { in: "is among", "not in": "is not among", "none in": "has no item among", "some in": "has an item among" };
// A part that is a printed value alone (no right side) or two versions (op "v<"...): parts.js,
// loaded only on a page whose tests have one (#case-parts; under Node, the parity tests, always).
const parts = !globalThis.document || document.getElementById("case-parts") ? await import("./parts.js") : null;
const own = (t) => !t.right || t.op[0] === "v";
// A test of two collections the message prints (answer.py's _ANY): an item of one in the other.
export const any = (t) => t.op === "none in" || t.op === "some in";
// A part whose answer is its verdict alone: of two collections, or of alternatives (`or`).
export const verdict = (t) => any(t) || t.op === "or";
// The code's own collection of one item, a text it compares a printed value with: said as "is".
const one = (t) => !any(t) && Array.isArray(t.right) && t.right.length === 1;
// A list past 40 items (answer.py's MAX_NAMED) by its count alone
const listed = (l, n = l.length) => (n > 40 ? n + " names" : l.slice(0, MAX_SHOWN).join(", ") + (n > MAX_SHOWN ? `, … ${n} in all` : ""));

// A collection as Python prints it (a list, tuple, set, dict's keys) of quoted names; null
// when cut short (a paste that ends inside it) or not one.
const QUOTED = /'((?:[^'\\]|\\.)*)'|"((?:[^"\\]|\\.)*)"/gs;
export function collection(values, name) {
  if (typeof name !== "string" || !(name in values)) return null;
  let v = String(values[name]).trim();
  v = v.match(/^(?:dict_keys|set|frozenset)\((.*)\)$/s)?.[1] ?? v;
  const found = v.match(/^([[({])(.*)([\])}])$/s);
  if (!found || "([{".indexOf(found[1]) !== ")]}".indexOf(found[3])) return null;
  const inner = found[2].trim();
  const items = [...inner.matchAll(QUOTED)].map((m) => m[1] ?? m[2]);
  return items.length && !inner.replace(QUOTED, "").replaceAll(",", "").trim() ? items : null;
}

// The collection a test reads that the message may not print whole: registry.js, loaded
// only on a page whose answer reads the engine's registered architectures (#case-registry).
const registry = globalThis.document?.getElementById("case-registry") ? await import("./registry.js") : null;
const registered = (values, name) => collection(values, name) || registry?.registered(values, name) || null;

// Whether a printed value is one of the items: a number among numbers, else as printed.
function member(v, among) {
  if (v === null || among === null) return null;
  if (among.every((c) => typeof c === "number")) {
    const n = number({ v }, "v");
    return n === null ? null : among.includes(n);
  }
  return among.map(String).includes(v);
}

// Whether a printed value is true in Python (answer.py's truth): null for an object's repr.
// Of a membership test `t` and the printed value v: [whether the test holds, the items in
// words], or null when the values decide nothing.
export function membership(t, v, values) {
  const among = Array.isArray(t.right) ? t.right : collection(values, t.right);
  const found = member(v, among);
  if (found === null) return null;
  return [found === (t.op === "in"), listed(among.map((c) => (typeof c === "string" ? c : fmt(c))))];
}

// A membership test on the values, as tests.js keeps it: [t, the value, the items listed,
// whether it holds]; of two printed collections, both listed; null when nothing is decided.
export function tried(t, values, one) {
  if (t.op === "or") { // raised when one alternative holds: those that do, else all when all decide
    const subs = t.any.map((x) => (x.op.includes("in") ? tried(x, values, one) : one(x)));
    const hold = subs.filter((x) => x?.[3]);
    return hold.length || subs.every(Boolean) ? [t, hold.length ? hold : subs, null, hold.length > 0] : null;
  }
  if (own(t)) return parts?.tried(t, values);
  if (any(t)) {
    const items = collection(values, t.left);
    const among = items && registered(values, t.right);
    return items && among && [t, listed(items), listed(among), items.some((i) => among.includes(i)) === (t.op === "some in")];
  }
  const v = text(values, t.left);
  const found = v === null ? null : membership(t, v, values);
  return found && [t, v, found[1], found[0]];
}

// A membership test in words (answer.py's), and what passes it. (No template literal
// inside another: the build's compactor reads strings by their quotes.)
export const said = (t, a, b, say) => {
  if (t.op === "or") return a.map((x) => say(...x)).join(" or ");
  if (own(t)) return parts.said(t, a, b);
  const value = any(t) ? " (" + a + ")" : " = " + a;
  const words = one(t) ? (t.op === "in" ? "is" : "is not") : WORDS[t.op];
  return t.left + value + " " + words + " " + (Array.isArray(t.right) ? b : t.right + " (" + b + ")");
};
export function bound(t, b, s, a) {
  if (own(t)) return parts.bound(t, b, s, a);
  return one(t) ? (t.op === "in" ? `anything but ${b}` : b) : `${t.op === "in" ? "none" : "one"} of ${b}`;
}

// Why a membership test decided nothing: the collection the paste prints is cut short.
export function cutShort(tests, values) {
  const cut = tests.find((t) => t.op.includes("in") && typeof t.right === "string" && t.right in values);
  return cut && !collection(values, cut.right) && `${cut.right} in your paste is cut short (or not a list of names): what is missing may hold the value`;
}
