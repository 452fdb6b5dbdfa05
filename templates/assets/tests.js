// "Your case" on an error page: the derived condition tested on the values in the address
// (the build's `tests`, api.case_tests), as errorkb/answer.py's _tests says it, word for word:
// whether the check fails with them, and what passes. Loaded by case.js only on a page
// whose Your case has tests. Pure functions: tests/test_answer_tests.py runs them under Node.

import { divisors, nearest } from "./nearest.js";
import { MAX_DIVIDEND, MAX_SHOWN, fitting, nodeOf, number } from "./try.js";

// A number as the page prints it (answer.py's fmt): an integer whole, else 6 digits.
export const fmt = (n) => (Number.isInteger(n) ? String(n) : String(Number(n.toPrecision(6))));

const WORDS = {
  ">": "is greater than", ">=": "is at least", "<": "is less than", "<=": "is at most",
  "==": "equals", "!=": "differs from", "%": "is not a multiple of",
};
// A value as the message prints it, unquoted (answer.py's _text).
export function text(values, name) {
  if (typeof name !== "string" || !(name in values)) return null;
  const v = String(values[name]).trim();
  const quoted = v.match(/^(?:'((?:[^'\\]|\\.)*)'|"((?:[^"\\]|\\.)*)")$/s);
  return quoted ? (quoted[1] ?? quoted[2]) : v;
}

function bound(op, side, a, b) {
  if (op === "==" || op === "!=") {
    const other = side === "left" ? b : a;
    const shown = typeof other === "string" ? other : fmt(other); // text as printed
    return op === "!=" ? shown : `anything but ${shown}`;
  }
  const [other, below] = side === "left" ? [b, op[0] === ">"] : [a, op[0] === "<"];
  if (op.length === 1) return `${below ? "at most" : "at least"} ${fmt(other)}`;
  if (Number.isInteger(a) && Number.isInteger(b)) return below ? `at most ${fmt(other - 1)}` : `at least ${fmt(other + 1)}`;
  return `${below ? "below" : "above"} ${fmt(other)}`;
}

const handle = (write) => (write.endsWith("{}") ? write.replace(/(: | |=)?\{\}$/, "") : write.replace("{}", "…"));

// A divisibility test: the nearest passing values of the side the user sets (answer.py's).
function moduloChange(t, a, b, values) {
  const ways = [];
  const w = t.set || {};
  const each = (write, list) => list.map((v) => write.replace("{}", v)).join(" or ");
  if (w.right && a > 0 && a <= MAX_DIVIDEND) {
    const near = nearest(fitting({ write: w.right }, divisors(a), values), b);
    const node = nodeOf({ write: w.right, op: "divides" }, values);
    if (near.length) ways.push(each(w.right, near) + (node ? ` (within ${node})` : ""));
  }
  if (w.left && b > 0) {
    const down = Math.floor(a / b) * b;
    const near = [down, down + b].filter((m) => m > 0 && m !== a);
    if (near.length) ways.push(each(w.left, near));
  }
  return ways.length ? [`set ${ways.join(" or ")}`] : [];
}

// A side: a number, a placeholder's value, or a GPU's compute capability (7 and 5: 75).
function sideOf(s, values) {
  if (s && typeof s === "object") {
    const [major, minor] = [number(values, s.major), number(values, s.minor)];
    return major === null || minor === null ? null : major * 10 + minor;
  }
  return typeof s === "string" ? number(values, s) : s;
}
const capability = (s) => s && typeof s === "object" && !Array.isArray(s); // {major, minor}
const shown = (t, s, v) => {
  const other = t[s === "left" ? "right" : "left"];
  if (capability(other)) return (v / 10).toFixed(1);
  if (capability(t[s])) return `compute capability ${(v / 10).toFixed(1)}`;
  const printed = typeof v === "string" ? v : fmt(v);
  return typeof t[s] === "string" ? `${t[s]} = ${printed}` : printed;
};

// A setting the condition compares with a constant: [when it raises, how to pass].
function settingWay(t) {
  const name = handle(t.setting);
  const listed = Array.isArray(t.value) ? t.value.slice(0, MAX_SHOWN).join(", ") : String(t.value);
  const [is, to] = [`${name} is `, `set ${name} to `];
  return {
    "==": [is + listed, `${to}anything but ${listed}`],
    "!=": [`${is}not ${listed}`, to + listed],
    in: [`${is}one of ${listed}`, `${to}anything but ${listed}`],
    "not in": [`${is}none of ${listed}`, `${to}one of ${listed}`],
    on: [is + "on", `turn ${name} off`],
    off: [is + "off", `turn ${name} on`],
  }[t.op];
}

// A setting the message prints that one side is a multiple of (answer.py's _scaled).
function scaled(t, a, b, values) {
  const out = [];
  for (const [name, how] of Object.entries(t.scale || {})) {
    const u = number(values, name);
    if (!u || u <= 0 || u > 1) continue; // a fraction of a whole (a utilization)
    for (const [k, v] of [["left", a], ["right", b]]) {
      if (typeof t[k] !== "string") continue;
      const fit = how.by.filter((n) => number(values, n) > 0 && Math.abs(v - u * number(values, n)) <= 0.001 * Math.abs(v) + 0.011);
      if (!fit.length) continue;
      const words = bound(t.op, k, a, b);
      const at = words.lastIndexOf(" ");
      const down = ["at most", "below"].includes(words.slice(0, at));
      const limit = (down ? Math.floor : Math.ceil)((Number(words.slice(at + 1)) / number(values, fit[0])) * 100) / 100;
      if (limit <= 0 || limit > 1) break; // no fraction passes (answer.py's)
      out.push(`set ${handle(how.write)} to ${down ? "at most" : "at least"} ${fmt(limit)} (${t[k]} is ${name} × ${fit[0]} in your values)`);
      break;
    }
  }
  return out;
}

// The derived condition tested on the values (answer.py's _tests): {verdict, change, whyNot}.

// `members`: members.js, where a test is a membership (case.js loads it only then): its
// tests, their words and what passes them.
export function testsAnswer(groups, values, members = null) {
  // members.js keeps the parts that are no comparison of numbers (memberships, alternatives,
  // a printed value alone, versions)
  const boundOf = (t, s, a, b) => (t.op in WORDS ? bound(t.op, s, a, b) : members.bound(t, b, s, a));
  const say = (t, a, b) => (t.op in WORDS ? `${shown(t, "left", a)} ${WORDS[t.op]} ${shown(t, "right", b)}` : members.said(t, a, b, say));
  // A part of the condition on the values (answer.py's _tried): [t, a, b, whether it holds].
  const one = (t) => {
    let [a, b] = [sideOf(t.left, values), sideOf(t.right, values)];
    // two values the message prints that are not numbers: compared as printed
    if ((a === null || b === null) && t.op[1] === "=" && typeof t.left === "string" && typeof t.right === "string") [a, b] = [text(values, t.left), text(values, t.right)];
    if (a === null || b === null || (t.op === "%" && (b === 0 || !Number.isInteger(a) || !Number.isInteger(b)))) return null;
    // an order test whose sides are equal as printed, one with decimals (answer.py's _tie):
    // rounded, which is larger is not in the paste
    if ("<>".includes(t.op[0]) && a === b && [t.left, t.right].some((s) => /[.eE]/.test(values[s] ?? ""))) return null;
    return [t, a, b, { ">": a > b, ">=": a >= b, "<": a < b, "<=": a <= b, "==": a === b, "!=": a !== b, "%": a % b !== 0 }[t.op]];
  };
  for (const group of groups) {
    const tried = [];
    const ways = group.filter((t) => t.setting).map(settingWay);
    for (const t of group.filter((t) => !t.setting)) {
      const found = t.op in WORDS ? one(t) : members?.tried(t, values, one);
      if (found) tried.push(found);
    }
    if (!tried.length && !ways.length) continue;
    const said = tried.map(([t, a, b]) => say(t, a, b));
    const pass = tried.findIndex((x) => !x[3]);
    if (pass >= 0) {
      return { verdict: `With your values this check passes: ${said[pass]} is false. The paste may hold other values, or another check printed the message.` };
    }
    // what passes one failing part (answer.py's _part_changes)
    const setTo = (t, s, a, b, words = boundOf(t, s, a, b)) => `set ${handle(t.set[s])} ${/^(below|above)/.test(words) ? "" : "to "}${words}`;
    const part = (t, a, b) => (t.op === "%" ? moduloChange(t, a, b, values) : t.set ? Object.keys(t.set).map((s) => setTo(t, s, a, b)) : scaled(t, a, b, values));
    // alternatives that hold: each made false by its one setting, else nothing (answer.py's)
    const alt = (per) => (per.every((p) => p.length === 1) ? [per.map((p) => p[0]).join(" and ")] : []);
    const changes = tried.flatMap(([t, a, b]) => (t.op === "or" ? alt(a.map((x) => part(...x))) : part(t, a, b)));
    changes.push(...ways.map((w) => w[1]));
    const verdict = tried.length ? `With your values the check fails: ${said.join("; ")}.` : `It is raised only when ${ways.map((w) => w[0]).join("; ")}.`;
    const loose = ([t]) => !t.set && t.op !== "%" && !members?.verdict(t);
    const free = tried.filter((x) => loose(x) && ![x[0].left, x[0].right].some((s) => s && typeof s === "object"));
    // a membership's: the value's alone
    const sidesOf = ([t, a, b]) => ["left", "right"].filter((s) => typeof t[s] === "string" && !(s === "right" && t.op.includes("in"))).map((s) => `${t[s]} ${boundOf(t, s, a, b)}`);
    if (changes.length) {
      const also = free.length && tried.find(loose) === free[0] ? ` It also passes with ${sidesOf(free[0]).join(" or ")}.` : "";
      return { verdict, change: `To pass it, ${changes.join(", or ")}.${also}` };
    }
    const [t, a, b] = tried[0];
    if (t.op === "%") return { verdict, whyNot: "no setting the check names changes these values" };
    if (members?.verdict(t)) return { verdict }; // the verdict alone (answer.py's)
    const cap = ["left", "right"].find((s) => capability(t[s]));
    if (cap) {
      const words = bound(t.op, cap, a, b);
      const at = words.lastIndexOf(" ");
      return { verdict, change: `It passes on a GPU of compute capability ${words.slice(0, at)} ${(Number(words.slice(at + 1)) / 10).toFixed(1)}.` };
    }
    return { verdict, change: `It passes with ${sidesOf(tried[0]).join(" or ")}.` };
  }
  return null;
}
