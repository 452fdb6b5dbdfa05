// "Your case" on an error page: the values of a setting that would pass the check, computed
// from what the check compares it with (the build's `passes`: an op and a constant, or the
// placeholder whose value the paste holds) and, where the op needs it, the value the paste
// used. Pure functions: tests/js/try.test.mjs runs them under Node.

import { divisors, nearest } from "./nearest.js";

const MAX_DIVIDEND = 10_000_000; // beyond, listing divisors is not worth the wait
const MAX_SHOWN = 12;
// A parallel size is a GPU count: its values are capped at one node of 8 GPUs, the node the
// wings' calculators advise for, so that the two never disagree on one page (40 heads at
// TP 16: 8, not 10 or 20).
const GPU_COUNT = /(tensor|pipeline|data|expert|context)[-_]parallel[-_]size|--(tp|pp|dp|ep|attn-dp)-size\b/;
const NODE_GPUS = 8;

function number(values, name) {
  if (!name || !(name in values)) return null;
  const n = Number(String(values[name]).trim());
  return Number.isFinite(n) ? n : null;
}


// The GPUs of one node: the user's (`gpus_per_node` among the values) or 8, assumed.
function nodeSize(values) {
  const given = number(values, "gpus_per_node");
  return given > 0 ? given : NODE_GPUS;
}

function fitting(item, candidates, values) {
  return GPU_COUNT.test(item.write) ? candidates.filter((c) => c <= nodeSize(values)) : candidates;
}

// The node the values of a GPU count were kept within, in words ("" for other settings).
export function nodeOf(item, values) {
  if (!GPU_COUNT.test(item.write || "") || item.op !== "divides") return "";
  const given = number(values, "gpus_per_node") > 0;
  return `one ${nodeSize(values)}-GPU node${given ? "" : ", assumed"}`;
}

// The values that pass, as text: [] when the paste's values do not allow computing one.
export function valuesToTry(item, values) {
  const bound = "value" in item ? item.value : number(values, item.param);
  const current = number(values, item.current);
  const whole = Number.isInteger(bound);
  switch (item.op) {
    case "<=":
    case ">=":
    case "==":
      return bound === null ? [] : [String(bound)];
    case "<":
      return whole ? [String(bound - 1)] : [];
    case ">":
      return whole ? [String(bound + 1)] : [];
    case "in":
      return item.choices.slice(0, MAX_SHOWN).map(String);
    case "divides":
      if (!whole || bound < 1 || bound > MAX_DIVIDEND) return [];
      const fit = fitting(item, divisors(bound), values);
      return (current === null ? fit.slice(0, MAX_SHOWN) : nearest(fit, current)).map(String);
    case "multiple-of": {
      if (!whole || bound < 1 || current === null || !Number.isInteger(current)) return [];
      const down = Math.floor(current / bound) * bound;
      return [down, down + bound].filter((m) => m > 0 && m !== current).map(String);
    }
    default:
      return [];
  }
}

// How the user writes each value: the setting's pattern with {} for the value.
export function written(item, value) {
  return item.write.replace("{}", value);
}

// A number as the page prints it (answer.py's fmt): an integer whole, else 6 digits.
export const fmt = (n) => (Number.isInteger(n) ? String(n) : String(Number(n.toPrecision(6))));

const WORDS = {
  ">": "is greater than", ">=": "is at least", "<": "is less than", "<=": "is at most",
  "==": "equals", "!=": "differs from", "%": "is not a multiple of",
};

// What values of one side make `a op b` false, in words (answer.py's _bound).
function bound(op, side, a, b) {
  if (op === "==" || op === "!=") {
    const other = fmt(side === "left" ? b : a);
    return op === "!=" ? other : `anything but ${other}`;
  }
  const [other, below] = side === "left" ? [b, op[0] === ">"] : [a, op[0] === "<"];
  if (op.length === 1) return `${below ? "at most" : "at least"} ${fmt(other)}`;
  if (Number.isInteger(a) && Number.isInteger(b)) return below ? `at most ${fmt(other - 1)}` : `at least ${fmt(other + 1)}`;
  return `${below ? "below" : "above"} ${fmt(other)}`;
}

const handle = (write) => write.replace(/(:? |=)?\{\}.*$/, "").replace(/:$/, "");

// A divisibility test: the nearest passing values of the side the user sets (answer.py's).
function moduloChange(t, a, b, values) {
  const ways = [];
  const w = t.set || {};
  const each = (write, list) => list.map((v) => write.replace("{}", v)).join(" or ");
  if (w.right && a > 0 && a <= MAX_DIVIDEND) {
    const near = nearest(fitting({ write: w.right }, divisors(a), values), b);
    if (near.length) ways.push(each(w.right, near));
  }
  if (w.left && b > 0) {
    const down = Math.floor(a / b) * b;
    const near = [down, down + b].filter((m) => m > 0 && m !== a);
    if (near.length) ways.push(each(w.left, near));
  }
  return ways.join(" or ");
}

// The derived condition tested on the values (answer.py's _tests): {verdict, change, whyNot}.
export function testsAnswer(groups, values) {
  const side = (s) => (typeof s === "string" ? number(values, s) : s);
  const named = (s, v) => (typeof s === "string" ? `${s} = ${fmt(v)}` : fmt(v));
  for (const group of groups) {
    const tried = [];
    for (const t of group) {
      const [a, b] = [side(t.left), side(t.right)];
      if (a === null || b === null || (t.op === "%" && (b === 0 || !Number.isInteger(a) || !Number.isInteger(b)))) continue;
      const holds = { ">": a > b, ">=": a >= b, "<": a < b, "<=": a <= b, "==": a === b, "!=": a !== b, "%": a % b !== 0 }[t.op];
      tried.push([t, a, b, holds]);
    }
    if (!tried.length) continue;
    const said = tried.map(([t, a, b]) => `${named(t.left, a)} ${WORDS[t.op]} ${named(t.right, b)}`);
    const pass = tried.findIndex((x) => !x[3]);
    if (pass >= 0) {
      return { verdict: `With your values this check passes: ${said[pass]} is false. The paste may hold other values, or another check printed the message.` };
    }
    const changes = [];
    for (const [t, a, b] of tried) {
      if (t.op === "%") {
        const found = moduloChange(t, a, b, values);
        if (found) changes.push(found);
        continue;
      }
      for (const s of ["left", "right"]) {
        if (!(t.set || {})[s]) continue;
        const words = bound(t.op, s, a, b);
        changes.push(`${handle(t.set[s])} ${/^(below|above)/.test(words) ? "" : "to "}${words}`);
      }
    }
    const out = { verdict: `With your values the check fails: ${said.join("; ")}.` };
    if (changes.length) return { ...out, change: `To pass it, set ${changes.join(", or ")}.` };
    const [t, a, b] = tried[0];
    if (t.op === "%") return { ...out, whyNot: "no setting the check names changes these values" };
    const sides = ["left", "right"].filter((s) => typeof t[s] === "string").map((s) => `${t[s]} ${bound(t.op, s, a, b)}`);
    return { ...out, change: `It passes with ${sides.join(" or ")}.` };
  }
  return null;
}
