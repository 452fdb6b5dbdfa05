// The memory estimate: memory.py (the file the build computed the table with) runs in the
// calculator's worker (calc-client.js), started only when asked (Estimate, or a value changed;
// memory-ask.js, loaded then).
// Its answers are an estimate, and say so. The error's own figures (the KV cache it needed and
// had, for its --max-model-len) answer at once, without Python: the length that fits.

const FIELDS = [
  // [input, label, hint, default, kind]
  ["params_b", "Parameters (billions)", "the model's size: 70 for a 70B", "70.6"],
  ["weight_dtype", "Weights", "--dtype, or the quantization", "bfloat16", ["bfloat16", "float16", "fp8", "int8", "int4"]],
  ["layers", "Layers", "num_hidden_layers", "80"],
  ["kv_heads", "KV heads", "num_key_value_heads", "8"],
  ["head_dim", "Head size", "head_dim; MLA: kv_lora_rank + qk_rope_head_dim", "128"],
  ["mla", "MLA", "DeepSeek-style latent attention", "", "bool"],
  ["kv_dtype", "KV cache", "--kv-cache-dtype (auto: as the model)", "bfloat16", ["bfloat16", "float16", "fp8"]],
  ["gpu_gib", "GPU memory (GiB)", "per GPU, as nvidia-smi shows it", "80"],
  ["tp", "Tensor parallel size", "--tensor-parallel-size", "1"],
  ["pp", "Pipeline parallel size", "--pipeline-parallel-size", "1"],
  ["utilization", "GPU memory utilization", "--gpu-memory-utilization", "0.92"],
  ["max_model_len", "Max model length", "--max-model-len", "8192"],
  ["overhead_gib", "Overhead (GiB)", "activations, CUDA graphs, NCCL: a guess", "2"],
];

const root = document.querySelector("[data-memory]");
let config = null;
let asking = null;
const inputs = {};

function el(tag, props, ...children) {
  const node = Object.assign(document.createElement(tag), props);
  node.append(...children);
  return node;
}

function field([name, text, hint, value, kind]) {
  const id = `memory-${name}`;
  let input;
  if (kind === "bool") input = el("input", { type: "checkbox", id });
  else if (Array.isArray(kind)) {
    input = el("select", { id }, ...kind.map((v) => el("option", { value: v }, v)));
    input.value = value;
  } else input = el("input", { id, type: "text", inputMode: "decimal", value });
  inputs[name] = input;
  const parts = [el("label", { htmlFor: id }, text), input, el("small", {}, hint)];
  return el("div", { className: kind === "bool" ? "calc-check" : "" }, ...parts);
}

function preset() {
  const select = el("select", { id: "memory-model" }, el("option", { value: "" }, "Choose…"));
  for (const m of config.models) select.append(el("option", { value: m.key }, m.name));
  select.addEventListener("change", () => {
    const m = config.models.find((model) => model.key === select.value);
    if (!m) return;
    inputs.layers.value = m.layers;
    inputs.kv_heads.value = m.kv_heads ?? m.heads;
    inputs.mla.checked = Boolean(m.mla);
    if (m.mla) inputs.head_dim.value = "576";
    ask();
  });
  const note = el("small", {}, "fills layers and KV heads; give its size in parameters");
  return el("div", { className: "calc-model" }, el("label", { htmlFor: select.id }, "Model preset"), select, note);
}

// Python's side (memory-ask.js: the worker, the estimate in words) loads on the first question.
function ask() {
  asking ??= import("./memory-ask.js");
  asking.then(({ estimate }) => estimate(root, config, inputs, FIELDS));
}

// The section's inputs and the placeholders that fill them ("needed=needed_memory ...").
const inputPairs = () => (root.dataset.inputs || "").split(" ").filter(Boolean).map((p) => p.split("="));

// Values of the error in the address (the placeholders a search result fills).
function fillFromQuery() {
  const query = new URLSearchParams(location.search);
  const pairs = inputPairs();
  let given = false;
  for (const [name, param] of [...pairs, ...FIELDS.map(([name]) => [name, name])]) {
    if (inputs[name] && query.has(param)) {
      inputs[name].value = query.get(param).trim();
      given = true;
    }
  }
  return given;
}

async function build() {
  config = await (await fetch(root.dataset.src)).json();
  const form = el("form", { className: "calc-form", noValidate: true });
  form.addEventListener("submit", (event) => event.preventDefault());
  form.append(preset(), el("div", { className: "calc-fields" }, ...FIELDS.map(field)));
  const go = el("button", { type: "button", className: "calc-go" }, "Estimate");
  const out = el("div", { className: "calc-out", role: "status" });
  out.dataset.out = "memory";
  out.textContent = "Press Estimate or change a value: memory.py then runs in your browser (Python through Pyodide, downloaded once).";
  form.append(el("p", { className: "calc-start" }, go), out);
  root.prepend(form);
  form.addEventListener("input", ask);
  go.addEventListener("click", ask);
  fillFromQuery();
  fromTheError();
}

// The message's own figures: needed and available KV cache (GiB) at its --max-model-len. The
// cache grows with the length, so the longest that fits is the length times available/needed.
function fromTheError() {
  const query = new URLSearchParams(location.search);
  const pairs = Object.fromEntries(inputPairs());
  // An old wording's `needed_memory_div_GiB_bytes` is the page's `needed_memory` (template.page_name).
  const named = new Map([...query].map(([k, v]) => [k.split(/_div_/)[0], v]));
  const [len, needed, had] = ["max_model_len", "needed", "available"].map((k) => Number.parseFloat(named.get(pairs[k] || k)));
  const box = document.querySelector("[data-your-case]");
  if (!box || "answering" in box.dataset || !(len > 0 && needed > 0 && had >= 0)) return;
  box.dataset.answering = "";
  box.hidden = false;
  const fits = Math.floor((len * had) / needed / 256) * 256; // vLLM's lengths are often multiples of 256
  const code = (text) => el("code", {}, text);
  const lines = [el("p", { className: "case-verdict" }, `One request of ${len} tokens needs ${needed} GiB of KV cache; ${had} GiB is left for it.`)];
  const change = el("p", { className: "case-change" }, "Change ");
  if (fits > 0) change.append(code(`--max-model-len ${len}`), " to ", code(`--max-model-len ${fits}`), " or less, or");
  else change.append("Nothing fits the KV cache:");
  const util = `give the KV cache ${(needed - had).toFixed(2)} GiB more per GPU: a higher `;
  change.append(` ${util}`, code("--gpu-memory-utilization"), ", more GPUs (", code("--tensor-parallel-size"), "), or ", code("--kv-cache-dtype fp8"), " (half the cache).");
  lines.push(change, el("p", { className: "case-source" }, "Computed from the message's figures: the cache a request needs grows with its length."));
  box.querySelector("[data-case-answer]").replaceChildren(...lines);
}

// Your case (case.js) waits for this section to say whether it answers for the values.
function settle() {
  root.dataset.settled = "";
  root.dispatchEvent(new Event("case:settled"));
}

if (root) build().finally(settle);
