// "Your case" on an error page: the values of a setting that would pass the check, computed
// from what the check compares it with (the build's `passes`: an op and a constant, or the
// placeholder whose value the paste holds) and, where the op needs it, the value the paste
// used. Pure functions: tests/js/try.test.mjs runs them under Node.

import { divisors, nearest } from "./nearest.js";

export const MAX_DIVIDEND = 10_000_000; // beyond, listing divisors is not worth the wait
export const MAX_SHOWN = 12;
// A parallel size is a GPU count: its values are capped at one node of 8 GPUs, the node the
// wings' calculators advise for, so that the two never disagree on one page (40 heads at
// TP 16: 8, not 10 or 20).
const GPU_COUNT = /(tensor|pipeline|data|expert|context)[-_]parallel[-_]size|--(tp|pp|dp|ep|attn-dp)-size\b/;
const NODE_GPUS = 8;

export function number(values, name) {
  if (!name || !(name in values)) return null;
  const n = Number(String(values[name]).trim());
  return Number.isFinite(n) ? n : null;
}


// The GPUs of one node: the user's (`gpus_per_node` among the values) or 8, assumed.
function nodeSize(values) {
  const given = number(values, "gpus_per_node");
  return given > 0 ? given : NODE_GPUS;
}

export function fitting(item, candidates, values) {
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
