// The divisor calculator of a divisibility error: "valid values of `tp_size` for
// `heads` = 20: 1, 2, 4, 5, 10, 20", and the nearest either side of the user's (a GPU count
// within one node: 8 GPUs, assumed until given). Values come from the address (the error's
// placeholders, as search links fill them) or are typed in; answered at once, no Python.
// A divisor the model fixes (data-fixed: a checkpoint's block_n) is never the thing to
// change: the answer is the setting that splits the value, and by how much (site/answer.py).

import { divisors, nearest } from "./nearest.js";

const root = document.querySelector("[data-divisors]");
const NODE_GPUS = 8;
const MAX = 10_000_000;

function el(tag, props, ...children) {
  const node = Object.assign(document.createElement(tag), props);
  node.append(...children);
  return node;
}

const gcd = (a, b) => (b ? gcd(b, a % b) : a);
const code = (text) => el("code", {}, text);

// Under the message, "Your case" says at once what the values of the error mean.
function tellYourCase(lines) {
  const box = document.querySelector("[data-your-case]");
  if (!box || "answering" in box.dataset) return;
  box.dataset.answering = "";
  box.hidden = false;
  box.querySelector("[data-case-answer]").replaceChildren(...lines.map((node) => node.cloneNode(true)));
}

// The answer for value n and the divisor used (NaN when not given), as paragraphs.
function answerFor(n, used, node) {
  const { value, divisor, setting } = root.dataset;
  const passes = el("p", { className: "calc-good" }, `${divisor} = ${used} divides ${n}: this check passes.`);
  if (used && n % used === 0 && ("fixed" in root.dataset || "unknown" in root.dataset)) return [passes];
  if ("fixed" in root.dataset || "unknown" in root.dataset) {
    if (!used) return [el("p", { className: "muted" }, `Enter ${divisor}, as the error prints it.`)];
    const verdict = el("p", { className: "case-verdict" }, `${value} = ${n} is ${n / used} × ${used}: not a whole number of ${divisor}.`);
    if ("unknown" in root.dataset) return [verdict]; // a shared helper's: which is a setting is the caller's
    if (!setting && !("perRank" in root.dataset)) {
      return [verdict, el("p", {}, `${divisor} is fixed by the model, and no setting of the engine changes ${value}.`)];
    }
    const factor = used / gcd(n, used);
    const what = setting ? code(setting) : "the tensor parallel size";
    const example = 8 % factor ? "" : `, e.g. 8 → ${8 / factor}`;
    return [verdict, el("p", { className: "case-change" }, "Change ", what, `, not ${divisor} (the checkpoint fixes it): divide it by ${factor}${example}. Each GPU then holds ${n * factor} = ${(n * factor) / used} × ${used}.`)];
  }
  // Word for word answer.py's _divisibility: the setting as the release's parser spells it
  // (data-setting, errorkb/settings.py), never only the code's name when there is one.
  const all = divisors(n);
  const gpus = "gpus" in root.dataset;
  const same = setting?.replace(/^-+/, "").replaceAll("-", "_") === divisor;
  const named = setting?.startsWith("-") && !same ? `${setting} (${divisor})` : setting || divisor;
  const lines = [el("p", {}, el("strong", {}, `Valid values of ${named} for ${value} = ${n}: `), all.join(", "))];
  if (used && n % used === 0) lines.unshift(passes);
  else if (used) {
    const fit = gpus ? all.filter((d) => d <= (node || NODE_GPUS)) : all;
    const near = nearest(fit, used);
    const where = gpus ? ` (within one ${node || NODE_GPUS}-GPU node${node ? "" : ", assumed"})` : "";
    const what = setting?.startsWith("-") ? code(setting) : setting || (gpus ? `the GPU count ${divisor}` : divisor);
    const to = near.join(" or ");
    if (near.length) lines.unshift(el("p", { className: "case-change" }, "Change ", what, ` ${used} to ${to}, the nearest that divide ${n}${where}.`));
  }
  return lines;
}

function build() {
  const { value, divisor, valueParam, divisorParam } = root.dataset;
  const query = new URLSearchParams(location.search);
  const field = (name, param, hint) => {
    const id = `divisors-${name}`;
    const input = el("input", { id, type: "text", inputMode: "numeric" });
    input.value = (param && query.get(param)?.trim()) || "";
    const label = el("label", { htmlFor: id }, code(name));
    return [input, el("div", {}, label, input, el("small", {}, hint))];
  };
  const [valueInput, valueBox] = field(value, valueParam, "the value in your error");
  const [divisorInput, divisorBox] = field(divisor, divisorParam, "fixed" in root.dataset ? "as the error prints it" : "optional: what you used");
  const out = el("div", { className: "calc-out", role: "status" });
  out.dataset.out = "divisors";
  const form = el("form", { className: "calc-form", noValidate: true });
  form.append(el("div", { className: "calc-fields" }, valueBox, divisorBox), out);
  form.addEventListener("submit", (event) => event.preventDefault());
  root.prepend(form);
  const node = Number(query.get("gpus_per_node")) || 0;

  function answer(fromAddress) {
    const n = Number(valueInput.value.trim());
    const used = Number(divisorInput.value.trim()) || 0;
    if (!Number.isInteger(n) || n < 1 || n > MAX) {
      const text = valueInput.value.trim() ? `${value} must be a whole number from 1 to ${MAX}.` : `Enter ${value}.`;
      out.replaceChildren(el("p", { className: "muted" }, text));
      return;
    }
    const lines = answerFor(n, Number.isInteger(used) ? used : 0, node);
    out.replaceChildren(...lines);
    if (fromAddress) tellYourCase(lines);
  }

  form.addEventListener("input", () => answer(false));
  if (valueInput.value) answer(true);
}

if (root) {
  build();
  root.dataset.settled = ""; // Your case (case.js) waits for this section's answer, or none
  root.dispatchEvent(new Event("case:settled"));
}
