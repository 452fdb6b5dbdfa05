// Your case's parts that are a printed value alone (`remaining`: raised when it is not empty)
// or two printed versions (`version.parse(a) < version.parse(b)`, op "v<"), as answer.py's
// truth, version_order and _tried say them. Loaded by members.js only on a page whose tests
// have one (#case-parts).

import { text } from "./tests.js";

// Whether a printed value is true in Python: false as None, 0, empty; null for an object's repr.
const truth = (v) => (/^(|None|False|''|""|\[\]|\(\)|\{\}|(frozen)?set\(\)|dict_(keys|values|items)\(\[\]\))$/.test(v) || Number(v) === 0 ? false : /^(<|\w+\()/.test(v) ? null : true);

// -1, 0 or 1 as version a is older, the same or newer than b; null when the text does not say.
function order(a, b) {
  const [m, n] = [a, b].map((v) => v?.match(/^v?(\d+(?:\.\d+)*)([-_.+]?[a-z][a-z0-9._+-]*)?$/i));
  if (!m || !n) return null;
  const [r, s] = [m, n].map((x) => x[1].split(".").map(Number));
  for (let i = 0; i < Math.max(r.length, s.length); i++) if ((r[i] || 0) !== (s[i] || 0)) return (r[i] || 0) < (s[i] || 0) ? -1 : 1;
  return (m[2] || "").split("+")[0] === (n[2] || "").split("+")[0] ? 0 : null;
}

const WORDS = { truthy: "is not empty", falsy: "is empty", "<": "is less than", "<=": "is at most", ">": "is greater than", ">=": "is at least", "==": "equals", "!=": "differs from" };

const HOLDS = { "<": (c) => c < 0, "<=": (c) => c <= 0, ">": (c) => c > 0, ">=": (c) => c >= 0, "==": (c) => !c, "!=": (c) => !!c };

// A part on the values: [t, a, b, whether it holds], or null when they decide nothing.
export function tried(t, values) {
  const [a, b] = [text(values, t.left)?.trim(), t.right && text(values, t.right)?.trim()];
  const c = t.right ? order(a, b) : a == null ? null : truth(a);
  if (c === null) return null;
  return [t, a, b, t.right ? HOLDS[t.op.slice(1)](c) : c === (t.op === "truthy")];
}

export const said = (t, a, b) => t.left + " = " + a + " " + WORDS[t.right ? t.op.slice(1) : t.op] + (t.right ? " " + t.right + " = " + b : "");

// What passes: empty or not; of versions, older or newer than the other side.
export function bound(t, b, s, a) {
  if (!t.right) return t.op === "truthy" ? "empty" : "not empty";
  const op = t.op.slice(1);
  const other = s === "left" ? b : a;
  if (op === "==" || op === "!=") return op === "!=" ? other : "anything but " + other;
  const below = s === "left" ? op[0] === ">" : op[0] === "<";
  return op.length === 1 ? (below ? "at most " : "at least ") + other : (below ? "older" : "newer") + " than " + other;
}
