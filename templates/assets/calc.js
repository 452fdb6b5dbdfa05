// Calculator widget: a wing's calc.py runs in Pyodide in a module worker (calc-client.js),
// started only when the visitor asks (Calculate, or a value changed): about 13 MB.
// Values the build-time table of the wing's data (calc.json) covers are answered at once, in
// words, while Python loads. The data names the engine, its flags and its own inputs.

import { nearest } from "./nearest.js";

const FIELDS = {
  heads: ["Attention heads", "num_attention_heads"],
  kv_heads: ["KV heads", "num_key_value_heads"],
  layers: ["Layers", "num_hidden_layers"],
  mla: ["MLA", "kv_lora_rank is set", "bool"],
  tp: ["Tensor parallel size", "--tensor-parallel-size"],
  dcp: ["DCP size", "--decode-context-parallel-size", "int", "1"],
  pcp: ["PCP size", "--prefill-context-parallel-size", "int", "1"],
  pp: ["Pipeline parallel size", "--pipeline-parallel-size", "int", "1"],
  dp: ["Data parallel size", "--data-parallel-size", "int", "1"],
  gpus_per_node: ["GPUs per node", "empty: 8 assumed, not checked", "int", "8"],
  nnodes: ["Nodes", "--nnodes", "int", "1"],
  gpus: ["GPUs", "layouts using all of them"],
  prefill_tp: ["Prefill TP size", "producer"],
  decode_tp: ["Decode TP size", "consumer"],
  mode: ["MoRIIO mode", "READ: decode pulls", "mode"],
};
const MODEL = ["heads", "kv_heads", "layers", "mla", "architecture"];
const UNSET = ["dcp", "pcp", "pp", "dp", "nnodes", "attn_dp", "ep"]; // "1" is as good as empty
let config;

function el(tag, props, ...children) {
  const node = Object.assign(document.createElement(tag), props);
  node.append(...children);
  return node;
}

const label = (name) => FIELDS[name]?.[0] || name;
const list = (values) => (values.length ? values.join(", ") : "none");

// A field's value: trimmed string, boolean, or undefined when empty.
function val(widget, name) {
  const input = widget.inputs[name];
  if (!input) return undefined;
  if (input.type === "checkbox") return input.checked;
  return input.value.trim() || undefined;
}

function field(widget, name) {
  const [text, hint, kind = "int", placeholder = "", value = ""] = FIELDS[name];
  const id = `${widget.id}-${name}`;
  let input;
  let list = ""; // an architecture's: the names the wing's table knows, offered as typed
  if (kind === "bool") input = el("input", { type: "checkbox", id });
  else if (kind === "arch") {
    list = el("datalist", { id: `${id}-list` });
    list.append(...Object.keys(config.architectures).map((name) => el("option", { value: name })));
    input = el("input", { id, type: "text", spellcheck: false, placeholder: "LlamaForCausalLM" });
    input.setAttribute("list", list.id);
  } else if (kind === "mode") {
    input = el("select", { id }, el("option", { value: "read" }, "READ"));
    input.append(el("option", { value: "write" }, "WRITE"));
  } else input = el("input", { id, type: "text", inputMode: "numeric", placeholder, value });
  widget.inputs[name] = input;
  const parts = [el("label", { htmlFor: id }, text), el("small", {}, hint)];
  const box = kind === "bool" ? [input, el("div", {}, ...parts)] : [parts[0], input, parts[1], list];
  return el("div", { className: kind === "bool" ? "calc-check" : "" }, ...box);
}

function modelPicker(widget) {
  const select = el("select", { id: `${widget.id}-model` });
  select.append(el("option", { value: "" }, "Choose…"));
  for (const m of config.models) {
    const text = `${m.name} (${m.heads} heads, ${m.kv_heads ?? m.heads} KV${m.mla ? ", MLA" : ""})`;
    select.append(el("option", { value: m.key }, text));
  }
  select.addEventListener("change", () => {
    const m = config.models.find((model) => model.key === select.value);
    if (m) setModel(widget, { ...m, kv_heads: m.kv_heads ?? m.heads });
  });
  const paste = el("textarea", { rows: 3, spellcheck: false });
  paste.placeholder = '{"num_attention_heads": 64, "num_key_value_heads": 8, …}';
  const note = el("small", { className: "calc-note", role: "status" });
  paste.addEventListener("input", () => {
    const read = readConfig(paste.value);
    note.textContent = read.note;
    if (!read.model) return;
    select.value = "";
    setModel(widget, read.model);
  });
  if (!config.models.length) { // a wing without presets: the config.json alone
    const text = el("summary", {}, "Paste the model's config.json");
    return el("div", { className: "calc-model" }, el("details", {}, text, paste, note));
  }
  const details = el("details", {}, el("summary", {}, "…or paste a config.json"), paste, note);
  const text = el("label", { htmlFor: select.id }, "Model preset");
  return el("div", { className: "calc-model" }, text, select, details);
}

function setModel(widget, model) {
  for (const name of MODEL) {
    const input = widget.inputs[name];
    if (input?.type === "checkbox") input.checked = Boolean(model.mla);
    else if (input) input.value = model[name] ?? "";
  }
  changed(widget);
}

// A pasted config.json (multimodal: its text part).
function readConfig(text) {
  if (!text.trim()) return { note: "" };
  let data;
  try {
    data = JSON.parse(text);
  } catch (error) {
    return { note: `Not valid JSON: ${error.message}` };
  }
  const parts = [data?.text_config, data?.llm_config, data?.language_config, data];
  const cfg = parts.find((p) => p instanceof Object && p.num_attention_heads != null);
  if (!cfg) return { note: "No num_attention_heads here, nor in text_config." };
  const heads = cfg.num_attention_heads;
  const model = {
    heads,
    kv_heads: cfg.num_key_value_heads ?? heads,
    layers: cfg.num_hidden_layers ?? "",
    mla: (cfg.kv_lora_rank ?? data.kv_lora_rank) != null,
    architecture: data.architectures?.[0] ?? "", // the model file the engine runs
  };
  const layers = model.layers === "" ? "" : `, ${model.layers} layers`;
  const where = (model.mla ? ", MLA" : "") + (cfg === data ? "" : " (from its text config)");
  return { model, note: `Read ${heads} heads, ${model.kv_heads} KV heads${layers}${where}.` };
}

function fillFromQuery(widget) {
  const query = new URLSearchParams(location.search);
  let given = false;
  for (const [name, input] of Object.entries(widget.inputs)) {
    const key = [widget.map[name], name].find((k) => k && query.has(k));
    const value = key && query.get(key).trim();
    if (!key) continue;
    if (input.type === "checkbox") input.checked = /^(1|true|yes|on)$/i.test(value);
    else input.value = value;
    given = true;
  }
  return given;
}

function syncQuery(widget) {
  const url = new URL(location.href);
  for (const name of Object.keys(widget.inputs)) {
    const value = val(widget, name);
    if (value) url.searchParams.set(name, value);
    else url.searchParams.delete(name);
  }
  history.replaceState(null, "", url);
}

function build(root, index) {
  const [op, fields] = config.calculators[root.dataset.calc] || [];
  if (!op) return;
  const widget = { root, op, fields, id: `calc${index}`, inputs: {}, latest: 0 };
  const pairs = (root.dataset.inputs || "").split(" ").filter(Boolean);
  widget.map = Object.fromEntries(pairs.map((pair) => pair.split("=")));
  const form = el("form", { className: "calc-form", noValidate: true });
  form.addEventListener("submit", (event) => event.preventDefault());
  if (fields.some((f) => MODEL.includes(f))) form.append(modelPicker(widget));
  const order = [...MODEL.filter((f) => fields.includes(f)), ...fields];
  const names = [...new Set(order)];
  form.append(el("div", { className: "calc-fields" }, ...names.map((f) => field(widget, f))));
  const go = el("button", { type: "button", className: "calc-go" }, "Calculate");
  widget.progress = el("progress", { max: 4, value: 0, hidden: true });
  widget.loading = el("span", { className: "calc-loading" });
  widget.out = el("div", { className: "calc-out", role: "status" });
  widget.out.textContent =
    `Press Calculate or change a value: ${config.engine}'s rules then run in your browser ` +
    "(Python through Pyodide, about 13 MB, downloaded once).";
  const line = el("p", { className: "calc-start" }, go, widget.progress, widget.loading);
  form.append(line, widget.out);
  root.prepend(form);
  const given = fillFromQuery(widget);
  // Python (about 13 MB) loads when asked: Calculate, or a value changed. A tap on a field,
  // a label or the form, like a hover, asks nothing (issue 44).
  form.addEventListener("input", (event) => {
    if (Object.values(widget.inputs).includes(event.target)) changed(widget);
  });
  go.addEventListener("click", () => ask(widget));
  if (given) answerOnLoad(widget);
}

// Values in the address: the table's answer at once; Python's only when asked.
function answerOnLoad(widget) {
  const known = tableAnswer(widget);
  if (known) {
    widget.out.replaceChildren(...known);
    widget.root.dataset.state = "table";
  }
  const box = document.querySelector("[data-your-case]");
  if (box && !("answering" in box.dataset)) yourCase(box, widget, known); // the first widget
}

function yourCase(box, widget, known) {
  const out = box.querySelector("[data-case-answer]");
  box.dataset.answering = "";
  box.hidden = false;
  if (known) return out.replaceChildren(...known.map((node) => node.cloneNode(true)));
  const go = el("button", { type: "button", className: "calc-go" }, "Calculate");
  go.addEventListener("click", () => {
    go.disabled = true;
    ask(widget);
  });
  const why = `These values need ${config.engine}'s full rules: they run in your browser (Python, about 13 MB, downloaded once). `;
  out.replaceChildren(el("p", { className: "case-source" }, why, go));
  widget.root.addEventListener("calc:answer", ({ detail }) => {
    const copy = [...widget.out.childNodes].map((node) => node.cloneNode(true));
    if (detail.answer.error) copy.unshift(el("p", {}, "These values alone do not settle it; the calculator below asks for more."));
    out.replaceChildren(...copy);
  }, { once: true });
}

const TABLE_FIELDS = new Set(["heads", "kv_heads", "tp", "mla"]);
const count = (text) => (/^\d+$/.test(text || "") ? Number(text) : undefined);

// Heads, KV heads and TP with nothing else set: the cases calc.json's tp_table answers
// (computed by calc.py at build time). Null when it does not cover them.
function tableAnswer(widget) {
  const given = Object.keys(widget.inputs).filter((name) => {
    const value = val(widget, name);
    return value && !(UNSET.includes(name) && value === "1");
  });
  if (!given.every((name) => TABLE_FIELDS.has(name) || name === "gpus_per_node")) return null;
  const [heads, tp, kv] = ["heads", "tp", "kv_heads"].map((name) => count(val(widget, name)));
  const gqa = kv && kv !== heads && !val(widget, "mla");
  const sizes = heads && tp && config.tp_table[gqa ? `${heads}/${kv}` : `${heads}`];
  const node = count(val(widget, "gpus_per_node"));
  // More GPUs than one node has: vLLM's world-size check comes first, Python answers that;
  // so does another node than the one the table's advice assumes.
  if (!sizes || tp > (node ?? tp) || (node && node !== config.advice_gpus)) return null;
  const model = `${heads} attention heads` + (gqa ? ` and ${kv} KV heads` : "");
  const works = `Tensor parallel sizes that work for ${model}: ${list(sizes)}`;
  const out = [];
  if (sizes.includes(tp)) {
    out.push(el("p", { className: "case-verdict calc-good" }, `${model} can be split over ${tp} GPUs: TP ${tp} passes ${config.engine}'s head checks.`));
    out.push(el("p", {}, `${works}.`));
  } else {
    const why = heads % tp ? `${heads} attention heads cannot be split over ${tp} GPUs.`
      : `${kv} KV heads can neither be split evenly over ${tp} GPUs nor copied whole to each.`;
    const [best, pp] = config.tp_advice[gqa ? `${heads}/${kv}` : `${heads}`];
    const advice = { tp: best, pp, gpus_per_node: node || config.advice_gpus, assumed: !node };
    out.push(el("p", { className: "case-verdict" }, why));
    out.push(...advise(advice, model, sizes, tp), el("p", {}, `${works}.`));
  }
  const grouped = !kv && heads > 8 && config.tp_table[`${heads}/8`];
  if (grouped) out.push(el("p", {}, `If the model has 8 KV heads, as many grouped-query models do: ${list(grouped)}.`));
  out.push(el("p", { className: "case-source" }, `From the tables computed at build time with ${config.rules}'s rules; ` +
    "MLP width, vocabulary and the GPUs of your nodes are not checked here."));
  return out;
}

// What to start instead of a TP size that fails: calc.py's suggest_tp (from the table, or
// Python's answer), on the node the visitor gave or one of 8 GPUs.
// The nearest sizes that work either side of the user's, within the node, come first.
function advise({ tp, pp, gpus_per_node: gpus, assumed }, model, sizes = [], current = 0) {
  const code = (text) => el("code", {}, text);
  const flags = config.flags;
  const where = `one ${gpus}-GPU node${assumed ? " (assumed: give your GPUs per node)" : ""}`;
  const fit = sizes.filter((s) => s > 1 && s <= gpus);
  const near = nearest(fit, current);
  if (near.length && current) {
    const codes = near.flatMap((s, i) => [i ? " or " : "", code(`${flags.tp} ${s}`)]);
    const out = [el("p", { className: "case-change" }, "Use ", ...codes, `: the nearest to ${current} that work on ${where}.`)];
    if (pp > 1) out.push(el("p", {}, `To use all ${gpus} GPUs: `, code(`${flags.tp} ${tp} ${flags.pp} ${pp}`), "."));
    return out;
  }
  if (tp === 1) {
    return [
      el("p", {}, `No tensor parallel size above 1 both works for ${model} and fits ${where}.`),
      el("p", {}, "Split the layers instead: ", code(`${flags.pp} ${pp}`),
        ` uses the ${gpus} GPUs; over two nodes, `, code(`${flags.pp} ${2 * pp} ${flags.nnodes} 2`),
        ` (with ${config.node_flags}).`),
    ];
  }
  const out = [el("p", {}, `The largest that fits ${where}: try `, code(`${flags.tp} ${tp}`), ".")];
  if (pp > 1) {
    out.push(el("p", {}, `To use all ${gpus} GPUs, add pipeline parallelism: `,
      code(`${flags.tp} ${tp} ${flags.pp} ${pp}`), "."));
  }
  return out;
}

// Python's side (calc-ask.js: the worker, its answer in words) loads on the first question.
let asking = null;
function ask(widget) {
  asking ??= import("./calc-ask.js");
  asking.then(
    (module) => module.ask(widget, { config, el, val, list, label, advise }),
    (error) => widget.out.append(el("p", { className: "calc-bad" }, `The calculator's script could not load: ${error.message}`)),
  );
}

function changed(widget) {
  if (widget.root.dataset.sync !== undefined) syncQuery(widget);
  ask(widget);
}

async function main() {
  const roots = [...document.querySelectorAll("[data-calc]")];
  if (!roots.length) return;
  try {
    const response = await fetch(roots[0].dataset.src);
    if (!response.ok) throw new Error(`HTTP ${response.status}`);
    config = await response.json();
    Object.assign(FIELDS, config.fields); // the engine's own inputs and the flags beside them
  } catch (error) {
    const text = `The calculator could not load its data (${error.message}); the tables apply.`;
    for (const root of roots) root.prepend(el("p", { className: "calc-bad" }, text));
    return;
  }
  roots.forEach(build);
}

main();
