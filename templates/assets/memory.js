// The memory estimate: memory.py (the file the build computed the table with) runs in the
// calculator's worker (calc-client.js), started only when asked (Estimate, or a value changed).
// Its answers are an estimate, and say so. The error's own figures (the KV cache it needed and
// had, for its --max-model-len) answer at once, without Python: the length that fits.

const GIB = 2 ** 30;
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
const VERDICT = {
  oom: "torch's CUDA out of memory while loading the weights: they are larger than the GPU.",
  no_cache_memory: "vLLM stops: No available memory for the cache blocks.",
  max_model_len: "vLLM stops: one request of --max-model-len does not fit in the KV cache.",
};

const root = document.querySelector("[data-memory]");
let config = null;
let client = null;
let asked = 0;
const inputs = {};

function el(tag, props, ...children) {
  const node = Object.assign(document.createElement(tag), props);
  node.append(...children);
  return node;
}

const gib = (bytes) => `${(bytes / GIB).toFixed(1)} GiB`;

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

// The request: numbers as numbers (a value from the address may carry its unit: "79.15 GiB").
function request() {
  const out = { module: "memory", op: "estimate" };
  for (const [name, , , , kind] of FIELDS) {
    const input = inputs[name];
    if (kind === "bool") out[name] = input.checked;
    else if (Array.isArray(kind)) out[name] = input.value;
    else {
      const number = Number.parseFloat(input.value);
      const whole = ["layers", "kv_heads", "head_dim", "tp", "pp", "max_model_len"].includes(name);
      out[name] = Number.isNaN(number) ? input.value : whole ? Math.round(number) : number;
    }
  }
  return out;
}

function start() {
  client ??= import(config.client).then(({ connect }) => connect(config, [root.dataset.src]));
  return client;
}

async function ask() {
  const mine = ++asked;
  const out = root.querySelector("[data-out=memory]");
  if (!out.childElementCount) out.textContent = "Loading Python (Pyodide) to run the estimate…";
  let answer;
  try {
    answer = await (await start()).ask(request());
  } catch (error) {
    answer = { error: error.message };
  }
  if (mine === asked) out.replaceChildren(...show(answer));
}

function show({ result, error }) {
  if (error) return [el("p", { className: "calc-bad" }, error)];
  const r = result;
  const lines = [
    el("p", {}, `Budget per GPU: ${gib(r.budget)} of ${gib(r.total)}; weights per GPU: ${gib(r.weights)}; overhead: ${gib(r.overhead)}.`),
  ];
  if (r.error?.kind !== "oom") {
    const left = r.available > 0 ? gib(r.available) : "nothing";
    const perToken = `${(r.kv_per_token / 1024).toFixed(0)} KiB a token over its ${r.stage_layers} layers`;
    lines.push(el("p", {}, `Left for the KV cache: ${left} (${perToken}): about ${r.tokens.toLocaleString("en")} tokens, ${r.concurrency.toFixed(1)} requests of the full length at once.`));
  }
  if (r.error) {
    const verdict = el("p", { className: "calc-bad" }, VERDICT[r.error.kind]);
    const title = r.error.id && config.records[r.error.id];
    if (title) verdict.append(" Its page: ", el("a", { href: config.errors_url.replace("{}", r.error.id) }, title));
    lines.push(verdict);
  } else lines.push(el("p", { className: "calc-good" }, "Memory is enough for these values (the other checks are not made here)."));
  lines.push(el("p", { className: "calc-note" }, "An estimate: real weights and overhead differ by model and release."));
  return lines;
}

// Values of the error in the address (the placeholders a search result fills).
function fillFromQuery() {
  const query = new URLSearchParams(location.search);
  const pairs = (root.dataset.inputs || "").split(" ").filter(Boolean).map((p) => p.split("="));
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
  const pairs = Object.fromEntries((root.dataset.inputs || "").split(" ").filter(Boolean).map((p) => p.split("=")));
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

if (root) build();
