// try.js: the values of a setting that pass a check, from the build's `passes` and the values
// of the paste ("Your case" on an error page).
import assert from "node:assert/strict";
import { test } from "node:test";
import { valuesToTry, written } from "../../templates/assets/try.js";

const tp = { write: "--tensor-parallel-size {}", current: "tp", op: "divides", param: "heads" };

test("a divisor of the pasted head count, nearest the size used, on one node of 8 GPUs", () => {
  assert.deepEqual(valuesToTry(tp, { heads: "40", tp: "3" }), ["2", "4"]);
  assert.deepEqual(valuesToTry(tp, { heads: "40", tp: "16" }), ["8"]); // not 10 or 20
  assert.deepEqual(valuesToTry(tp, { heads: "40", tp: "64" }), ["8"]);
  assert.deepEqual(valuesToTry(tp, { heads: "40" }), ["1", "2", "4", "5", "8"]);
  const sglang = { ...tp, write: "--tp-size {}" };
  assert.deepEqual(valuesToTry(sglang, { heads: "52", tp: "8" }), ["4"]);
  const blocks = { ...tp, write: "--block-size {}" }; // not a GPU count: every divisor
  assert.deepEqual(valuesToTry(blocks, { heads: "40", tp: "16" }), ["10", "20"]);
  assert.deepEqual(valuesToTry(tp, { heads: "forty" }), []); // nothing to compute from
});

test("a bound: the limit itself, or the integer next to it", () => {
  const len = { write: "--max-model-len {}", current: "", op: "<=", param: "max_pos" };
  assert.deepEqual(valuesToTry(len, { max_pos: "4096" }), ["4096"]);
  assert.equal(written(len, "4096"), "--max-model-len 4096");
  assert.deepEqual(valuesToTry({ ...len, op: "<" }, { max_pos: "4096" }), ["4095"]);
  assert.deepEqual(valuesToTry({ ...len, op: ">", param: undefined, value: 0 }, {}), ["1"]);
  assert.deepEqual(valuesToTry({ ...len, op: "<", param: undefined, value: 0.5 }, {}), []);
});

test("a multiple, either side of the value used; choices as they are", () => {
  const tokens = { write: "--max-num-batched-tokens {}", current: "n", op: "multiple-of", value: 16 };
  assert.deepEqual(valuesToTry(tokens, { n: "100" }), ["96", "112"]);
  assert.deepEqual(valuesToTry(tokens, {}), []);
  const choice = { write: '"tool_choice": {}', current: "", op: "in", choices: ["none", "auto"] };
  assert.deepEqual(valuesToTry(choice, {}), ["none", "auto"]);
  assert.deepEqual(valuesToTry({ ...choice, op: "unset", choices: undefined }, {}), []);
});
