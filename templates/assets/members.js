// Your case's membership tests (answer.py's _collection, _member): whether a printed value
// is in the code's own collection or in one the message prints. Loaded by case.js only on
// a page whose tests have one (#case-members); tests.js asks it.

import { fmt } from "./tests.js";
import { MAX_SHOWN, number } from "./try.js";

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

// Whether a printed value is one of the items: a number among numbers, else as printed.
function member(v, among) {
  if (v === null || among === null) return null;
  if (among.every((c) => typeof c === "number")) {
    const n = number({ v }, "v");
    return n === null ? null : among.includes(n);
  }
  return among.map(String).includes(v);
}

// Of a membership test `t` and the printed value v: [whether the test holds, the items in
// words], or null when the values decide nothing.
export function membership(t, v, values) {
  const among = Array.isArray(t.right) ? t.right : collection(values, t.right);
  const found = member(v, among);
  if (found === null) return null;
  const items = among.map((c) => (typeof c === "string" ? c : fmt(c)));
  const listed = items.slice(0, MAX_SHOWN).join(", ") + (items.length > MAX_SHOWN ? `, … ${items.length} in all` : "");
  return [found === (t.op === "in"), listed];
}

// Of a test of two printed collections (`none in`, `some in`, answer.py's): [whether it
// holds, the first's items, the second's, in words], or null unless both are whole.
export function anyMembership(t, values) {
  const [items, among] = [collection(values, t.left), collection(values, t.right)];
  if (items === null || among === null) return null;
  const listed = (l) => l.slice(0, MAX_SHOWN).join(", ") + (l.length > MAX_SHOWN ? `, … ${l.length} in all` : "");
  const hit = items.some((i) => among.includes(i));
  return [hit === (t.op === "some in"), listed(items), listed(among)];
}

// Why a membership test decided nothing: the collection the paste prints is cut short.
export function cutShort(tests, values) {
  const cut = tests.find((t) => ["in", "not in", "none in", "some in"].includes(t.op) && typeof t.right === "string" && t.right in values);
  return cut && !collection(values, cut.right) && `${cut.right} in your paste is cut short (or not a list of names): what is missing may hold the value`;
}
